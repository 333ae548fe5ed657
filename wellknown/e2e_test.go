package wellknown

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/service"
)

// The skills CLIs that e2e/package.json pins, by their folder in
// node_modules: 1.3.9 (the one the brief names) and, under the alias
// skills-v2, 1.5.26, the first line that reads the 0.2.0 index. The
// newest, 1.7.4, is compat/'s ("skills-v3" here). 1.5.26 and 1.7.4 need
// Node >= 22.20 (their engines field; 1.3.9 needs >= 18), so every one
// runs on compat/'s pinned Node (testutil.CompatBin), not the machine's.
var installers = map[string]string{"skills": "1.3.9", "skills-v2": "1.5.26"}

// installerVersion is the version of each installer the test runs.
var installerVersion = map[string]string{"skills": "1.3.9", "skills-v2": "1.5.26", "skills-v3": "1.7.4"}

// e2eSkills is the skill the installer fetches: text at several depths, an
// executable script, a binary file and a text file with a byte order mark,
// plus a second skill it must leave alone.
func e2eSkills() map[string]file {
	return map[string]file{
		"toolkit/SKILL.md":                 {md("toolkit", "A multi-file skill for the installer test."), 0o644},
		"toolkit/references/guide.md":      {"# Guide\n\nUnicode: héllo wörld ✓\n", 0o644},
		"toolkit/references/deep/more.txt": {"line 1\r\nline 2\n", 0o644},
		"toolkit/scripts/run.sh":           {"#!/bin/sh\necho ran \"$@\"\n", 0o755},
		"toolkit/assets/template.json":     {"{\"x\": 1}\n", 0o644},
		"toolkit/assets/logo.png":          {string(pngBytes), 0o644},
		"toolkit/assets/bom.txt":           {"\xef\xbb\xbfstarts with a BOM\n", 0o644},
		"other/SKILL.md":                   {md("other", "Not installed."), 0o644},
	}
}

