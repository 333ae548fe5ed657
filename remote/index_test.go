package remote

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/wellknown"
)

// A second loadout: real skill folders, the catalog, the service and the
// well-known handler, served on loopback.

type srcFile struct {
	data string
	mode fs.FileMode
}

func skillMD(name, desc string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\n---\n# %s\n\nDo the %s thing.\n", name, desc, name, name)
}

// binaryBytes is not UTF-8: every byte value appears.
var binaryBytes = func() string {
	b := []byte("\x89PNG\r\n\x1a\n")
	for i := 0; i < 256; i++ {
		b = append(b, byte(i), byte(255-i))
	}
	return string(b)
}()

func sourceSkills() map[string]srcFile {
	return map[string]srcFile{
		"multi/SKILL.md":                {skillMD("multi", "A skill with files."), 0o644},
		"multi/references/guide.md":     {"# Guide\n\nSee the script.\n", 0o644},
		"multi/scripts/run.sh":          {"#!/bin/sh\necho ran \"$@\"\n", 0o755},
		"multi/assets/logo.png":         {binaryBytes, 0o644},
		"multi/assets/deep/nested.json": {"{\"a\": [1, 2, 3]}\n", 0o644},
		"single/SKILL.md":               {skillMD("single", "Only SKILL.md."), 0o644},
		"other-one/SKILL.md":            {skillMD("other-one", "Another skill."), 0o644},
		"other-one/notes.txt":           {"notes\n", 0o644},
	}
}

func writeTree(t testing.TB, root string, files map[string]srcFile) {
	t.Helper()
	for p, f := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(f.data), f.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(full, f.mode); err != nil {
			t.Fatal(err)
		}
	}
}

// secondLoadout serves the skills under root the way `loadout serve` does
// at /.well-known/; next, if set, wraps the handler (to alter or cut
// responses).
func secondLoadout(t testing.TB, root string, wrap func(http.Handler) http.Handler) *httptest.Server {
	t.Helper()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil))) // the index logs its warnings
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{
		{AgentID: "all", Skills: []catalog.SourceSpec{{Root: root}}},
	}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{})
	t.Cleanup(func() { svc.Close() })
	var h http.Handler = wellknown.Handler(svc, "all")
	open := h
	h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		open.ServeHTTP(w, r.WithContext(service.WithPrincipal(r.Context(), service.Principal{Open: true})))
	})
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

const v2Path = "/.well-known/agent-skills/index.json"

// tree is every file under dir: its bytes and whether it is executable.
// Symlinks and other non-regular files fail the test.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			t.Errorf("%s is not a regular file (%v)", p, d.Type())
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = fmt.Sprintf("exec=%v %q", fi.Mode()&0o111 != 0, data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTrees(t *testing.T, want, got map[string]string) {
	t.Helper()
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if want[k] != got[k] {
			w, g := want[k], got[k]
			if len(w) > 80 {
				w = w[:80] + "…"
			}
			if len(g) > 80 {
				g = g[:80] + "…"
			}
			t.Errorf("%s: source %s, snapshot %s", k, w, g)
		}
	}
}

func newIndex(t *testing.T, spec Spec, client *http.Client) *IndexFetcher {
	t.Helper()
	if spec.ID == "" {
		spec.ID = "idx"
	}
	f, err := NewIndex(spec, client)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// fetch resolves and fetches into a new snapshot folder.
func fetch(t *testing.T, f *IndexFetcher, lim Limits) (string, []string, error) {
	t.Helper()
	rev, err := f.Resolve(context.Background())
	if err != nil {
		return "", nil, err
	}
	dir := filepath.Join(t.TempDir(), "snap")
	notes, err := f.Fetch(context.Background(), rev, dir, lim)
	return dir, notes, err
}

func wantCode(t *testing.T, err error, code string, contains ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want %s", code)
	}
	if got := CodeOf(err); got != code {
		t.Fatalf("code %s, want %s: %v", got, code, err)
	}
	for _, c := range contains {
		if !strings.Contains(err.Error(), c) {
			t.Errorf("error %q does not contain %q", err, c)
		}
	}
}

func TestIndexFetchFromSecondLoadout(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, sourceSkills())
	srv := secondLoadout(t, root, nil)
	f := newIndex(t, Spec{Index: srv.URL + v2Path}, srv.Client())
	rev, err := f.Resolve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !validDigest(rev) {
		t.Fatalf("revision %q is not a sha256 digest", rev)
	}
	dir := filepath.Join(t.TempDir(), "cache", "snap")
	notes, err := f.Fetch(context.Background(), rev, dir, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	// Byte for byte, executable bits included (the 0.2.0 archive keeps
	// them); the download file is gone.
	sameTrees(t, tree(t, root), tree(t, dir))
	// The index warns that installers drop executable bits; loadout keeps
	// them, so that warning is not passed on.
	if len(notes) != 0 {
		t.Errorf("notes %q, want none", notes)
	}
	// The same revision fetched again gives the same snapshot.
	dir2 := filepath.Join(t.TempDir(), "snap")
	if _, err := f.Fetch(context.Background(), rev, dir2, DefaultLimits); err != nil {
		t.Fatal(err)
	}
	sameTrees(t, tree(t, dir), tree(t, dir2))
}

func TestIndexFetchLegacyShape(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, sourceSkills())
	srv := secondLoadout(t, root, nil)
	f := newIndex(t, Spec{Index: srv.URL + "/.well-known/skills/index.json"}, srv.Client())
	dir, notes, err := fetch(t, f, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	// The 0.1.0 files arrive without their executable bit: compare bytes.
	want := tree(t, root)
	for k, v := range want {
		want[k] = strings.Replace(v, "exec=true", "exec=false", 1)
	}
	sameTrees(t, want, tree(t, dir))
	if !strings.Contains(strings.Join(notes, "\n"), "0.1.0 shape, without digests") {
		t.Errorf("notes %q do not say the files are not verified", notes)
	}
}

