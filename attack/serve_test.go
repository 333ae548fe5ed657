package attack

// Attacks of helper "serve": a FIFO in a skill folder against
// the diagnostics (item 7), and folder skills with error-severity safety
// findings (item 18).

import (
	"encoding/json"
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

// getWithin GETs path on a fresh connection and fails the test when no
// answer came within d: a route that blocks fails here instead of hanging
// the suite.
func getWithin(t *testing.T, s *Server, path string, d time.Duration) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: d, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(s.Base + path)
	if err != nil {
		t.Fatalf("GET %s: no answer within %v (%v): it blocked\n%s", path, d, err, tail(s.Log(), 2000))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode, string(body)
}

// TestServeFIFODiagnostics: a skill's listed file swapped for a FIFO
// after the scan (no watch, so the scan keeps listing it). The safety
// scan behind GET /v1/diagnostics and /ui/diagnostics used to open it
// blocking: both hung, and kept hanging after the FIFO was removed and
// the server reloaded, and SIGTERM did not finish. Now both answer at
// once, and again after the reload; the server stops in time (Stop fails
// past 10 s). Serve now checks every skill in the background once it is
// up, so whether the FIFO or the file before it is read depends on which
// comes first: when the FIFO is, the answer names it a named pipe
// (catalog's TestSafetyRefusesFIFO pins that read).
func TestServeFIFODiagnostics(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		skills := DefaultSkills()
		skills["deploy/notes.txt"] = "hello\n"
		s := Start(t, Options{Engine: engine, Skills: skills, Args: []string{"--no-watch"}})
		notes := filepath.Join(s.Dir, "skills", "deploy", "notes.txt")
		testutil.Must(t, os.Remove(notes))
		if err := syscall.Mkfifo(notes, 0o644); err != nil {
			testutil.Unavailable(t, "mkfifo: %v", err)
		}
		code, body := getWithin(t, s, "/v1/diagnostics", 10*time.Second)
		var got struct {
			Diagnostics []struct{ Code, Message, Path string }
		}
		if err := json.Unmarshal([]byte(body), &got); code != http.StatusOK || err != nil {
			t.Fatalf("GET /v1/diagnostics over a FIFO: %d %v %s; want 200 and the diagnostics", code, err, body)
		}
		for _, d := range got.Diagnostics {
			if d.Code == "safety-unread" && strings.Contains(d.Message, "notes.txt") && !strings.Contains(d.Message, "named pipe") {
				t.Errorf("the FIFO was read, and not named a named pipe: %+v", d)
			}
		}
		if code, _ := getWithin(t, s, "/ui/diagnostics", 10*time.Second); code != http.StatusOK {
			t.Errorf("GET /ui/diagnostics over a FIFO: %d; want 200", code)
		}
		// The file read routes refuse it (they did before).
		if code, _, body := s.Do(t, "GET", "/v1/skills/deploy/files/notes.txt", "", ""); code != http.StatusBadRequest || !strings.Contains(body, "not-regular") {
			t.Errorf("GET the FIFO: %d %s; want 400 not-regular", code, body)
		}
		testutil.Must(t, os.Remove(notes))
		if code, _, body := s.Do(t, "POST", "/v1/reload", "", ""); code != http.StatusOK {
			t.Fatalf("POST /v1/reload: %d %s", code, body)
		}
		for _, p := range []string{"/v1/diagnostics", "/ui/diagnostics"} {
			if code, body := getWithin(t, s, p, 10*time.Second); code != http.StatusOK || strings.Contains(body, "named pipe") {
				t.Errorf("GET %s after the FIFO went and a reload: %d; want 200 without it:\n%s", p, code, tail(body, 2000))
			}
		}
		s.Stop(t)
	})
}

