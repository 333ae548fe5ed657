package loadout_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The README's quick starts are tested as they are written: a newcomer
// pastes them, so a broken one is a broken first five minutes.
//
// Every fenced block in the README's "## Quick start" section carries a
// marker comment on the line before it:
//
//	<!-- quickstart WORKSPACE MODE [expect="TEXT"]... -->
//
// Blocks of one WORKSPACE run in order in one empty folder of their own.
// MODE is one of:
//   - run: bash runs the block (-e, pipefail); it must exit 0 and its output
//     must hold every expect text;
//   - serve: the block starts a server, which runs in the background (on a
//     free port) until the workspace's next serve block or the test's end;
//   - go: the block is main.go of a module made in the workspace that uses
//     this checkout (what `go mod init` and `go get` would do);
//   - json: the block must be valid JSON (a client's config);
//   - skip: REASON: not run, and the test says why.
//
// Every "7777" in a block is replaced by the workspace's port.
var quickMarker = regexp.MustCompile(`^<!-- quickstart ([a-z][a-z0-9-]*) (run|serve|go|json|skip)(.*?)\s*-->$`)

var (
	expectAttr   = regexp.MustCompile(`expect="([^"]*)"`)
	shellComment = regexp.MustCompile(`\s+#.*$`)
)

// maxReadmeLines is what a newcomer reads in five minutes, over the
// personas' quick starts (author, operator, governance, identity and
// observability, registries, builder); the reference is in docs/.
const maxReadmeLines = 350

func TestReadmeShort(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines; keep it to %d and move reference material to docs/", n, maxReadmeLines)
	}
}

type quickBlock struct {
	line      int // of the block's opening fence, 1-based
	workspace string
	mode      string
	reason    string   // skip
	expect    []string // run, go
	lang      string
	body      string
}

// quickStarts returns the marked blocks of the README's quick-start
// section, and an error for a block there without a marker (it would go
// untested) or a marker without a block.
func quickStarts(readme string) ([]quickBlock, error) {
	lines := strings.Split(readme, "\n")
	var blocks []quickBlock
	in := false
	var pending *quickBlock
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "## ") {
			in = strings.HasPrefix(l, "## Quick start")
			continue
		}
		if !in {
			continue
		}
		if m := quickMarker.FindStringSubmatch(l); m != nil {
			if pending != nil {
				return nil, fmt.Errorf("README.md:%d: a quickstart marker with no fenced block after it", pending.line)
			}
			b := quickBlock{line: i + 1, workspace: m[1], mode: m[2]}
			rest := strings.TrimSpace(m[3])
			if b.mode == "skip" {
				b.reason = strings.TrimSpace(strings.TrimPrefix(rest, ":"))
				if b.reason == "" {
					return nil, fmt.Errorf("README.md:%d: a skipped quick start must say why (<!-- quickstart W skip: REASON -->)", i+1)
				}
			} else {
				for _, e := range expectAttr.FindAllStringSubmatch(rest, -1) {
					b.expect = append(b.expect, e[1])
				}
				if b.mode == "run" && len(b.expect) == 0 {
					return nil, fmt.Errorf("README.md:%d: a run block needs at least one expect=\"…\": the text its output must hold", i+1)
				}
			}
			pending = &b
			continue
		}
		if strings.HasPrefix(l, "<!-- quickstart") {
			return nil, fmt.Errorf("README.md:%d: malformed marker %q; want <!-- quickstart WORKSPACE run|serve|go|json|skip … -->", i+1, l)
		}
		if strings.HasPrefix(l, "```") {
			if pending == nil {
				return nil, fmt.Errorf("README.md:%d: a fenced block in the quick starts with no <!-- quickstart … --> marker on the line before it: every quick start must be tested (or skipped with a reason)", i+1)
			}
			b := *pending
			pending = nil
			b.line = i + 1
			b.lang = strings.TrimPrefix(l, "```")
			var body []string
			for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
				body = append(body, lines[i])
			}
			if i == len(lines) {
				return nil, fmt.Errorf("README.md:%d: unclosed fence", b.line)
			}
			b.body = strings.Join(body, "\n") + "\n"
			blocks = append(blocks, b)
			continue
		}
		if pending != nil && strings.TrimSpace(l) != "" {
			return nil, fmt.Errorf("README.md:%d: text between a quickstart marker and its block", i+1)
		}
	}
	if pending != nil {
		return nil, fmt.Errorf("README.md:%d: a quickstart marker with no fenced block after it", pending.line)
	}
	return blocks, nil
}