// tamper serves the second loadout with one archive's bytes altered.
func TestIndexTamperedArchive(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, sourceSkills())
	srv := secondLoadout(t, root, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "/multi.tar.gz") {
				h.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			body := rec.Body.Bytes()
			body[len(body)/2] ^= 0x01
			w.Write(body)
		})
	})
	f := newIndex(t, Spec{Index: srv.URL + v2Path}, srv.Client())
	dir, _, err := fetch(t, f, DefaultLimits)
	wantCode(t, err, CodeDigest, `skill "multi"`, "does not match its digest")
	if _, err := os.Stat(filepath.Join(dir, "multi")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("something of the tampered archive was unpacked: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, downloadName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the download file is left behind: %v", err)
	}
}

// A publisher is a static web site: paths to bytes, every request's
// Authorization header recorded.
type publisher struct {
	mu    sync.Mutex
	files map[string][]byte
	auth  []string // "path authorization" per request
	want  string   // if set, the Authorization the site requires
	srv   *httptest.Server
}

func newPublisher(t *testing.T) *publisher {
	p := &publisher{files: map[string][]byte{}}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.auth = append(p.auth, r.URL.Path+" "+r.Header.Get("Authorization"))
		data, ok := p.files[r.URL.Path]
		want := p.want
		p.mu.Unlock()
		if want != "" && r.Header.Get("Authorization") != want {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(data)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *publisher) put(path string, data []byte) {
	p.mu.Lock()
	p.files[path] = data
	p.mu.Unlock()
}

func (p *publisher) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.auth...)
}

type entry struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
	URL         string `json:"url"`
	Digest      string `json:"digest"`
}

func indexJSON(entries ...entry) []byte {
	b, _ := json.Marshal(map[string]any{"$schema": SchemaIndexV2, "skills": entries})
	return b
}

// publish puts an archive (or SKILL.md) on p and returns its entry.
func (p *publisher) publish(name, kind string, data []byte) entry {
	u := "/.well-known/agent-skills/" + name + ".tar.gz"
	if kind == "skill-md" {
		u = "/.well-known/agent-skills/" + name + "/SKILL.md"
	}
	p.put(u, data)
	return entry{Name: name, Type: kind, Description: "d", URL: strings.TrimPrefix(u, "/.well-known/agent-skills/"), Digest: skill.DigestBytes(data)}
}

type tarEntry struct {
	name     string
	body     string
	typeflag byte
	link     string
	mode     int64
}

func tarGz(t testing.TB, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typeflag, Linkname: e.link, Mode: e.mode, Size: int64(len(e.body))}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write([]byte(e.body))
		}
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func zipOf(t testing.TB, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		mode := fs.FileMode(e.mode)
		if mode == 0 {
			mode = 0o644
		}
		if e.typeflag == tar.TypeSymlink {
			mode |= fs.ModeSymlink
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, e.body+e.link)
	}
	zw.Close()
	return buf.Bytes()
}

