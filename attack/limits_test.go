package attack

// The first battery's resource attacks (moved here from cmd/loadout), each
// against the real server: its peak memory stays under a bound and
// /healthz keeps answering.

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

// eventually retries f every 50 ms for up to d.
func eventually(t testing.TB, d time.Duration, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func underRSS(t testing.TB, s *Server, limitMB float64, what string) {
	t.Helper()
	peak := s.PeakRSSMB(t)
	t.Logf("%s: server peak RSS %.1f MB", what, peak)
	if peak > limitMB {
		t.Errorf("%s: server peak RSS %.1f MB, bound %.0f MB", what, peak, limitMB)
	}
}

func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestLimitsAliasBomb(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		s := Start(t, Options{Engine: engine})
		bomb := testutil.AliasBomb("bomb", 9, 9)
		if len(bomb) > 600 {
			t.Fatalf("bomb is %d bytes; the attack is a few hundred", len(bomb))
		}
		// 1. Dropped into a watched folder.
		WriteFiles(t, filepath.Join(s.Dir, "skills"), map[string]string{"bomb/SKILL.md": bomb})
		// 2. Created through the API.
		doc := `{"schemaVersion": 2, "skill": {"name": "bomb2", "content": ` + jsonString(testutil.AliasBomb("bomb2", 9, 9)) + `, "files": []}}`
		if code, _, body := s.Do(t, "POST", "/v1/skills", "", doc); code < 400 || code >= 500 {
			t.Errorf("POST of an alias bomb: %d %s", code, body)
		}
		// 3. Imported as a zip.
		var zb bytes.Buffer
		zw := zip.NewWriter(&zb)
		f, err := zw.Create("bomb3/SKILL.md")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(testutil.AliasBomb("bomb3", 9, 9))); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if code, _, body := s.Do(t, "POST", "/v1/import", "", zb.String(), "Content-Type", "application/zip"); code < 400 || code >= 500 {
			t.Errorf("zip import of an alias bomb: %d %s", code, body)
		}
		// Nothing of the bombs reached the store.
		_, _, list := s.Do(t, "GET", "/v1/skills", "", "")
		if strings.Contains(list, "bomb2") || strings.Contains(list, "bomb3") {
			t.Errorf("a refused bomb was stored:\n%s", tail(list, 2000))
		}
		// The folder skill is reported, not expanded.
		eventually(t, 5*time.Second, "the bomb in the folder being diagnosed", func() bool {
			_, _, body := s.Do(t, "GET", "/v1/diagnostics", "", "")
			return strings.Contains(body, "bomb")
		})
		s.Healthy(t)
		underRSS(t, s, 100, "alias bombs")
	})
}