// TestReadmeQuickStartsParse holds the marker rules on small READMEs, so
// a block can neither slip out of the test nor pass without a check.
func TestReadmeQuickStartsParse(t *testing.T) {
	ok := "## Quick start\n\n<!-- quickstart a run expect=\"x\" -->\n```sh\necho x\n```\n\n## Next\n\n```sh\nnot a quick start\n```\n"
	blocks, err := quickStarts(ok)
	if err != nil || len(blocks) != 1 || blocks[0].body != "echo x\n" || blocks[0].expect[0] != "x" {
		t.Fatalf("got %+v, %v", blocks, err)
	}
	for name, bad := range map[string]string{
		"unmarked block":     "## Quick start\n\n```sh\necho x\n```\n",
		"run without expect": "## Quick start\n\n<!-- quickstart a run -->\n```sh\necho x\n```\n",
		"skip without why":   "## Quick start\n\n<!-- quickstart a skip -->\n```sh\necho x\n```\n",
		"marker alone":       "## Quick start\n\n<!-- quickstart a run expect=\"x\" -->\n\n## Next\n",
		"unknown mode":       "## Quick start\n\n<!-- quickstart a walk -->\n```sh\necho x\n```\n",
		"text in between":    "## Quick start\n\n<!-- quickstart a run expect=\"x\" -->\nhello\n```sh\necho x\n```\n",
	} {
		if _, err := quickStarts(bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestReadmeQuickStarts runs every quick start of README.md against the
// real binary, built once.
func TestReadmeQuickStarts(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := quickStarts(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) == 0 {
		t.Fatal(`README.md has no quick starts: a "## Quick start" section with marked blocks`)
	}
	for _, tool := range []string{"bash", "curl", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("the quick starts need %s, which is not on PATH", tool)
			}
			t.Skipf("the quick starts need %s, which is not on PATH (under CI this fails)", tool)
		}
	}
	repo, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "loadout"), "./cmd/loadout")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/loadout: %v\n%s", err, out)
	}
	goEnv := func(name string) string {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		return strings.TrimSpace(string(out))
	}
	home := filepath.Join(tmp, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	// A newcomer's shell: loadout on PATH, no loadout settings of ours, a
	// home and caches of its own; Go's caches stay shared (a cold build
	// cache would only cost time) and Go never reaches the network.
	env := []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"LANG=C.UTF-8",
		"GOCACHE=" + goEnv("GOCACHE"),
		"GOMODCACHE=" + goEnv("GOMODCACHE"),
		"GOPATH=" + goEnv("GOPATH"),
		"GOPROXY=off",
		"GOSUMDB=off",
		"GOTOOLCHAIN=local",
		"GOFLAGS=",
	}
	for _, k := range []string{"TMPDIR", "GOROOT"} {
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}

	type workspace struct {
		dir    string
		port   string
		server *exec.Cmd
		done   chan struct{} // closed when the server has exited
		log    *os.File
	}
	spaces := map[string]*workspace{}
	stop := func(w *workspace) {
		if w.server == nil {
			return
		}
		syscall.Kill(-w.server.Process.Pid, syscall.SIGTERM)
		select {
		case <-w.done:
		case <-time.After(20 * time.Second):
			syscall.Kill(-w.server.Process.Pid, syscall.SIGKILL)
			<-w.done
		}
		w.server = nil
		w.log.Close()
	}
	t.Cleanup(func() {
		for _, w := range spaces {
			stop(w)
		}
	})

	for _, b := range blocks {
		where := fmt.Sprintf("README.md:%d (%s, %s)", b.line, b.workspace, b.mode)
		if b.mode == "skip" {
			t.Logf("%s: not run: %s", where, b.reason)
			continue
		}
		if b.mode == "json" {
			if !json.Valid([]byte(b.body)) {
				t.Errorf("%s: not valid JSON:\n%s", where, b.body)
			}
			continue
		}
		w := spaces[b.workspace]
		if w == nil {
			w = &workspace{dir: filepath.Join(tmp, "ws-"+b.workspace), port: freePort(t)}
			if err := os.MkdirAll(w.dir, 0o755); err != nil {
				t.Fatal(err)
			}
			spaces[b.workspace] = w
		}
		body := strings.ReplaceAll(b.body, "7777", w.port)
		switch b.mode {
		case "serve":
			stop(w)
			cmd := strings.TrimSpace(body)
			if strings.Contains(cmd, "\n") {
				t.Fatalf("%s: a serve block holds one command", where)
			}
			cmd = shellComment.ReplaceAllString(cmd, "") // --addr goes before it
			if !strings.Contains(cmd, "--addr") {
				cmd += " --addr 127.0.0.1:" + w.port
			}
			logf, err := os.Create(filepath.Join(tmp, fmt.Sprintf("serve-%s-%d.log", b.workspace, b.line)))
			if err != nil {
				t.Fatal(err)
			}
			c := exec.Command("bash", "-c", "exec "+cmd)
			c.Dir, c.Env, c.Stdout, c.Stderr = w.dir, env, logf, logf
			c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := c.Start(); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			w.server, w.log, w.done = c, logf, make(chan struct{})
			go func(done chan struct{}) { c.Wait(); close(done) }(w.done)
			if err := waitHealthy(w.done, w.port, 2*time.Minute); err != nil {
				out, _ := os.ReadFile(logf.Name())
				t.Fatalf("%s: `%s` did not start serving: %v\n%s", where, cmd, err, out)
			}
		case "go":
			if err := goModule(w.dir, repo, b.body, env); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
		case "run":
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			c := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", body)
			c.Dir, c.Env = w.dir, env
			out, err := c.CombinedOutput()
			cancel()
			if err != nil {
				t.Errorf("%s: exit: %v\n--- block ---\n%s--- output ---\n%s", where, err, body, out)
				continue
			}
			for _, e := range b.expect {
				if !strings.Contains(string(out), e) {
					t.Errorf("%s: the output lacks %q\n--- block ---\n%s--- output ---\n%s", where, e, body, out)
				}
			}
		}
	}
}