func TestIndexFetchZipAndSkillMD(t *testing.T) {
	p := newPublisher(t)
	md := skillMD("zipped", "A zip.")
	p.put("/.well-known/agent-skills/index.json", indexJSON(
		p.publish("zipped", "archive", zipOf(t, tarEntry{name: "SKILL.md", body: md}, tarEntry{name: "scripts/", mode: 0o755 | int64(fs.ModeDir)}, tarEntry{name: "scripts/go.sh", body: "#!/bin/sh\n", mode: 0o755})),
		p.publish("plain", "skill-md", []byte(skillMD("plain", "Plain."))),
	))
	f := newIndex(t, Spec{Index: p.srv.URL + v2Path}, nil)
	dir, _, err := fetch(t, f, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	sameTrees(t, map[string]string{
		"zipped/SKILL.md":      fmt.Sprintf("exec=false %q", md),
		"zipped/scripts/go.sh": fmt.Sprintf("exec=true %q", "#!/bin/sh\n"),
		"plain/SKILL.md":       fmt.Sprintf("exec=false %q", skillMD("plain", "Plain.")),
	}, tree(t, dir))
}

// The publisher's warnings (skills it left out) become notes: bounded in
// number and length, control characters replaced.
func TestIndexWarningsAsNotes(t *testing.T) {
	p := newPublisher(t)
	e := p.publish("one", "skill-md", []byte(skillMD("one", "One.")))
	var ws []map[string]string
	ws = append(ws, map[string]string{"skill": "huge", "code": "too-large", "message": "skill \"huge\" is left out\x1b[31m" + strings.Repeat("!", 5000)})
	ws = append(ws, map[string]string{"skill": "multi", "code": "executable-dropped", "message": "installers drop bits"})
	for i := 0; i < 30; i++ {
		ws = append(ws, map[string]string{"skill": fmt.Sprint("s", i), "code": "name-unsupported", "message": "left out"})
	}
	b, _ := json.Marshal(map[string]any{"$schema": SchemaIndexV2, "skills": []entry{e}, "warnings": ws})
	p.put(v2Path, b)
	_, notes, err := fetch(t, newIndex(t, Spec{Index: p.srv.URL + v2Path}, nil), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != maxIndexNotes+1 {
		t.Fatalf("%d notes, want %d: %q", len(notes), maxIndexNotes+1, notes)
	}
	if n := notes[0]; !strings.Contains(n, `(too-large) about skill "huge"`) || len(n) > 600 || strings.ContainsRune(n, 0x1b) {
		t.Errorf("first note %q: want the warning, cut, without control characters", n)
	}
	if last := notes[len(notes)-1]; last != "the index gives 11 more warnings" {
		t.Errorf("last note %q", last)
	}
	for _, n := range notes {
		if strings.Contains(n, "executable") {
			t.Errorf("note %q: installers' warnings do not apply", n)
		}
	}
}

func TestIndexChangedSincePinned(t *testing.T) {
	p := newPublisher(t)
	e := p.publish("one", "skill-md", []byte(skillMD("one", "One.")))
	p.put(v2Path, indexJSON(e))
	f := newIndex(t, Spec{Index: p.srv.URL + v2Path}, nil)
	rev, err := f.Resolve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	e.Description = "changed"
	p.put(v2Path, indexJSON(e))
	dir := filepath.Join(t.TempDir(), "snap")
	_, err = f.Fetch(context.Background(), rev, dir, DefaultLimits)
	wantCode(t, err, CodeDigest, "changed since it was pinned", "run loadout sync", rev)
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the snapshot folder was made for an index that moved: %v", err)
	}
}

func TestIndexDigestInIndexChanged(t *testing.T) {
	p := newPublisher(t)
	e := p.publish("one", "archive", tarGz(t, tarEntry{name: "SKILL.md", body: skillMD("one", "One.")}))
	e.Digest = skill.DigestBytes([]byte("something else"))
	p.put(v2Path, indexJSON(p.publish("aaa", "skill-md", []byte(skillMD("aaa", "A."))), e))
	f := newIndex(t, Spec{Index: p.srv.URL + v2Path}, nil)
	dir, _, err := fetch(t, f, DefaultLimits)
	wantCode(t, err, CodeDigest, `skill "one"`)
	if _, err := os.Stat(filepath.Join(dir, "one")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the archive was unpacked although its digest is wrong: %v", err)
	}
}

func TestIndexArchiveEntriesRefused(t *testing.T) {
	md := tarEntry{name: "SKILL.md", body: skillMD("bad", "Bad.")}
	for _, tc := range []struct {
		name    string
		archive func(t *testing.T) []byte
		code    string
		says    string
	}{
		{"dotdot", func(t *testing.T) []byte { return tarGz(t, md, tarEntry{name: "../x", body: "x"}) }, CodePath, `".."`},
		{"nested dotdot", func(t *testing.T) []byte { return tarGz(t, md, tarEntry{name: "a/../../x", body: "x"}) }, CodePath, `".."`},
		{"absolute", func(t *testing.T) []byte { return tarGz(t, md, tarEntry{name: "/etc/x", body: "x"}) }, CodePath, "absolute"},
		{"backslash", func(t *testing.T) []byte { return tarGz(t, md, tarEntry{name: `a\..\x`, body: "x"}) }, CodePath, "backslash"},
		{"symlink", func(t *testing.T) []byte {
			return tarGz(t, md, tarEntry{name: "link", typeflag: tar.TypeSymlink, link: "/etc/passwd"})
		}, CodePath, "symbolic link"},
		{"symlink inside", func(t *testing.T) []byte {
			return tarGz(t, md, tarEntry{name: "link", typeflag: tar.TypeSymlink, link: "SKILL.md"})
		}, CodePath, "symbolic link"},
		{"hardlink", func(t *testing.T) []byte {
			return tarGz(t, md, tarEntry{name: "hard", typeflag: tar.TypeLink, link: "SKILL.md"})
		}, CodePath, "hard link"},
		{"device", func(t *testing.T) []byte { return tarGz(t, md, tarEntry{name: "dev", typeflag: tar.TypeChar}) }, CodePath, "device"},
		{"fifo", func(t *testing.T) []byte { return tarGz(t, md, tarEntry{name: "p", typeflag: tar.TypeFifo}) }, CodePath, "pipe"},
		{"zip dotdot", func(t *testing.T) []byte { return zipOf(t, md, tarEntry{name: "../x", body: "x"}) }, CodePath, `".."`},
		{"zip symlink", func(t *testing.T) []byte {
			return zipOf(t, md, tarEntry{name: "l", typeflag: tar.TypeSymlink, link: "../../etc/passwd"})
		}, CodePath, "symbolic link"},
		{"twice", func(t *testing.T) []byte { return tarGz(t, md, md) }, CodeInvalid, "twice"},
		{"no SKILL.md", func(t *testing.T) []byte { return tarGz(t, tarEntry{name: "bad/SKILL.md", body: "x"}) }, CodeInvalid, "no SKILL.md at its root"},
		{"not an archive", func(t *testing.T) []byte { return []byte("hello") }, CodeInvalid, "neither"},
		{"corrupt gzip", func(t *testing.T) []byte { b := tarGz(t, md); return b[:len(b)/2] }, CodeInvalid, "cannot be read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPublisher(t)
			p.put(v2Path, indexJSON(p.publish("bad", "archive", tc.archive(t))))
			base := t.TempDir()
			f := newIndex(t, Spec{Index: p.srv.URL + v2Path}, nil)
			rev, err := f.Resolve(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.Fetch(context.Background(), rev, filepath.Join(base, "snap"), DefaultLimits)
			wantCode(t, err, tc.code, `skill "bad"`, tc.says)
			// Nothing was written outside the snapshot folder.
			entries, _ := os.ReadDir(base)
			if len(entries) != 1 || entries[0].Name() != "snap" {
				t.Errorf("the fetch wrote beside the snapshot: %v", entries)
			}
			if _, err := os.Lstat(filepath.Join(base, "snap", "link")); err == nil {
				t.Errorf("a link was written")
			}
		})
	}
}

func TestIndexLimits(t *testing.T) {
	md := tarEntry{name: "SKILL.md", body: skillMD("big", "Big.")}
	for _, tc := range []struct {
		name    string
		archive []byte
		lim     Limits
		says    string
	}{
		{"file size", tarGz(t, md, tarEntry{name: "f", body: strings.Repeat("x", 2000)}), Limits{MaxFiles: 10, MaxFileBytes: 1000, MaxBytes: 1 << 20}, "maxFileBytes"},
		// A header that lies about its size is caught while copying.
		{"total", tarGz(t, md, tarEntry{name: "a", body: strings.Repeat("x", 900)}, tarEntry{name: "b", body: strings.Repeat("x", 900)}), Limits{MaxFiles: 10, MaxFileBytes: 1000, MaxBytes: 1500}, "maxBytes"},
		{"count", tarGz(t, md, tarEntry{name: "a", body: "a"}, tarEntry{name: "b", body: "b"}, tarEntry{name: "c", body: "c"}), Limits{MaxFiles: 3, MaxFileBytes: 1000, MaxBytes: 1 << 20}, "more than 3 files"},
		{"zip file size", zipOf(t, md, tarEntry{name: "f", body: strings.Repeat("x", 2000)}), Limits{MaxFiles: 10, MaxFileBytes: 1000, MaxBytes: 1 << 20}, "maxFileBytes"},
		{"bomb", tarGz(t, md, tarEntry{name: "zeros", body: strings.Repeat("\x00", 4<<20)}), Limits{MaxFiles: 10, MaxFileBytes: 1 << 20, MaxBytes: 8 << 20}, "maxFileBytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPublisher(t)
			p.put(v2Path, indexJSON(p.publish("big", "archive", tc.archive)))
			f := newIndex(t, Spec{Index: p.srv.URL + v2Path}, nil)
			_, _, err := fetch(t, f, tc.lim)
			wantCode(t, err, CodeLimit, `skill "big"`, tc.says)
		})
	}
	t.Run("archive download", func(t *testing.T) {
		p := newPublisher(t)
		p.put(v2Path, indexJSON(p.publish("big", "archive", bytes.Repeat([]byte("x"), 5000))))
		f := newIndex(t, Spec{Index: p.srv.URL + v2Path}, nil)
		_, _, err := fetch(t, f, Limits{MaxFiles: 10, MaxFileBytes: 1000, MaxBytes: 4000})
		wantCode(t, err, CodeLimit, `skill "big"`, "4000 bytes")
	})
	t.Run("skill-md", func(t *testing.T) {
		p := newPublisher(t)
		p.put(v2Path, indexJSON(p.publish("big", "skill-md", []byte(skillMD("big", strings.Repeat("x", 2000))))))
		f := newIndex(t, Spec{Index: p.srv.URL + v2Path}, nil)
		_, _, err := fetch(t, f, Limits{MaxFiles: 10, MaxFileBytes: 1000, MaxBytes: 1 << 20})
		wantCode(t, err, CodeLimit, `skill "big"`)
	})
	t.Run("index size", func(t *testing.T) {
		p := newPublisher(t)
		p.put(v2Path, bytes.Repeat([]byte(" "), MaxIndexBytes+1))
		_, err := newIndex(t, Spec{Index: p.srv.URL + v2Path}, nil).Resolve(context.Background())
		wantCode(t, err, CodeLimit, "index")
	})
	t.Run("index entries", func(t *testing.T) {
		p := newPublisher(t)
		es := make([]entry, MaxIndexEntries+1)
		for i := range es {
			es[i] = entry{Name: fmt.Sprintf("s%d", i), Type: "skill-md", URL: "x", Digest: skill.DigestBytes(nil)}
		}
		p.put(v2Path, indexJSON(es...))
		_, err := newIndex(t, Spec{Index: p.srv.URL + v2Path}, nil).Resolve(context.Background())
		wantCode(t, err, CodeLimit, "10001 skills")
	})
}

