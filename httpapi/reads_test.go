//go:build unix

package httpapi_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
)

// get sends a GET that must be answered before a deadline: a handler that
// blocks on a file fails the test instead of hanging it.
func (e *env) get(t *testing.T, path, token string, hdr ...string) resp {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Patience(t))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", e.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v (the server blocked?)", path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("GET %s: %v (the server blocked?)", path, err)
	}
	return resp{res.StatusCode, res.Header, b}
}

// Reads of a 1 GiB folder-skill file: ranges read only the range, and a
// whole read (admin file, export, agent read without a range) is refused
// with too_large before anything is read.
func TestHugeFileReads(t *testing.T) {
	e := newEnv(t, baseFiles)
	writeFiles(t, e.root, map[string]string{"huge/SKILL.md": md("huge", "Huge file.", "See data.bin.")})
	testutil.Sparse(t, filepath.Join(e.root, "huge", "data.bin"), testutil.GiB)
	e.svc.Reload(context.Background(), "test")

	n := testutil.Allocated(func() {
		for _, off := range []string{"0", "1048576", "536870912", "1073741724"} {
			r := e.get(t, "/v1/agents/coder/skills/huge/files/data.bin?offset="+off+"&length=100", e.coder)
			want(t, r, 200)
			if m := r.json(t); m["size"] != float64(testutil.GiB) || (m["more"] == true) != (off != "1073741724") {
				t.Errorf("offset %s: %s", off, r.body)
			}
			r = e.get(t, "/v1/agents/coder/skills/huge/files/data.bin?raw=1&offset="+off+"&length=100", e.coder)
			want(t, r, 206)
			if len(r.body) != 100 || !strings.HasSuffix(r.h.Get("Content-Range"), "/1073741824") {
				t.Errorf("raw offset %s: %d bytes, %q", off, len(r.body), r.h.Get("Content-Range"))
			}
		}
	})
	if n > 16<<20 {
		t.Errorf("eight 100-byte reads of a 1 GiB file allocated %d bytes", n)
	}
	n = testutil.Allocated(func() {
		for _, u := range []string{
			"/v1/agents/coder/skills/huge/files/data.bin",
			"/v1/agents/coder/skills/huge/files/data.bin?raw=1",
			"/v1/skills/huge/files/data.bin",
			"/v1/skills/huge/export",
			"/v1/skills/huge/export?format=zip",
		} {
			tok := e.admin
			if strings.Contains(u, "agents") {
				tok = e.coder
			}
			r := e.get(t, u, tok)
			want(t, r, 413)
			if !bytes.Contains(r.body, []byte("data.bin")) || !bytes.Contains(r.body, []byte("1073741824")) {
				t.Errorf("%s: the refusal does not name the file and its size: %s", u, r.body)
			}
		}
	})
	if n > 16<<20 {
		t.Errorf("five refused whole reads allocated %d bytes", n)
	}
	// A file under the cap is streamed with Range support.
	r := e.get(t, "/v1/skills/alpha/files/references/guide.md", e.admin, "Range", "bytes=2-6")
	if r.code != 206 || string(r.body) != "Guide" {
		t.Errorf("admin ranged read: %d %q", r.code, r.body)
	}
}

// A FIFO swapped in for a listed file after the scan: every read route
// answers a 4xx refusal at once instead of blocking.
func TestFIFOSwappedInIsRefused(t *testing.T) {
	e := newEnv(t, baseFiles)
	p := filepath.Join(e.root, "alpha", "references", "guide.md")
	testutil.Must(t, os.Remove(p))
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		url, tok string
		status   int
		code     string
	}{
		{"/v1/agents/coder/skills/alpha/files/references/guide.md", e.coder, 400, ""},
		{"/v1/agents/coder/skills/alpha/files/references/guide.md?raw=1", e.coder, 400, "refused"},
		{"/v1/agents/coder/skills/alpha/files/references/guide.md?offset=1&length=2", e.coder, 400, ""},
		{"/v1/skills/alpha/files/references/guide.md", e.admin, 400, "refused"},
		{"/v1/skills/alpha/export", e.admin, 400, "refused"},
		{"/v1/skills/alpha/export?format=zip", e.admin, 400, "refused"},
	} {
		r := e.get(t, tc.url, tc.tok)
		if tc.code != "" {
			wantErr(t, r, tc.status, tc.code)
		} else {
			want(t, r, tc.status)
		}
		if !bytes.Contains(r.body, []byte("not-regular")) || !bytes.Contains(r.body, []byte("named pipe")) {
			t.Errorf("%s: %s", tc.url, r.body)
		}
	}
}