// TestSkillsInstallerE2E installs a multi-file skill from this handler with
// the real `skills` CLI (pinned in e2e/package.json) and compares what it
// wrote with the source, from the global mount and from an agent's.
//
// skills@1.5.26 and skills@1.7.4 read /.well-known/agent-skills/index.json
// (0.2.0) first: they download the archive, check its sha256 digest and
// unpack it, so every file arrives byte-identical. Their tar reader ignores
// modes, so executable bits are lost, as with 1.3.9: every index warns
// (executable-dropped), and the test checks both that the bit is lost and
// that the index the installer read said so.
//
// skills@1.3.9 reads only the 0.1.0 index (/.well-known/skills/index.json),
// fetches BASE/.well-known/skills/NAME/FILE for each listed file, decodes
// every response as UTF-8 text and writes it back as UTF-8 with the default
// file mode. So text files arrive byte-identical; a file that is not UTF-8
// (the PNG) has each invalid sequence replaced by U+FFFD, a leading byte
// order mark is dropped, and no file keeps its executable bit. The server
// cannot change that (it is the client's decoding), so the test checks those
// files against exactly that behaviour and logs it, and checks that the
// index warns about them.
func TestSkillsInstallerE2E(t *testing.T) {
	bin := testutil.CompatBin(t) // skips without npm, fails under CI
	node := filepath.Join(bin, "node")
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatal(err)
	}
	clis := map[string]string{"skills-v3": filepath.Join(bin, "..", "skills", "bin", "cli.mjs")}
	if b, err := os.ReadFile(filepath.Join(bin, "..", "skills", "package.json")); err != nil || !strings.Contains(string(b), `"version": "1.7.4"`) {
		t.Fatalf("compat/ does not hold skills 1.7.4: %v", err)
	}
	dir, err := filepath.Abs("e2e")
	if err != nil {
		t.Fatal(err)
	}
	if !installed(dir) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
		if !installed(dir) {
			t.Fatalf("npm ci did not install %v", installers)
		}
	}

	root := t.TempDir()
	writeTree(t, root, e2eSkills())
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{
		{AgentID: "coder", Skills: []catalog.SourceSpec{{Root: root, Available: []string{"toolkit"}}}},
		{AgentID: "writer", Skills: []catalog.SourceSpec{{Root: root, Available: []string{"other"}}}},
	}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{})
	defer svc.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var requests []string
	// Handlers made per request, as a router might: the cache is shared.
	m := http.NewServeMux()
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { Handler(svc, catalog.GlobalID).ServeHTTP(w, r) })
	m.HandleFunc("/agents/{id}/", func(w http.ResponseWriter, r *http.Request) { Handler(svc, r.PathValue("id")).ServeHTTP(w, r) })
	srv := httptest.NewUnstartedServer(withPrincipal(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests = append(requests, r.URL.Path)
		mu.Unlock()
		m.ServeHTTP(w, r)
	})))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()

	for _, c := range []struct {
		name, pkg, url string
		args           []string
		// fetched: the paths the installer must ask for, in any order.
		fetched []string
		// text: files may arrive as their UTF-8 text decoding.
		text bool
	}{
		// The global catalog has two skills: --skill picks one.
		{"0.1.0/global", "skills", srv.URL + "/", []string{"--skill", "toolkit"}, []string{
			"/.well-known/skills/index.json", "/.well-known/skills/toolkit/SKILL.md",
			"/.well-known/skills/toolkit/scripts/run.sh", "/.well-known/skills/toolkit/assets/logo.png",
		}, true},
		// An agent mount with one skill: the installer takes it unasked.
		{"0.1.0/agent", "skills", srv.URL + "/agents/coder/", nil, []string{
			"/agents/coder/.well-known/skills/index.json", "/agents/coder/.well-known/skills/toolkit/SKILL.md",
			"/agents/coder/.well-known/skills/toolkit/assets/logo.png",
		}, true},
		{"0.2.0/global", "skills-v2", srv.URL + "/", []string{"--skill", "toolkit"}, []string{
			"/.well-known/agent-skills/index.json", "/.well-known/agent-skills/toolkit.tar.gz",
		}, false},
		{"0.2.0/agent", "skills-v2", srv.URL + "/agents/coder/", nil, []string{
			"/agents/coder/.well-known/agent-skills/index.json", "/agents/coder/.well-known/agent-skills/toolkit.tar.gz",
		}, false},
		{"0.2.0/global/1.7.4", "skills-v3", srv.URL + "/", []string{"--skill", "toolkit"}, []string{
			"/.well-known/agent-skills/index.json", "/.well-known/agent-skills/toolkit.tar.gz",
		}, false},
		{"0.2.0/agent/1.7.4", "skills-v3", srv.URL + "/agents/coder/", nil, []string{
			"/agents/coder/.well-known/agent-skills/index.json", "/agents/coder/.well-known/agent-skills/toolkit.tar.gz",
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			mu.Lock()
			requests = nil
			mu.Unlock()
			cli := clis[c.pkg]
			if cli == "" {
				cli = filepath.Join(dir, "node_modules", c.pkg, "bin", "cli.mjs")
			}
			work := runInstaller(t, node, cli, dir, c.url, c.args...)
			mu.Lock()
			seen := append([]string(nil), requests...)
			mu.Unlock()
			t.Logf("requests: %s", strings.Join(seen, ", "))
			// Installers probe every index location they know (1.5.26
			// also the host's root ones); everything else must come from
			// the mount and index that were found.
			prefix := c.fetched[0][:strings.LastIndex(c.fetched[0], "/")+1]
			for _, p := range seen {
				if !strings.HasSuffix(p, "/index.json") && !strings.HasPrefix(p, prefix) {
					t.Errorf("request %s outside %s", p, prefix)
				}
			}
			for _, p := range c.fetched {
				if !slices.Contains(seen, p) {
					t.Errorf("the installer did not fetch %s", p)
				}
			}
			dropped := compareInstalled(t, filepath.Join(work, ".agents", "skills", "toolkit"), filepath.Join(root, "toolkit"), installerVersion[c.pkg], c.text)
			if !slices.Equal(dropped, []string{"scripts/run.sh"}) {
				t.Errorf("skills@%s dropped the executable bit of %v; the index's %s warning says every installer drops it of scripts/run.sh", installerVersion[c.pkg], dropped, WarnExecutable)
			}
			if _, err := os.Stat(filepath.Join(work, ".agents", "skills", "other")); !os.IsNotExist(err) {
				t.Errorf("the skill not asked for was installed (%v)", err)
			}
		})
	}

	// What the installers cannot keep is announced in the index they read.
	for index, want := range map[string]string{
		"skills":       "toolkit:" + WarnLegacyNotText + ",toolkit:" + WarnLegacyBOM + ",toolkit:" + WarnExecutable,
		"agent-skills": "toolkit:" + WarnExecutable,
	} {
		var idx v1Index
		if err := json.Unmarshal(get(t, srv.URL+"/agents/coder/.well-known/"+index+"/index.json").body, &idx); err != nil {
			t.Fatal(err)
		}
		var codes []string
		for _, w := range idx.Warnings {
			codes = append(codes, w.Skill+":"+w.Code)
		}
		if got := strings.Join(codes, ","); got != want {
			t.Errorf("%s index warnings %s, want %s", index, got, want)
		}
	}
}