func TestIndexInvalid(t *testing.T) {
	d := skill.DigestBytes(nil)
	for _, tc := range []struct {
		name, body, says string
	}{
		{"not json", "<html>hello</html>", "not a skills index"},
		{"no skills", `{"$schema": "` + SchemaIndexV2 + `"}`, `no "skills" array`},
		{"other schema", `{"$schema": "https://example.com/v9.json", "skills": []}`, "does not read"},
		{"bad name", `{"$schema": "` + SchemaIndexV2 + `", "skills": [{"name": "../etc", "type": "skill-md", "url": "x", "digest": "` + d + `"}]}`, "invalid name"},
		{"upper name", `{"$schema": "` + SchemaIndexV2 + `", "skills": [{"name": "Big", "type": "skill-md", "url": "x", "digest": "` + d + `"}]}`, "invalid name"},
		{"duplicate", `{"$schema": "` + SchemaIndexV2 + `", "skills": [{"name": "a", "type": "skill-md", "url": "x", "digest": "` + d + `"}, {"name": "a", "type": "skill-md", "url": "y", "digest": "` + d + `"}]}`, "same name"},
		{"type", `{"$schema": "` + SchemaIndexV2 + `", "skills": [{"name": "a", "type": "exe", "url": "x", "digest": "` + d + `"}]}`, `type "exe"`},
		{"digest", `{"$schema": "` + SchemaIndexV2 + `", "skills": [{"name": "a", "type": "skill-md", "url": "x", "digest": "md5:00"}]}`, "digest"},
		{"file url", `{"$schema": "` + SchemaIndexV2 + `", "skills": [{"name": "a", "type": "skill-md", "url": "file:///etc/passwd", "digest": "` + d + `"}]}`, "http or https only"},
		{"data url", `{"$schema": "` + SchemaIndexV2 + `", "skills": [{"name": "a", "type": "skill-md", "url": "data:,hello", "digest": "` + d + `"}]}`, "http or https only"},
		{"legacy without SKILL.md", `{"skills": [{"name": "a", "files": ["x.md"]}]}`, "does not list SKILL.md"},
		{"rfc files objects", `{"version": "0.2.0", "skills": [{"name": "a", "files": [{"path": "SKILL.md", "digest": "` + d + `"}]}]}`, "0.1.0 shape"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPublisher(t)
			p.put(v2Path, []byte(tc.body))
			_, err := newIndex(t, Spec{Index: p.srv.URL + v2Path}, nil).Resolve(context.Background())
			wantCode(t, err, CodeInvalid, tc.says)
		})
	}
	t.Run("legacy path", func(t *testing.T) {
		p := newPublisher(t)
		p.put(v2Path, []byte(`{"skills": [{"name": "a", "files": ["SKILL.md", "../x"]}]}`))
		_, err := newIndex(t, Spec{Index: p.srv.URL + v2Path}, nil).Resolve(context.Background())
		wantCode(t, err, CodePath, `"../x"`)
	})
	for _, u := range []string{"", "file:///tmp/index.json", "ftp://host/index.json", "/local/index.json", "https://"} {
		_, err := NewIndex(Spec{ID: "x", Index: u}, nil)
		wantCode(t, err, CodeInvalid)
	}
}