func TestLimitsHugeNames(t *testing.T) {
	s := Start(t, Options{})
	name := strings.Repeat("a", 100_000)
	c := &http.Client{Timeout: 10 * time.Second}
	for _, path := range []string{
		"/v1/agents/coder/skills/" + name,
		"/v1/agents/coder/skills/" + name + "/files/SKILL.md",
	} {
		for i := 0; i < 4; i++ {
			resp, err := c.Get(s.Base + path)
			if err != nil {
				t.Fatalf("unknown 100 KB name: %v", errors.Unwrap(err)) // the error's URL is 100 KB
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode < 400 || resp.StatusCode >= 500 {
				t.Errorf("unknown 100 KB name: %d", resp.StatusCode)
			}
		}
	}
	s.Healthy(t)
	underRSS(t, s, 100, "huge names")
}

func TestLimitsHugeRangedReads(t *testing.T) {
	s := Start(t, Options{})
	big := filepath.Join(s.Dir, "skills", "deploy", "references", "big.bin")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil { // sparse: costs no disk
		t.Fatal(err)
	}
	f.Close()
	eventually(t, 5*time.Second, "the big file being listed", func() bool {
		_, _, body := s.Do(t, "GET", "/v1/agents/coder/skills/deploy", "", "", "Accept", "application/json")
		return strings.Contains(body, "big.bin")
	})
	for i := 0; i < 4; i++ {
		code, _, body := s.Do(t, "GET", fmt.Sprintf("/v1/agents/coder/skills/deploy/files/references/big.bin?offset=%d&length=100", int64(i)<<28), "", "")
		if code != 200 || len(body) > 4096 {
			t.Errorf("ranged read %d: %d, %d bytes", i, code, len(body))
		}
	}
	// A whole read of a file over the serve-time cap is refused, not loaded.
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Get(s.Base + "/v1/agents/coder/skills/deploy/files/references/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode < 400 || resp.StatusCode >= 500 {
		t.Errorf("whole read of a 1 GB file: %d", resp.StatusCode)
	}
	s.Healthy(t)
	underRSS(t, s, 100, "ranged reads of a 1 GB file")
}

// Without watching, nothing rescans the folder after the swaps, so every
// read meets what changed since the scan. (With watching, a rescan finds
// a linked folder like any skill linked into a root.)
func TestLimitsFIFOAndFolderSwap(t *testing.T) {
	s := Start(t, Options{Args: []string{"--no-watch"}})
	skills := filepath.Join(s.Dir, "skills")
	// A FIFO swapped in for a listed file after the scan.
	guide := filepath.Join(skills, "lint", "references", "guide.md")
	if err := os.Remove(guide); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(guide, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	for _, path := range []string{
		"/v1/agents/coder/skills/lint/files/references/guide.md",
		"/.well-known/agent-skills/index.json",
		"/.well-known/skills/index.json",
	} {
		code, _, body := s.Do(t, "GET", path, "", "")
		if strings.HasSuffix(path, "guide.md") && code < 400 {
			t.Errorf("reading a FIFO: %d %s", code, body)
		}
	}
	// The skill folder swapped for a link to a folder holding a secret under
	// the same file name.
	secret := t.TempDir()
	WriteFiles(t, secret, map[string]string{
		"SKILL.md":            "---\nname: deploy\ndescription: Use when you deploy.\n---\nBody of deploy.\n",
		"references/guide.md": "TOP-SECRET\n",
	})
	deploy := filepath.Join(skills, "deploy")
	if err := os.Rename(deploy, deploy+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, deploy); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		for _, path := range []string{
			"/v1/agents/coder/skills/deploy/files/references/guide.md",
			"/.well-known/skills/deploy/references/guide.md",
		} {
			if _, _, body := s.Do(t, "GET", path, "", ""); strings.Contains(body, "TOP-SECRET") {
				t.Fatalf("%s served a file through a swapped-in link", path)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Healthy(t)
}

// A storeLimits.maxFileSize above the default holds for every write path,
// file uploads included (they used to get the store's 1 MiB default): the
// exact limit is accepted, one byte past it refused, on both engines.
func TestServeStoreLimitsAboveDefault(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		s := Start(t, Options{Engine: engine, Args: []string{"--no-watch"},
			Config: `{"agents": [{"agentId": "a", "skills": [{"store": true}]}], "storeLimits": {"maxFileSize": 3145728}}`})
		doc := `{"schemaVersion": 2, "skill": {"content": "---\nname: big\ndescription: Use when big.\n---\nb\n"}}`
		if code, _, body := s.Do(t, "POST", "/v1/skills", "", doc); code != 201 {
			t.Fatalf("create: %d %s", code, body)
		}
		exact := strings.Repeat("x", 3<<20)
		if code, _, body := s.Do(t, "PUT", "/v1/skills/big/files/data.txt", "", exact, "If-Match", "*", "Content-Type", "text/plain"); code != 200 {
			t.Errorf("a file of exactly storeLimits.maxFileSize (3 MiB): %d %s", code, tail(body, 300))
		}
		// The server answers 413 as soon as the body passes the limit and
		// may close the connection while the client still writes, so the
		// status is read from the server's request log.
		req, err := http.NewRequest("PUT", s.Base+"/v1/skills/big/files/data2.txt", strings.NewReader(exact+"x"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("If-Match", "*")
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 413 {
				t.Errorf("a file one byte over storeLimits.maxFileSize: %d, want 413", resp.StatusCode)
			}
		} else {
			eventually(t, 5*time.Second, "the 413 in the request log", func() bool {
				return strings.Contains(s.Log(), "path=/v1/skills/big/files/data2.txt status=413")
			})
		}
		if _, _, body := s.Do(t, "GET", "/v1/skills/big", "", "", "Accept", "application/json"); strings.Contains(body, "data2.txt") {
			t.Errorf("the refused file was stored")
		}
	})
}