// goModule makes dir a module whose main.go is src and which uses the
// checkout at repo for github.com/loadout/loadout: what `go mod init` and
// `go get github.com/loadout/loadout` do, without the network.
func goModule(dir, repo, src string, env []string) error {
	goVersion := "1.26.8"
	if mod, err := os.ReadFile(filepath.Join(repo, "go.mod")); err == nil {
		sc := bufio.NewScanner(strings.NewReader(string(mod)))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "go "); ok {
				goVersion = strings.TrimSpace(v)
			}
		}
	}
	gomod := fmt.Sprintf("module example.com/writer\n\ngo %s\n\nrequire github.com/loadout/loadout v0.0.0\n\nreplace github.com/loadout/loadout => %s\n", goVersion, repo)
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum, "main.go": []byte(src)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	c := exec.Command("go", "mod", "tidy")
	c.Dir, c.Env = dir, env
	if out, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("go mod tidy: %v\n%s", err, out)
	}
	return nil
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// waitHealthy waits until the server answers /healthz, or fails when it
// exits first.
func waitHealthy(exited <-chan struct{}, port string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	client := &http.Client{Timeout: 2 * time.Second}
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("the server exited")
		default:
		}
		resp, err := client.Get("http://127.0.0.1:" + port + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("no answer on /healthz within %s", limit)
}

// docFiles are README.md and every Markdown page under docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir("docs", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var (
	mdLink     = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
	mdHeading  = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	slugDrop   = regexp.MustCompile(`[^\p{L}\p{N}\s_-]`)
	inlineLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// proseLines are a Markdown file's lines outside fenced blocks, with code