func TestIndexHTTPErrors(t *testing.T) {
	p := newPublisher(t)
	p.put("/forbidden-index", nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/401":
			w.WriteHeader(http.StatusUnauthorized)
		case "/403":
			w.WriteHeader(http.StatusForbidden)
		case "/409":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusConflict)
			io.WriteString(w, `{"error": {"code": "changed", "message": "skill \"x\" changed since the index was built: fetch the index again"}}`)
		default:
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	_, err := newIndex(t, Spec{Index: srv.URL + "/409"}, nil).Resolve(context.Background())
	wantCode(t, err, CodeNetwork, "409 Conflict", "the server says", "fetch the index again")
	for path, code := range map[string]string{"/401": CodeAuth, "/403": CodeAuth, "/500": CodeNetwork} {
		_, err := newIndex(t, Spec{Index: srv.URL + path}, nil).Resolve(context.Background())
		wantCode(t, err, code, path[1:])
	}
	// An artifact that is not there: the status, the skill, the URL.
	e := p.publish("gone", "skill-md", []byte("x"))
	p.put(v2Path, indexJSON(e))
	p.mu.Lock()
	delete(p.files, "/.well-known/agent-skills/gone/SKILL.md")
	p.mu.Unlock()
	_, _, err = fetch(t, newIndex(t, Spec{Index: p.srv.URL + v2Path}, nil), DefaultLimits)
	wantCode(t, err, CodeNetwork, "404", `skill "gone"`, "/gone/SKILL.md")
	// Nothing listens: a network error.
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	_, err = newIndex(t, Spec{Index: closed.URL + v2Path}, nil).Resolve(context.Background())
	wantCode(t, err, CodeNetwork)
}

func TestIndexToken(t *testing.T) {
	const token = "s3cret-t0ken-value"
	index := newPublisher(t)
	other := newPublisher(t)
	index.want = "Bearer " + token
	// Three artifacts: on the index host, on another host, and on the
	// index host but redirected to the other host.
	same := index.publish("same", "skill-md", []byte(skillMD("same", "Same.")))
	away := other.publish("away", "skill-md", []byte(skillMD("away", "Away.")))
	away.URL = other.srv.URL + "/.well-known/agent-skills/away/SKILL.md"
	moved := other.publish("moved", "skill-md", []byte(skillMD("moved", "Moved.")))
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, other.srv.URL+"/.well-known/agent-skills/moved/SKILL.md", http.StatusFound)
			return
		}
		index.srv.Config.Handler.ServeHTTP(w, r)
	}))
	defer redirect.Close()
	moved.URL = "/moved"
	index.put(v2Path, indexJSON(same, away, moved))

	f := newIndex(t, Spec{Index: redirect.URL + v2Path, Token: token, AllowedOrigins: []string{other.srv.URL}}, nil)
	dir, notes, err := fetch(t, f, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"same", "away", "moved"} {
		if _, err := os.Stat(filepath.Join(dir, n, "SKILL.md")); err != nil {
			t.Error(err)
		}
	}
	for _, r := range index.requests() {
		if !strings.HasSuffix(r, " Bearer "+token) {
			t.Errorf("the index host got %q without the token", r)
		}
	}
	for _, r := range other.requests() {
		if strings.Contains(r, token) || strings.Contains(r, "Bearer") {
			t.Errorf("another host got the token: %q", r)
		}
	}
	if len(other.requests()) != 2 {
		t.Errorf("the other host got %d requests, want 2: %q", len(other.requests()), other.requests())
	}
	if !strings.Contains(strings.Join(notes, "\n"), "plain http") {
		t.Errorf("notes %q do not warn that the token goes over plain http", notes)
	}

	// Never in errors: a refused token, a missing artifact, a digest
	// mismatch, a network failure.
	var errs []error
	_, err = newIndex(t, Spec{Index: index.srv.URL + v2Path, Token: token + "-wrong"}, nil).Resolve(context.Background())
	wantCode(t, err, CodeAuth, "check the token")
	errs = append(errs, err)
	index.put(v2Path, indexJSON(entry{Name: "gone", Type: "skill-md", URL: "gone/SKILL.md", Digest: skill.DigestBytes(nil)}))
	_, _, err = fetch(t, newIndex(t, Spec{Index: index.srv.URL + v2Path, Token: token}, nil), DefaultLimits)
	wantCode(t, err, CodeNetwork, "404")
	errs = append(errs, err)
	index.put(v2Path, indexJSON(entry{Name: "same", Type: "skill-md", URL: same.URL, Digest: skill.DigestBytes(nil)}))
	_, _, err = fetch(t, newIndex(t, Spec{Index: index.srv.URL + v2Path, Token: token}, nil), DefaultLimits)
	wantCode(t, err, CodeDigest)
	errs = append(errs, err)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	_, err = newIndex(t, Spec{Index: closed.URL + v2Path, Token: token}, nil).Resolve(context.Background())
	errs = append(errs, err)
	_, err = newIndex(t, Spec{Index: "https://user:" + token + "@" + strings.TrimPrefix(closed.URL, "http://") + v2Path}, nil).Resolve(context.Background())
	errs = append(errs, err)
	for _, err := range errs {
		if err == nil || strings.Contains(err.Error(), token) || strings.Contains(fmt.Sprintf("%+v", err), token) {
			t.Errorf("error holds the token: %v", err)
		}
	}
}

// A server that cuts the connection half way through an archive.
func TestIndexConnectionCut(t *testing.T) {
	p := newPublisher(t)
	archive := tarGz(t, tarEntry{name: "SKILL.md", body: skillMD("cut", "Cut.")}, tarEntry{name: "data", body: binaryBytes})
	e := p.publish("cut", "archive", archive)
	p.put(v2Path, indexJSON(e))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, ".tar.gz") {
			p.srv.Config.Handler.ServeHTTP(w, r)
			return
		}
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nContent-Type: application/gzip\r\n\r\n", len(archive))
		buf.Write(archive[:len(archive)/2])
		buf.Flush()
	}))
	defer srv.Close()
	f := newIndex(t, Spec{Index: srv.URL + v2Path}, nil)
	dir, _, err := fetch(t, f, DefaultLimits)
	wantCode(t, err, CodeNetwork, `skill "cut"`)
	if _, err := os.Stat(filepath.Join(dir, "cut")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a half-fetched archive was unpacked: %v", err)
	}
}