// knownBlocked are the non-loopback fetches skills@1.3.9 makes for a
// well-known install from 127.0.0.1: before sending install telemetry it
// asks GitHub whether the "repository" is private, and for a host of
// 127.0.0.1 its source identifier is "0/1". Telemetry is off, so the
// answer (a failure, here) changes nothing.
var knownBlocked = map[string]bool{"https://api.github.com/repos/0/1": true}

// runInstaller runs `skills add URL ARGS... --agent amp -y` in a new working
// folder and returns it. A project install for a universal agent (amp,
// whose folder is .agents/skills) makes the canonical copy the only copy:
// WORK/.agents/skills/NAME. -y answers every prompt (scope: project;
// method: symlink, a no-op here). HOME and XDG_CONFIG_HOME are empty
// folders, so no agent is detected and nothing is written outside the
// test's folders. Telemetry is off (DO_NOT_TRACK, DISABLE_TELEMETRY), and
// no-network.mjs makes every fetch that is not loopback fail.
func runInstaller(t *testing.T, node, cli, dir, url string, args ...string) string {
	t.Helper()
	work, home := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv := append([]string{"--import", "file://" + filepath.ToSlash(filepath.Join(dir, "no-network.mjs")), cli, "add", url}, args...)
	argv = append(argv, "--agent", "amp", "-y")
	cmd := exec.CommandContext(ctx, node, argv...)
	cmd.Dir = work
	cmd.Env = append(cleanEnv(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"DO_NOT_TRACK=1", "DISABLE_TELEMETRY=1", "NO_COLOR=1", "FORCE_COLOR=0", "NODE_DISABLE_COMPILE_CACHE=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("skills add %s %s:\n%s", url, strings.Join(args, " "), stdout.String())
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if u, ok := strings.CutPrefix(line, "loadout-e2e: blocked fetch "); ok {
			if knownBlocked[u] {
				t.Logf("blocked, as expected: %s", u)
			} else {
				t.Errorf("the installer tried the network beyond loopback: %s", u)
			}
		} else if line != "" {
			t.Logf("stderr: %s", line)
		}
	}
	if err != nil {
		t.Fatalf("skills add: %v", err)
	}
	_ = filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Logf("written under HOME: %s", strings.TrimPrefix(p, home))
		}
		return nil
	})
	return work
}