// spans blanked, and the line number of each.
func proseLines(text string) (lines []string, nums []int) {
	fence := false
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		lines = append(lines, codeSpan.ReplaceAllString(l, "``"))
		nums = append(nums, i+1)
	}
	return lines, nums
}

// anchors are the heading ids GitHub gives a Markdown file: lower case,
// punctuation dropped, spaces as hyphens, repeats numbered.
func anchors(text string) map[string]bool {
	ids := map[string]bool{}
	seen := map[string]int{}
	fence := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			continue
		}
		m := mdHeading.FindStringSubmatch(l)
		if fence || m == nil {
			continue
		}
		h := inlineLink.ReplaceAllString(m[1], "$1")
		id := strings.ReplaceAll(slugDrop.ReplaceAllString(strings.ToLower(h), ""), " ", "-")
		if n := seen[id]; n > 0 {
			ids[fmt.Sprintf("%s-%d", id, n)] = true
		} else {
			ids[id] = true
		}
		seen[id]++
	}
	return ids
}

// TestDocLinks: every relative link and image in README.md and docs/
// names a file of the repository, and every #anchor a heading of its page.
func TestDocLinks(t *testing.T) {
	cache := map[string]map[string]bool{}
	heads := func(path string) map[string]bool {
		if a, ok := cache[path]; ok {
			return a
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cache[path] = anchors(string(data))
		return cache[path]
	}
	checked := 0
	for _, f := range docFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines, nums := proseLines(string(data))
		for i, l := range lines {
			for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				path, frag, _ := strings.Cut(target, "#")
				file := f
				if path != "" {
					file = filepath.Join(filepath.Dir(f), filepath.FromSlash(path))
					fi, err := os.Stat(file)
					if err != nil {
						t.Errorf("%s:%d: link %q: no such file %s", f, nums[i], target, file)
						continue
					}
					if fi.IsDir() {
						if frag != "" {
							t.Errorf("%s:%d: link %q: an anchor in a folder", f, nums[i], target)
						}
						continue
					}
				}
				if frag != "" && strings.HasSuffix(file, ".md") && !heads(file)[frag] {
					t.Errorf("%s:%d: link %q: %s has no heading with the id %q", f, nums[i], target, file, frag)
				}
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d relative links found: is the link pattern still right?", checked)
	}
}

// outsideDocs are ways of citing documents that are not in the
// repository (design seeds, issue numbers): a reader cannot follow them.
var outsideDocs = regexp.MustCompile(`(?i)\bseed \d{3}\b|\bseed 00\d|\bthe (design )?seed\b|seed's|\bdesign documents?\b|\bissue \d+|\bissue #\d+|\bthe issue's`)

// TestDocsCiteOnlyTheRepository: README.md, docs/ and the Go sources'
// comments cite nothing a reader cannot open.
func TestDocsCiteOnlyTheRepository(t *testing.T) {
	files := docFiles(t)
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != "." || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		// This file holds the pattern and its own examples; compat's
		// catalog names a file "issue #1.md" on purpose (an odd name).
		if !d.IsDir() && strings.HasSuffix(p, ".go") && p != "readme_test.go" && p != filepath.Join("compat", "catalog_test.go") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(data), "\n") {
			if m := outsideDocs.FindString(l); m != "" {
				t.Errorf("%s:%d: %q cites a document that is not in the repository; say what it says instead", f, i+1, m)
			}
		}
	}
	if !outsideDocs.MatchString("as seed 000 §5.1 sets out") || !outsideDocs.MatchString("(issue 14)") || outsideDocs.MatchString("a seeded sample (random seed 1)") {
		t.Error("the pattern no longer tells a cited document from a random seed")
	}
}

// TestDocsMap: docs/README.md, the map, links every page of docs/.
func TestDocsMap(t *testing.T) {
	data, err := os.ReadFile("docs/README.md")
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
		path, _, _ := strings.Cut(m[1], "#")
		linked[filepath.Clean(filepath.Join("docs", path))] = true
	}
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		if p != filepath.Join("docs", "README.md") && !linked[p] {
			t.Errorf("docs/README.md does not link %s: add it to the map", p)
		}
	}
}
