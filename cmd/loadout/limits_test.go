package main

// The resource-limit suite: attacks from the hardening review, each run
// against the real `loadout serve` binary. Every case asserts two things:
// the server's peak resident memory (VmHWM from /proc) stays under a bound,
// and /healthz keeps answering. Client timeouts here are liveness bounds
// (a hung server fails the test instead of hanging it), not speed targets.

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

// limitsServer starts serve over a folder of ordinary skills plus the store,
// with tight, test-sized limits given as flags.
func limitsServer(t *testing.T, extra ...string) (*running, string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the resource-limit suite reads /proc")
	}
	dir := t.TempDir()
	skills := filepath.Join(dir, "skills")
	for _, name := range []string{"deploy", "lint"} {
		os.MkdirAll(filepath.Join(skills, name, "references"), 0o755)
		os.WriteFile(filepath.Join(skills, name, "SKILL.md"), []byte("---\nname: "+name+"\ndescription: Use when you "+name+".\n---\nBody of "+name+".\n"), 0o644)
		os.WriteFile(filepath.Join(skills, name, "references", "guide.md"), []byte("# Guide\n"), 0o644)
	}
	cfg := filepath.Join(dir, "loadout.json")
	os.WriteFile(cfg, []byte(`{"agents": [{"agentId": "dev", "skills": [{"root": "skills"}, {"store": true}]}]}`), 0o644)
	args := append([]string{"--config", cfg, "--db", filepath.Join(dir, "loadout.db")}, extra...)
	return startServe(t, args...), skills
}