// compareInstalled checks every file of the source skill against what the
// installer wrote: byte-identical, or exactly what decoding as UTF-8 text
// (WHATWG, as fetch's Response.text does: BOM dropped, each maximal
// ill-formed subsequence replaced by U+FFFD) makes of it, which is logged.
//
// It returns the files that are executable in the source and were not
// installed executable.
func compareInstalled(t *testing.T, installedDir, sourceDir, version string, text bool) (dropped []string) {
	t.Helper()
	got := sourceFiles(t, installedDir)
	want := sourceFiles(t, sourceDir)
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("installed %s, which the skill does not have", p)
		}
	}
	for p, w := range want {
		g, ok := got[p]
		if !ok {
			t.Errorf("%s was not installed", p)
			continue
		}
		switch {
		case bytes.Equal(g.data, w.data):
		case text && bytes.Equal(g.data, decodeText(w.data)):
			t.Logf("%s: installed as its UTF-8 text decoding (%d bytes for %d): skills@%s reads every file with Response.text()", p, len(g.data), len(w.data), version)
		default:
			t.Errorf("%s: installed bytes differ from the source (%d vs %d bytes)", p, len(g.data), len(w.data))
		}
		if w.mode&0o111 != 0 && g.mode&0o111 == 0 {
			t.Logf("%s: executable in the source, installed as %o: skills@%s writes files with the default mode", p, g.mode, version)
			dropped = append(dropped, p)
		} else if w.mode&0o111 == 0 && g.mode&0o111 != 0 {
			t.Errorf("%s: installed executable (%o), the source is not", p, g.mode)
		}
	}
	slices.Sort(dropped)
	return dropped
}

// decodeText is the WHATWG UTF-8 decode (TextDecoder, Response.text)
// followed by UTF-8 encoding.
func decodeText(b []byte) []byte {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		if r, n := utf8.DecodeRune(b[i:]); r != utf8.RuneError || n > 1 {
			out = append(out, b[i:i+n]...)
			i += n
			continue
		}
		// An ill-formed sequence: one U+FFFD for its maximal subpart, the
		// lead byte plus the continuation bytes that could still belong.
		c := b[i]
		need, lo, hi := 0, byte(0x80), byte(0xbf)
		switch {
		case c >= 0xc2 && c <= 0xdf:
			need = 1
		case c == 0xe0:
			need, lo = 2, 0xa0
		case c >= 0xe1 && c <= 0xec, c == 0xee, c == 0xef:
			need = 2
		case c == 0xed:
			need, hi = 2, 0x9f
		case c == 0xf0:
			need, lo = 3, 0x90
		case c >= 0xf1 && c <= 0xf3:
			need = 3
		case c == 0xf4:
			need, hi = 3, 0x8f
		}
		j := i + 1
		for k := 0; k < need && j < len(b); k++ {
			if b[j] < lo || b[j] > hi {
				break
			}
			lo, hi = 0x80, 0xbf
			j++
		}
		out = append(out, "\uFFFD"...)
		i = j
	}
	return out
}

// installed reports whether e2e/node_modules holds the pinned installers.
func installed(dir string) bool {
	for pkg, version := range installers {
		b, err := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
		if err != nil {
			return false
		}
		var p struct{ Version string }
		if json.Unmarshal(b, &p) != nil || p.Version != version {
			return false
		}
	}
	return true
}

// cleanEnv is the environment without anything that could point the
// installer elsewhere (tokens, proxies, its own settings).
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME", k == "XDG_CONFIG_HOME", k == "CODEX_HOME", k == "CLAUDE_CONFIG_DIR",
			k == "GITHUB_TOKEN", k == "GH_TOKEN", k == "INSTALL_INTERNAL_SKILLS", k == "SKILLS_API_URL",
			k == "NODE_OPTIONS", strings.HasSuffix(strings.ToLower(k), "_proxy"):
			continue
		}
		out = append(out, kv)
	}
	return out
}