func TestIndexContextCancelled(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, sourceSkills())
	srv := secondLoadout(t, root, nil)
	f := newIndex(t, Spec{Index: srv.URL + v2Path}, nil)
	rev, err := f.Resolve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = f.Fetch(ctx, rev, filepath.Join(t.TempDir(), "snap"), DefaultLimits)
	wantCode(t, err, CodeNetwork, "canceled")
}

// FuzzUnpack: any bytes as an archive never panic and never write outside
// the snapshot folder, and nothing but regular files and folders appear.
func FuzzUnpack(f *testing.F) {
	md := tarEntry{name: "SKILL.md", body: skillMD("s", "S.")}
	f.Add(tarGz(f, md, tarEntry{name: "a/b.txt", body: "b"}, tarEntry{name: "x.sh", body: "#!/bin/sh\n", mode: 0o755}))
	f.Add(tarGz(f, md, tarEntry{name: "../escape", body: "x"}))
	f.Add(tarGz(f, md, tarEntry{name: "l", typeflag: tar.TypeSymlink, link: "../../x"}, tarEntry{name: "l/x", body: "x"}))
	f.Add(tarGz(f, tarEntry{name: "./", typeflag: tar.TypeDir, mode: 0o755}, tarEntry{name: "./SKILL.md", body: "x"}))
	f.Add(zipOf(f, md, tarEntry{name: "dir/f", body: "f"}))
	f.Add(zipOf(f, md, tarEntry{name: "/abs", body: "x"}))
	f.Add([]byte("PK\x05\x06"))
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, data []byte) {
		base := t.TempDir()
		snap := filepath.Join(base, "snap")
		if err := os.Mkdir(snap, 0o755); err != nil {
			t.Fatal(err)
		}
		root, err := os.OpenRoot(snap)
		if err != nil {
			t.Fatal(err)
		}
		defer root.Close()
		if err := root.Mkdir("s", 0o755); err != nil {
			t.Fatal(err)
		}
		b := &budget{lim: Limits{MaxFiles: 50, MaxFileBytes: 1 << 20, MaxBytes: 4 << 20}}
		err = unpack(context.Background(), bytes.NewReader(data), int64(len(data)), root, "s", b)
		if err != nil {
			if c := CodeOf(err); c != CodePath && c != CodeInvalid {
				var le *limitErr
				if !errors.As(err, &le) {
					t.Fatalf("unexpected error kind %s: %v", c, err)
				}
			}
		}
		walkErr := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(base, p)
			rel = filepath.ToSlash(rel)
			if rel != "." && rel != "snap" && !strings.HasPrefix(rel, "snap/s") {
				t.Errorf("written outside the skill folder: %s", rel)
			}
			if rel != "snap/s" && strings.HasPrefix(rel, "snap/s") && !strings.HasPrefix(rel, "snap/s/") {
				t.Errorf("written outside the skill folder: %s", rel)
			}
			if !d.IsDir() && !d.Type().IsRegular() {
				t.Errorf("%s is not a regular file: %v", rel, d.Type())
			}
			return nil
		})
		if walkErr != nil {
			t.Fatal(walkErr)
		}
		if err == nil {
			if fi, err := os.Lstat(filepath.Join(snap, "s", "SKILL.md")); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("unpacked without error but no SKILL.md: %v", err)
			}
		}
		if b.files > b.lim.MaxFiles+1 || b.written > b.lim.MaxBytes+1 {
			t.Errorf("over the budget: %d files, %d bytes", b.files, b.written)
		}
	})
}

// An archive is streamed to disk and unpacked from there: the memory a
// fetch allocates does not grow with the archive (16 MiB here).
func TestIndexFetchMemoryBounded(t *testing.T) {
	data := make([]byte, 16<<20)
	rand.NewChaCha8([32]byte{1}).Read(data)
	archive := tarGz(t, tarEntry{name: "SKILL.md", body: skillMD("large", "Large.")}, tarEntry{name: "blob.bin", body: string(data)})
	p := newPublisher(t)
	p.put(v2Path, indexJSON(p.publish("large", "archive", archive)))
	f := newIndex(t, Spec{Index: p.srv.URL + v2Path}, nil)
	rev, err := f.Resolve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "snap")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := f.Fetch(context.Background(), rev, dir, Limits{MaxFiles: 10, MaxFileBytes: 32 << 20, MaxBytes: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	t.Logf("allocated %d bytes", after.TotalAlloc-before.TotalAlloc)
	const bound = 1 << 20
	if got := after.TotalAlloc - before.TotalAlloc; got > bound {
		t.Errorf("fetching a %d-byte archive allocated %d bytes (server included), over %d", len(archive), got, bound)
	}
	got, err := os.ReadFile(filepath.Join(dir, "large", "blob.bin"))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("blob.bin differs from the source (%v)", err)
	}
}

// Text from the remote is cut in messages: a huge name, a huge path.
func TestIndexMessagesBounded(t *testing.T) {
	p := newPublisher(t)
	huge := strings.Repeat("A", 100000)
	p.put(v2Path, indexJSON(entry{Name: huge, Type: "skill-md", URL: "x", Digest: skill.DigestBytes(nil)}))
	_, err := newIndex(t, Spec{Index: p.srv.URL + v2Path}, nil).Resolve(context.Background())
	wantCode(t, err, CodeInvalid, "invalid name")
	if n := len(err.Error()); n > 1000 {
		t.Errorf("the error is %d bytes long", n)
	}
	p.put(v2Path, indexJSON(p.publish("long", "archive", tarGz(t, tarEntry{name: "SKILL.md", body: "x"}, tarEntry{name: strings.Repeat("d/", 30000) + "f", body: "x"}))))
	_, _, err = fetch(t, newIndex(t, Spec{Index: p.srv.URL + v2Path}, nil), DefaultLimits)
	wantCode(t, err, CodePath, "the limit is 1024")
	if n := len(err.Error()); n > 1000 {
		t.Errorf("the error is %d bytes long", n)
	}
}