// healthy fails the test unless /healthz answers 200 within a few seconds
// on a fresh connection.
func healthy(t *testing.T, srv *running, when string) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(srv.base + "/healthz")
	if err != nil {
		t.Fatalf("%s: /healthz: %v\n%s", when, err, tail(srv.log(), 2000))
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("%s: /healthz answered %d", when, resp.StatusCode)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// underRSS asserts the server's peak memory is below limit MB.
func underRSS(t *testing.T, srv *running, limitMB int64, what string) {
	t.Helper()
	_, hwm := rssKB(t, srv.cmd.Process.Pid)
	peak := int64(hwm) << 10
	t.Logf("%s: server peak RSS %.1f MB", what, float64(peak)/(1<<20))
	if peak > limitMB<<20 {
		t.Errorf("%s: server peak RSS %.1f MB, bound %d MB", what, float64(peak)/(1<<20), limitMB)
	}
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func TestLimitsAliasBomb(t *testing.T) {
	srv, skills := limitsServer(t)
	bomb := testutil.AliasBomb("bomb", 9, 9)
	if len(bomb) > 600 {
		t.Fatalf("bomb is %d bytes; the attack is a few hundred", len(bomb))
	}
	// 1. Dropped into a watched folder.
	os.MkdirAll(filepath.Join(skills, "bomb"), 0o755)
	os.WriteFile(filepath.Join(skills, "bomb", "SKILL.md"), []byte(bomb), 0o644)
	// 2. Created through the API.
	doc := `{"schemaVersion": 2, "skill": {"name": "bomb2", "content": ` + jsonString(testutil.AliasBomb("bomb2", 9, 9)) + `, "files": []}}`
	code, body := httpDo(t, "POST", srv.base+"/v1/skills", "", strings.NewReader(doc), "Content-Type", "application/json")
	if code < 400 || code >= 500 {
		t.Errorf("POST of an alias bomb: %d %s", code, body)
	}
	// 3. Imported as a zip.
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	f, _ := zw.Create("bomb3/SKILL.md")
	f.Write([]byte(testutil.AliasBomb("bomb3", 9, 9)))
	zw.Close()
	code, body = httpDo(t, "POST", srv.base+"/v1/import", "", &zb, "Content-Type", "application/zip")
	if code < 400 || code >= 500 {
		t.Errorf("zip import of an alias bomb: %d %s", code, body)
	}
	// The folder skill is reported, not expanded.
	eventually(t, 5*time.Second, "the bomb in the folder being diagnosed", func() bool {
		_, body := httpDo(t, "GET", srv.base+"/v1/diagnostics", "", nil)
		return strings.Contains(body, "bomb")
	})
	healthy(t, srv, "after alias bombs")
	underRSS(t, srv, 100, "alias bombs")
}

func TestLimitsHugeNames(t *testing.T) {
	srv, _ := limitsServer(t)
	name := strings.Repeat("a", 100_000)
	c := &http.Client{Timeout: 10 * time.Second}
	for _, path := range []string{
		"/v1/agents/dev/skills/" + name,
		"/v1/agents/dev/skills/" + name + "/files/SKILL.md",
	} {
		for i := 0; i < 4; i++ {
			resp, err := c.Get(srv.base + path)
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
	healthy(t, srv, "after huge names")
	underRSS(t, srv, 100, "huge names")
}

func TestLimitsHugeRangedReads(t *testing.T) {
	srv, skills := limitsServer(t)
	big := filepath.Join(skills, "deploy", "references", "big.bin")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(1 << 30) // sparse: costs no disk
	f.Close()
	t.Cleanup(func() { os.Remove(big) })
	eventually(t, 5*time.Second, "the big file being listed", func() bool {
		_, body := httpDo(t, "GET", srv.base+"/v1/agents/dev/skills/deploy", "", nil, "Accept", "application/json")
		return strings.Contains(body, "big.bin")
	})
	c := &http.Client{Timeout: 20 * time.Second}
	for i := 0; i < 4; i++ {
		url := fmt.Sprintf("%s/v1/agents/dev/skills/deploy/files/references/big.bin?offset=%d&length=100", srv.base, int64(i)<<28)
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("ranged read %d: %d %s", i, resp.StatusCode, tail(string(data), 300))
		}
	}
	// A whole read of a file over the serve-time cap is refused, not loaded.
	resp, err := c.Get(srv.base + "/v1/agents/dev/skills/deploy/files/references/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode < 400 || resp.StatusCode >= 500 {
		t.Errorf("whole read of a 1 GB file: %d", resp.StatusCode)
	}
	healthy(t, srv, "after 1 GB ranged reads")
	underRSS(t, srv, 100, "ranged reads of a 1 GB file")
}

// Without watching, nothing rescans the folder after the swaps, so every
// read meets what changed since the scan. (With watching, a rescan finds
// a linked folder like any skill linked into a root.)
func TestLimitsFIFOAndFolderSwap(t *testing.T) {
	srv, skills := limitsServer(t, "--no-watch")
	// A FIFO swapped in for a listed file after the scan.
	guide := filepath.Join(skills, "lint", "references", "guide.md")
	os.Remove(guide)
	if err := syscall.Mkfifo(guide, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	c := &http.Client{Timeout: 10 * time.Second}
	for _, path := range []string{
		"/v1/agents/dev/skills/lint/files/references/guide.md",
		"/.well-known/agent-skills/index.json",
		"/.well-known/skills/index.json",
	} {
		resp, err := c.Get(srv.base + path)
		if err != nil {
			t.Fatalf("%s with a FIFO in a skill: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.HasSuffix(path, "guide.md") && resp.StatusCode < 400 {
			t.Errorf("reading a FIFO: %d %s", resp.StatusCode, body)
		}
	}
	// The skill folder swapped for a link to a folder holding a secret under
	// the same file name.
	secret := filepath.Join(t.TempDir(), "secret")
	os.MkdirAll(filepath.Join(secret, "references"), 0o755)
	os.WriteFile(filepath.Join(secret, "SKILL.md"), []byte("---\nname: deploy\ndescription: Use when you deploy.\n---\nBody of deploy.\n"), 0o644)
	os.WriteFile(filepath.Join(secret, "references", "guide.md"), []byte("TOP-SECRET\n"), 0o644)
	deploy := filepath.Join(skills, "deploy")
	if err := os.Rename(deploy, deploy+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, deploy); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		for _, path := range []string{
			"/v1/agents/dev/skills/deploy/files/references/guide.md",
			"/.well-known/skills/deploy/references/guide.md",
		} {
			_, body := httpDo(t, "GET", srv.base+path, "", nil)
			if strings.Contains(body, "TOP-SECRET") {
				t.Fatalf("%s served a file through a swapped-in link", path)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	healthy(t, srv, "after FIFO and folder swaps")
}

// A storeLimits.maxFileSize above the default holds for every write path,
// file uploads included (they used to get the store's 1 MiB default).
func TestServeStoreLimitsAboveDefault(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "loadout.json")
	os.WriteFile(cfg, []byte(`{"agents": [{"agentId": "a", "skills": [{"store": true}]}], "storeLimits": {"maxFileSize": 3145728}}`), 0o644)
	srv := startServe(t, "--config", cfg, "--db", filepath.Join(dir, "x.db"), "--no-watch")
	doc := `{"schemaVersion": 2, "skill": {"content": "---\nname: big\ndescription: Use when big.\n---\nb\n"}}`
	if code, body := httpDo(t, "POST", srv.base+"/v1/skills", "", strings.NewReader(doc), "Content-Type", "application/json"); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	data := strings.Repeat("x", 2<<20)
	if code, body := httpDo(t, "PUT", srv.base+"/v1/skills/big/files/data.txt", "", strings.NewReader(data), "If-Match", "*"); code != 200 {
		t.Errorf("a 2 MiB file under storeLimits.maxFileSize 3 MiB: %d %s", code, tail(body, 300))
	}
	if code, _ := httpDo(t, "PUT", srv.base+"/v1/skills/big/files/data2.txt", "", strings.NewReader(data+data), "If-Match", "*"); code != 413 {
		t.Errorf("a 4 MiB file over storeLimits.maxFileSize 3 MiB: %d", code)
	}
}