// sourcesOf is GET /v1/sources by kind: [errors, warnings, skills].
func sourcesOf(t *testing.T, s *Server, token string) map[string][3]int {
	t.Helper()
	code, _, body := s.Do(t, "GET", "/v1/sources", token, "")
	if code != http.StatusOK {
		t.Fatalf("GET /v1/sources: %d %s", code, body)
	}
	var list struct {
		Sources []struct {
			Kind                     string
			Errors, Warnings, Skills int
		}
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatalf("GET /v1/sources: %v: %s", err, body)
	}
	m := map[string][3]int{}
	for _, x := range list.Sources {
		m[x.Kind] = [3]int{x.Errors, x.Warnings, x.Skills}
	}
	return m
}

// awsKey is an access key id the placeholder rules do not accept.
const awsKey = "AKIAZ7QX3M5KJ2W4PN8R"

// findingSkills are a folder skill with a zero-width character in its
// SKILL.md and one with an AWS key in a script: error findings of the
// default policy. Before, serve logged nothing about them, /v1/sources
// listed no folder, and both were served.
func findingSkills() map[string]string {
	sk := DefaultSkills()
	sk["deploy/SKILL.md"] = "---\nname: deploy\ndescription: Use when you deploy the project.\n---\nRun the de\u200bploy.\n"
	sk["lint/scripts/ship.sh"] = "#!/bin/sh\nAWS_ACCESS_KEY_ID=" + awsKey + " aws s3 ls\n"
	sk["lint/SKILL.md"] = "---\nname: lint\ndescription: Use when you lint the project.\n---\nRun scripts/ship.sh.\n"
	return sk
}

// TestServeFolderFindings: serve logs one line per
// error finding of a folder skill at start, and does not log it again on
// an unrelated change; a finding a change brings is logged then.
// GET /v1/sources counts them on the folder. The key is never logged.
// With "safety": {"gate": ["folder"]} reloaded live, the skills are not
// served: the skill and its file answer 404, and the diagnostics say why.
func TestServeFolderFindings(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		s := Start(t, Options{Engine: engine, Skills: findingSkills()})
		eventually(t, 20*time.Second, "the safety findings logged", func() bool {
			l := s.Log()
			return strings.Contains(l, "code=safety-zero-width") && strings.Contains(l, "code=safety-secret-aws")
		})
		if strings.Contains(s.Log(), awsKey) {
			t.Errorf("the log prints the key")
		}
		if got := sourcesOf(t, s, ""); got["folder"] != [3]int{2, 0, 2} {
			t.Errorf("GET /v1/sources, folder: %v; want 2 errors, 0 warnings, 2 skills", got["folder"])
		}
		// Served, by default: the finding is reported, not gated.
		if code, _, _ := s.Do(t, "GET", "/v1/agents/coder/skills/deploy", "", ""); code != http.StatusOK {
			t.Errorf("ungated: GET deploy: %d, want 200", code)
		}
		// An unrelated change: the findings are not logged again; a new one is.
		WriteFiles(t, filepath.Join(s.Dir, "skills"), map[string]string{
			"lint/references/guide.md": "# Guide to lint\nNow with -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDx3dKx4ZtNQmY0sWm0f7o3qJzq5n0gS0vR9Hn2yq1b3gAAAJgC0u3aAtLt\n-----END OPENSSH PRIVATE KEY-----\n",
		})
		eventually(t, 20*time.Second, "the new finding logged", func() bool {
			return strings.Contains(s.Log(), "code=safety-secret-private-key")
		})
		for _, c := range []string{"code=safety-zero-width", "code=safety-secret-aws", "code=safety-secret-private-key"} {
			if n := strings.Count(s.Log(), c); n != 1 {
				t.Errorf("%s logged %d times, want once:\n%s", c, n, tail(s.Log(), 3000))
			}
		}
		// The gate, reloaded live.
		WriteFiles(t, s.Dir, map[string]string{"loadout.json": `{"agents": [{"agentId": "coder", "skills": [{"root": "skills"}, {"store": true}]}], "safety": {"gate": ["folder"]}}`})
		if code, _, body := s.Do(t, "POST", "/v1/reload", "", ""); code != http.StatusOK {
			t.Fatalf("POST /v1/reload: %d %s", code, body)
		}
		for _, p := range []string{"/v1/agents/coder/skills/deploy", "/v1/agents/coder/skills/lint", "/v1/agents/coder/skills/lint/files/scripts/ship.sh", "/v1/skills/lint/files/scripts/ship.sh"} {
			if code, _, body := s.Do(t, "GET", p, "", ""); code != http.StatusNotFound || strings.Contains(body, awsKey) || strings.Contains(body, "\u200b") {
				t.Errorf("gated: GET %s: %d %s; want 404 without the finding's bytes", p, code, body)
			}
		}
		_, _, diags := s.Do(t, "GET", "/v1/diagnostics", "", "")
		if strings.Count(diags, `"code":"safety-gated"`) != 2 {
			t.Errorf("gated: /v1/diagnostics should say both skills are gated: %s", diags)
		}
		if got := sourcesOf(t, s, ""); got["folder"][0] < 2 || got["folder"][2] != 0 {
			t.Errorf("gated: GET /v1/sources, folder: %v; want the errors and 0 skills served", got["folder"])
		}
	})
}