// BenchmarkIndexFetch fetches a second loadout's index of 200 skills
// (SKILL.md and three supporting files each, one an executable script):
// go test -run XXX -bench IndexFetch -benchtime 10x -benchmem ./remote/
func BenchmarkIndexFetch(b *testing.B) {
	root := b.TempDir()
	files := map[string]srcFile{}
	for i := 0; i < 200; i++ {
		n := fmt.Sprintf("skill-%03d", i)
		files[n+"/SKILL.md"] = srcFile{skillMD(n, "Skill number "+n+"."), 0o644}
		files[n+"/references/guide.md"] = srcFile{strings.Repeat("Some guidance. ", 200), 0o644}
		files[n+"/scripts/run.sh"] = srcFile{"#!/bin/sh\necho " + n + "\n", 0o755}
		files[n+"/assets/data.json"] = srcFile{`{"n": "` + n + `"}`, 0o644}
	}
	writeTree(b, root, files)
	srv := secondLoadout(b, root, nil)
	f, err := NewIndex(Spec{ID: "bench", Index: srv.URL + v2Path}, srv.Client())
	if err != nil {
		b.Fatal(err)
	}
	rev, err := f.Resolve(context.Background()) // the server builds its index once
	if err != nil {
		b.Fatal(err)
	}
	base := b.TempDir()
	i := 0
	for b.Loop() {
		i++
		if _, err := f.Resolve(context.Background()); err != nil {
			b.Fatal(err)
		}
		if _, err := f.Fetch(context.Background(), rev, filepath.Join(base, fmt.Sprint(i)), DefaultLimits); err != nil {
			b.Fatal(err)
		}
	}
}

// An index that moved (a redirect to another host): its relative URLs
// are relative to where it is now, and the token stays with the host
// configured.
func TestIndexRedirected(t *testing.T) {
	const token = "redirect-t0ken"
	moved := newPublisher(t)
	moved.put(v2Path, indexJSON(moved.publish("one", "skill-md", []byte(skillMD("one", "One.")))))
	var got []string
	var mu sync.Mutex
	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.URL.Path != v2Path {
			http.NotFound(w, r) // only the index moved
			return
		}
		http.Redirect(w, r, moved.srv.URL+r.URL.Path, http.StatusMovedPermanently)
	}))
	defer old.Close()
	dir, _, err := fetch(t, newIndex(t, Spec{Index: old.URL + v2Path, Token: token, AllowedOrigins: []string{moved.srv.URL}}, nil), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "one", "SKILL.md")); err != nil {
		t.Error(err)
	}
	for _, r := range moved.requests() {
		if strings.Contains(r, token) {
			t.Errorf("the host the index moved to got the token: %q", r)
		}
	}
	if len(got) != 2 || got[0] != "Bearer "+token { // Resolve and Fetch
		t.Errorf("the configured host got %q", got)
	}
}

