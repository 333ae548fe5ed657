package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/httpapi"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/webui"
)

// zipEntry is one entry of a test archive: a folder when data is nil and
// the name ends in "/".
type zipEntry struct {
	name string
	data []byte
}

// storedZip is a zip of entries, stored (not compressed), so that sizes
// are exact and no ratio check is near.
func storedZip(t *testing.T, entries []zipEntry) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range entries {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(e.data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// noise is n bytes that do not compress.
func noise(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

const agreeMD = "---\nname: big\ndescription: Use when big.\n---\nSee the data.\n"

// importSurfaces are the three ways an archive is imported, each
// answering the refusal of the archive's one skill ("" when accepted).
type importSurfaces struct {
	api, ui func(t *testing.T, name string, data []byte) string
	cli     func(t *testing.T, name string, data []byte) string
}

func newImportSurfaces(t *testing.T, lim skill.Limits) importSurfaces {
	// The API and the UI, in one server over one store: each import goes
	// to a fresh skill name's absence (the test deletes what it wrote).
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "srv.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{{AgentID: "a", Skills: []catalog.SourceSpec{{Store: true}}}}, catalog.Options{Store: store.NewProvider(st)})
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	svc := service.New(cat, service.Options{Store: st, Server: st, Limits: lim, Logger: quiet})
	t.Cleanup(func() { svc.Close() })
	mux := http.NewServeMux()
	mux.Handle("/v1/", httpapi.Auth(svc, httpapi.New(svc, httpapi.Options{Limits: lim, Logger: quiet})))
	mux.Handle(webui.Prefix, webui.New(svc, webui.Options{Logger: quiet}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	forget := func(t *testing.T) {
		if rec, err := st.Get(context.Background(), "big"); err == nil {
			if err := st.Delete(context.Background(), "big", rec.Version); err != nil {
				t.Fatal(err)
			}
		}
	}
	refusal := func(t *testing.T, where string, status int, body []byte) string {
		t.Helper()
		var out struct {
			Results []struct{ Action, Error string }
			Error   *struct{ Message string }
		}
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatalf("%s: %d %s", where, status, body)
		}
		if out.Error != nil {
			return out.Error.Message
		}
		if len(out.Results) != 1 {
			t.Fatalf("%s: want one result: %d %s", where, status, body)
		}
		return out.Results[0].Error
	}
	csrf := regexp.MustCompile(`<meta name="csrf-token" content="([^"]*)">`)
	s := importSurfaces{}
	s.api = func(t *testing.T, name string, data []byte) string {
		t.Helper()
		defer forget(t)
		req, _ := http.NewRequest("POST", srv.URL+"/v1/import", bytes.NewReader(data))
		req.Header.Set("Content-Type", "application/zip")
		req.Header.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return refusal(t, "API", res.StatusCode, body)
	}
	s.ui = func(t *testing.T, name string, data []byte) string {
		t.Helper()
		defer forget(t)
		res, err := http.Get(srv.URL + "/ui/import")
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(res.Body)
		res.Body.Close()
		m := csrf.FindSubmatch(page)
		if m == nil {
			t.Fatalf("the import page has no CSRF token: %d %s", res.StatusCode, page)
		}
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		fw, _ := mw.CreateFormFile("file", name)
		fw.Write(data)
		mw.Close()
		req, _ := http.NewRequest("POST", srv.URL+"/ui/import", &b)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set(service.CSRFHeader, string(m[1]))
		res, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return refusal(t, "UI", res.StatusCode, body)
	}
	// The CLI: the real binary, with the same limits in its config.
	work := t.TempDir()
	config := filepath.Join(work, "loadout.json")
	if err := os.WriteFile(config, fmt.Appendf(nil, `{"storeLimits": {"maxFileSize": %d, "maxTotalSize": %d}}`, lim.MaxFileSize, lim.MaxTotalSize), 0o644); err != nil {
		t.Fatal(err)
	}
	n := 0
	s.cli = func(t *testing.T, name string, data []byte) string {
		t.Helper()
		n++
		dir := filepath.Join(work, fmt.Sprint(n))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r := binCLI(t, "import", "--json", "--db", filepath.Join(dir, "cli.db"), "--config", config, path)
		var out struct {
			Results []struct{ Action, Error string }
		}
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Results) != 1 {
			t.Fatalf("CLI: %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		return out.Results[0].Error
	}
	return s
}

// TestImportLimitsAgree: the API (POST /v1/import), the UI (POST
// /ui/import) and the CLI (loadout import) hold one archive to one set of
// limits, the store's: each accepts the archive at the exact limit and
// refuses the one a byte or an entry past it, in the same words, naming
// the file and the limit. Two sets of store limits: below skill's
// defaults (an archive over them passes every default and only the
// store's limits refuse it) and above them (nothing refuses it at a
// default).
func TestImportLimitsAgree(t *testing.T) {
	for _, lim := range []skill.Limits{
		{MaxFileSize: 64 << 10, MaxTotalSize: 256 << 10},
		{MaxFileSize: 2 << 20, MaxTotalSize: 20 << 20},
	} {
		t.Run(fmt.Sprintf("file=%d,total=%d", lim.MaxFileSize, lim.MaxTotalSize), func(t *testing.T) {
			importLimitsAgree(t, lim)
		})
	}
}

func importLimitsAgree(t *testing.T, lim skill.Limits) {
	s := newImportSurfaces(t, lim)
	fileSize, totalSize := int(lim.MaxFileSize), int(lim.MaxTotalSize)
	md := []byte(agreeMD)
	folders := func(n int) []zipEntry {
		es := []zipEntry{{"big/SKILL.md", md}}
		for i := range n {
			es = append(es, zipEntry{name: fmt.Sprintf("big/d%04d/", i)})
		}
		return es
	}
	// total: SKILL.md and files of fileSize bytes, the last short so the
	// whole is totalSize bytes (and extra more).
	total := func(extra int) []zipEntry {
		es := []zipEntry{{"big/SKILL.md", md}}
		left := totalSize - len(md) + extra
		for i := 0; left > 0; i++ {
			n := min(left, fileSize)
			es = append(es, zipEntry{fmt.Sprintf("big/f%02d.bin", i), noise(n, uint64(i))})
			left -= n
		}
		return es
	}
	for _, c := range []struct {
		name      string
		at, past  []zipEntry
		wantWords string
	}{
		{"per-file size",
			[]zipEntry{{"big/SKILL.md", md}, {"big/data.bin", noise(fileSize, 5)}},
			[]zipEntry{{"big/SKILL.md", md}, {"big/data.bin", noise(fileSize+1, 5)}},
			fmt.Sprintf("big.zip: big/data.bin: the entry is %d bytes uncompressed, over the %d-byte limit per file", fileSize+1, fileSize)},
		{"total size", total(0), total(1),
			fmt.Sprintf("big.zip: the files are over %d bytes in all, uncompressed, over the limit of %d", totalSize+1, totalSize)},
		{"entries", folders(999), folders(1000),
			"big.zip: the archive has 1001 entries, over the limit of 1000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			at, past := storedZip(t, c.at), storedZip(t, c.past)
			for _, sf := range []struct {
				name string
				f    func(*testing.T, string, []byte) string
			}{{"API", s.api}, {"UI", s.ui}, {"CLI", s.cli}} {
				if got := sf.f(t, "big.zip", at); got != "" {
					t.Errorf("%s refused the archive at the limit: %s", sf.name, got)
				}
				got := sf.f(t, "big.zip", past)
				if !strings.Contains(got, c.wantWords) {
					t.Errorf("%s, one past the limit:\n got  %q\n want %q in it", sf.name, got, c.wantWords)
				}
			}
		})
	}
}