// swapFolder replaces the skill folder name with a link to a folder holding
// the same file names, with "SECRET" in them, sizes unchanged.
func swapFolder(t *testing.T, root, name string, files map[string]string) {
	t.Helper()
	other := t.TempDir()
	for p, data := range files {
		if strings.HasPrefix(p, name+"/") {
			secret := []byte(strings.Repeat("SECRET", len(data)/6+1))[:len(data)]
			writeFiles(t, other, map[string]string{strings.TrimPrefix(p, name+"/"): string(secret)})
		}
	}
	dir := filepath.Join(root, name)
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, dir); err != nil {
		t.Skip(err)
	}
}

// A skill folder swapped for a link after the scan is not followed by any
// route: the reads answer 409 (the catalog is stale), never the link's bytes.
func TestSwappedSkillFolderIsRefused(t *testing.T) {
	e := newEnv(t, baseFiles)
	swapFolder(t, e.root, "alpha", baseFiles)
	for _, tc := range []struct{ url, tok string }{
		{"/v1/agents/coder/skills/alpha/files/references/guide.md", e.coder},
		{"/v1/agents/coder/skills/alpha/files/references/guide.md?raw=1", e.coder},
		{"/v1/agents/coder/skills/alpha/files/SKILL.md?raw=1", e.coder},
		{"/v1/skills/alpha/files/references/guide.md", e.admin},
		{"/v1/skills/alpha", e.admin},
		{"/v1/skills/alpha/export", e.admin},
		{"/v1/skills/alpha/export?format=zip", e.admin},
	} {
		r := e.get(t, tc.url, tc.tok)
		if r.code != 409 || bytes.Contains(r.body, []byte("SECRET")) || !bytes.Contains(r.body, []byte("folder-changed")) {
			t.Errorf("%s: %d %s", tc.url, r.code, r.body)
		}
	}
}

// Exporting a folder skill whose listed file became a link that leaves the
// skill is a 4xx refusal with the link's code, not a 500. An absolute link
// (which reads never follow, even to a file inside the skill) is not
// listed at all, so the export leaves it out.
func TestExportEscapingLinkIs4xx(t *testing.T) {
	e := newEnv(t, baseFiles)
	abs := filepath.Join(e.root, "alpha", "references", "abs.md")
	if err := os.Symlink(filepath.Join(e.root, "alpha", "references", "guide.md"), abs); err != nil {
		t.Skip(err)
	}
	e.svc.Reload(context.Background(), "test")
	r := e.get(t, "/v1/skills/alpha/export", e.admin)
	want(t, r, 200)
	if bytes.Contains(r.body, []byte("references/abs.md")) {
		t.Errorf("an absolute link was exported: %s", r.body)
	}
	testutil.Must(t, os.Remove(abs))
	e.svc.Reload(context.Background(), "test")
	secret := filepath.Join(t.TempDir(), "secret")
	testutil.Write(t, secret, "TOP SECRET")
	guide := filepath.Join(e.root, "alpha", "references", "guide.md")
	testutil.Must(t, os.Remove(guide))
	testutil.Must(t, os.Symlink(secret, guide))
	for _, u := range []string{"/v1/skills/alpha/export", "/v1/skills/alpha/export?format=zip"} {
		r := e.get(t, u, e.admin)
		wantErr(t, r, 400, "refused")
		if bytes.Contains(r.body, []byte("TOP SECRET")) || !bytes.Contains(r.body, []byte("symlink-escapes")) {
			t.Errorf("%s: %s", u, r.body)
		}
	}
}