// TestIndexOrigins: an index's entries and the redirects of its requests
// stay on the index's origin unless the source allows more; a refusal
// names the entry and the origin and sends nothing there, and another
// origin's error message is not quoted.
func TestIndexOrigins(t *testing.T) {
	var hits []string
	var mu sync.Mutex
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, r.URL.String())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"message": "internal-admin secret 7f3a: deleted everything"}`)
	}))
	defer target.Close()
	hitCount := func() int { mu.Lock(); defer mu.Unlock(); return len(hits) }
	admin := target.URL + "/internal-admin/delete-everything?confirm=yes"
	d := skill.DigestBytes([]byte("x"))

	t.Run("entry on another origin", func(t *testing.T) {
		p := newPublisher(t)
		p.put(v2Path, indexJSON(p.publish("fine", "skill-md", []byte(skillMD("fine", "Fine."))), entry{Name: "evil", Type: "skill-md", URL: admin, Digest: d}))
		_, err := newIndex(t, Spec{Index: p.srv.URL + v2Path}, nil).Resolve(context.Background())
		wantCode(t, err, CodeInvalid, `skill 2 ("evil")`, target.URL+" is not the index's origin", `"allowedOrigins"`)
		if hitCount() != 0 {
			t.Errorf("the other origin was requested: %v", hits)
		}
	})
	t.Run("the same host on another port or scheme", func(t *testing.T) {
		p := newPublisher(t)
		other := strings.Replace(p.srv.URL, "http://", "https://", 1)
		p.put(v2Path, indexJSON(entry{Name: "evil", Type: "skill-md", URL: other + "/x", Digest: d}))
		_, err := newIndex(t, Spec{Index: p.srv.URL + v2Path}, nil).Resolve(context.Background())
		wantCode(t, err, CodeInvalid, `("evil")`, "https://127.0.0.1:")
	})
	t.Run("redirect to another origin", func(t *testing.T) {
		p := newPublisher(t)
		bounce := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/evil/SKILL.md" {
				http.Redirect(w, r, admin, http.StatusFound)
				return
			}
			p.srv.Config.Handler.ServeHTTP(w, r)
		}))
		defer bounce.Close()
		p.put(v2Path, indexJSON(entry{Name: "evil", Type: "skill-md", URL: "/evil/SKILL.md", Digest: d}))
		_, _, err := fetch(t, newIndex(t, Spec{Index: bounce.URL + v2Path}, nil), DefaultLimits)
		wantCode(t, err, CodeInvalid, `skill "evil"`, "was redirected to", target.URL+" is not the index's origin")
		if hitCount() != 0 {
			t.Errorf("the redirect was followed: %v", hits)
		}
		// The index itself redirected away: refused too.
		away := httptest.NewServer(http.RedirectHandler(p.srv.URL+v2Path, http.StatusMovedPermanently))
		defer away.Close()
		_, err = newIndex(t, Spec{Index: away.URL + v2Path}, nil).Resolve(context.Background())
		wantCode(t, err, CodeInvalid, "(the index) was redirected to", p.srv.URL+" is not the index's origin")
	})
	t.Run("allowed", func(t *testing.T) {
		p := newPublisher(t)
		p.put(v2Path, indexJSON(entry{Name: "evil", Type: "skill-md", URL: admin, Digest: d}))
		_, _, err := fetch(t, newIndex(t, Spec{Index: p.srv.URL + v2Path, AllowedOrigins: []string{target.URL}}, nil), DefaultLimits)
		// Fetched, since allowed; the target's own words are not echoed.
		wantCode(t, err, CodeAuth, "403", `skill "evil"`)
		if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "deleted") {
			t.Errorf("the error echoes another origin's body: %v", err)
		}
		if hitCount() != 1 {
			t.Errorf("%d requests to the allowed origin, want 1", hitCount())
		}
	})
	t.Run("own origin quoted", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusConflict)
			io.WriteString(w, `{"message": "fetch the index again"}`)
		}))
		defer srv.Close()
		_, err := newIndex(t, Spec{Index: srv.URL + v2Path}, nil).Resolve(context.Background())
		wantCode(t, err, CodeNetwork, "the server says", "fetch the index again")
	})
	t.Run("invalid allowedOrigins", func(t *testing.T) {
		for _, o := range []string{"cdn.example.com", "https://cdn.example.com/", "https://cdn.example.com/x", "https://*.example.com", "https://u:p@cdn.example.com", "ftp://cdn.example.com", "https://cdn.example.com?x", "https://cdn.example.com:0", "https://"} {
			_, err := NewIndex(Spec{ID: "x", Index: "https://idx.example.com" + v2Path, AllowedOrigins: []string{o}}, nil)
			wantCode(t, err, CodeInvalid, "allowedOrigins[0]")
		}
		f, err := NewIndex(Spec{ID: "x", Index: "https://idx.example.com" + v2Path, AllowedOrigins: []string{"HTTPS://CDN.example.com:443", "http://[::1]:8080"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for u, want := range map[string]bool{
			"https://cdn.example.com/a.tar.gz": true, "https://cdn.EXAMPLE.com:443/a": true, "http://[::1]:8080/a": true,
			"https://idx.example.com/x": true, "http://cdn.example.com/a": false, "https://cdn.example.com:8443/a": false,
			"https://evil.cdn.example.com/a": false, "http://[::1]:8081/a": false,
		} {
			pu, _ := url.Parse(u)
			if got := f.allowed(pu); got != want {
				t.Errorf("allowed(%s) = %v, want %v", u, got, want)
			}
		}
		// The token and quoted messages follow the same comparison.
		for pair, want := range map[[2]string]bool{
			{"https://h.io/a", "https://H.io:443/b"}: true,
			{"http://h.io:1/", "https://h.io:1/"}:    false,
			{"http://h.io:1/", "http://h.io:2/"}:     false,
		} {
			a, _ := url.Parse(pair[0])
			b, _ := url.Parse(pair[1])
			if got := sameOrigin(a, b); got != want {
				t.Errorf("sameOrigin(%s, %s) = %v, want %v", pair[0], pair[1], got, want)
			}
		}
	})
}

// TestIndexDigestLength: a digest of 63 or 65 hex digits (or upper case)
// refuses the index; 64 is read.
func TestIndexDigestLength(t *testing.T) {
	hex64 := strings.Repeat("ab", 32)
	for d, ok := range map[string]bool{
		"sha256:" + hex64:                  true,
		"sha256:" + hex64 + "a":            false,
		"sha256:" + hex64 + "ab":           false,
		"sha256:" + hex64[:63]:             false,
		"sha256:" + strings.ToUpper(hex64): false,
		"sha512:" + hex64:                  false,
		"sha256:" + hex64[:62] + "g0":      false,
	} {
		if got := validDigest(d); got != ok {
			t.Errorf("validDigest(%q) = %v, want %v", d, got, ok)
		}
	}
	p := newPublisher(t)
	p.put(v2Path, indexJSON(entry{Name: "long", Type: "skill-md", URL: "x", Digest: "sha256:" + hex64 + "00"}))
	_, err := newIndex(t, Spec{Index: p.srv.URL + v2Path}, nil).Resolve(context.Background())
	wantCode(t, err, CodeInvalid, `skill 1 ("long") has digest`)
}

// TestIndexArchiveTwoEntryFiles: SKILL.md and skill.md side by side at an
// archive's top are refused, naming both; in a folder below, they are
// supporting files.
func TestIndexArchiveTwoEntryFiles(t *testing.T) {
	md := tarEntry{name: "SKILL.md", body: skillMD("two", "Two.")}
	for _, tc := range []struct {
		name    string
		archive []byte
		refused bool
	}{
		{"tar", tarGz(t, md, tarEntry{name: "skill.md", body: "other"}), true},
		{"tar, lower first", tarGz(t, tarEntry{name: "skill.md", body: "other"}, md), true},
		{"zip", zipOf(t, md, tarEntry{name: "Skill.MD", body: "other"}), true},
		{"below the top", tarGz(t, md, tarEntry{name: "docs/skill.md", body: "other"}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPublisher(t)
			p.put(v2Path, indexJSON(p.publish("two", "archive", tc.archive)))
			_, _, err := fetch(t, newIndex(t, Spec{Index: p.srv.URL + v2Path}, nil), DefaultLimits)
			if !tc.refused {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantCode(t, err, CodePath, `skill "two"`, "SKILL.md", "both")
			if !strings.Contains(err.Error(), `"skill.md"`) && !strings.Contains(err.Error(), `"Skill.MD"`) {
				t.Errorf("the error does not name the second file: %v", err)
			}
		})
	}
}