// TestServePluginGate: a plugin's skill with a secret is served unless
// "safety": {"gate"} names "plugin"; then it is not (404, safety-gated),
// while a folder skill with the same finding is still served (only plugin
// is named), and /v1/sources counts the plugin's error.
func TestServePluginGate(t *testing.T) {
	Engines(t, func(t *testing.T, engine string) {
		sk := DefaultSkills()
		sk["keyed/SKILL.md"] = "---\nname: keyed\ndescription: Use when keyed.\n---\nkey " + awsKey + "\n"
		sk["../plug/plugin.json"] = `{"id": "kp", "name": "KP", "version": "1.0.0", "description": "Keys.", "trust": "self_host_guarded",
  "skills": [{"id": "pkeyed", "name": "pkeyed", "source": {"kind": "directory", "path": "skills/pkeyed"}},
             {"id": "pclean", "name": "pclean", "source": {"kind": "directory", "path": "skills/pclean"}}]}`
		sk["../plug/skills/pkeyed/SKILL.md"] = "---\nname: pkeyed\ndescription: Use when pkeyed.\n---\nkey " + awsKey + "\n"
		sk["../plug/skills/pclean/SKILL.md"] = "---\nname: pclean\ndescription: Use when pclean.\n---\nClean.\n"
		for _, gate := range []string{"", `, "safety": {"gate": ["plugin"]}`} {
			s := Start(t, Options{Engine: engine, Skills: sk,
				Config: `{"agents": [{"agentId": "coder", "skills": [{"root": "skills"}, {"plugin": "kp"}]}], "plugins": ["plug"]` + gate + `}`})
			want := http.StatusOK
			if gate != "" {
				want = http.StatusNotFound
			}
			if code, _, body := s.Do(t, "GET", "/v1/agents/coder/skills/pkeyed", "", ""); code != want || want == http.StatusNotFound && strings.Contains(body, awsKey) {
				t.Errorf("gate %q: GET pkeyed: %d, want %d", gate, code, want)
			}
			for _, name := range []string{"pclean", "keyed"} {
				if code, _, _ := s.Do(t, "GET", "/v1/agents/coder/skills/"+name, "", ""); code != http.StatusOK {
					t.Errorf("gate %q: GET %s: %d, want 200", gate, name, code)
				}
			}
			// Ungated: the finding, over 2 skills; gated: safety-gated and
			// the finding, over the 1 skill served.
			wantSrc := [3]int{1, 0, 2}
			if gate != "" {
				wantSrc = [3]int{2, 0, 1}
			}
			if got := sourcesOf(t, s, ""); got["plugin"] != wantSrc {
				t.Errorf("gate %q: GET /v1/sources, plugin: %v; want %v", gate, got["plugin"], wantSrc)
			}
			s.Stop(t)
		}
	})
}
