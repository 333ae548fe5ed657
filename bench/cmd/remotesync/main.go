//go:build unix

// Command remotesync measures remote git sources: it makes a repository of
// N generated skills (bench/gen's tree, committed with the git binary),
// serves it over HTTP on loopback (git http-backend behind net/http/cgi)
// or as file://, and times, in this process:
//
//   - first: the first sync (resolve, shallow fetch, write the snapshot,
//     scan and digest it, write the lock);
//   - resync: a sync when nothing moved (one ref look-up);
//   - open: a restart's open of the pinned snapshot from the cache (scan
//     and digest check, no network);
//   - moved: a sync after one commit that changes one skill.
//
// and prints the peak RSS (VmHWM) after each step:
//
//	go run ./bench/cmd/remotesync [-n 1000] [-transport http|file]
//
// bench/remote.sh runs it built, for a clean RSS figure.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/loadout/loadout/bench/gen"
	"github.com/loadout/loadout/remote"
	"github.com/loadout/loadout/remote/gitfetch"
	"github.com/loadout/loadout/source"
)

func main() {
	n := flag.Int("n", 1000, "skills in the repository")
	transport := flag.String("transport", "http", "http (git http-backend on loopback) or file")
	flag.Parse()
	if err := run(*n, *transport); err != nil {
		fmt.Fprintln(os.Stderr, "remotesync:", err)
		os.Exit(1)
	}
}

func git(dir string, args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.com",
		"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

func run(n int, transport string) error {
	tmp, err := os.MkdirTemp("", "remotesync")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	work := filepath.Join(tmp, "work")
	if err := gen.Tree(filepath.Join(work, "skills"), n, 1); err != nil {
		return err
	}
	if err := git(work, "init", "-q", "-b", "main"); err != nil {
		return err
	}
	if err := git(work, "add", "-A"); err != nil {
		return err
	}
	if err := git(work, "commit", "-q", "-m", "skills"); err != nil {
		return err
	}
	bare := filepath.Join(tmp, "srv", "skills.git")
	if err := git(tmp, "clone", "-q", "--bare", work, bare); err != nil {
		return err
	}
	url := "file://" + bare
	if transport == "http" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		h := &cgi.Handler{Path: "/usr/lib/git-core/git-http-backend", Env: []string{"GIT_PROJECT_ROOT=" + filepath.Dir(bare), "GIT_HTTP_EXPORT_ALL=1"}}
		go http.Serve(ln, h)
		url = "http://" + ln.Addr().String() + "/skills.git"
	}
	files := 0
	filepath.WalkDir(work, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.Contains(p, "/.git/") {
			files++
		}
		return nil
	})
	fmt.Printf("# %d skills, %d files, served over %s; %s\n", n, files, transport, url)

	spec := remote.Spec{Git: url, Ref: "main", Paths: []string{"skills"}}
	opt := remote.Options{Cache: filepath.Join(tmp, "cache"), LockPath: filepath.Join(tmp, remote.LockName),
		Fetchers: map[string]func(remote.Spec) (remote.Fetcher, error){"git": func(s remote.Spec) (remote.Fetcher, error) { return gitfetch.New(s) }},
		Scan:     source.Options{KeepBodies: true}}
	ctx := context.Background()
	m, err := remote.NewManager([]remote.Spec{spec}, opt)
	if err != nil {
		return err
	}
	step := func(name string, fn func() (remote.Change, error)) error {
		start := time.Now()
		ch, err := fn()
		d := time.Since(start)
		if err == nil {
			err = ch.Err
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		sk, _ := m.Skills(m.Specs()[0].ID)
		fmt.Printf("%-7s %9s  skills=%d moved=%v peak_rss=%s\n", name, d.Round(time.Millisecond), len(sk), ch.Moved, hwm())
		return nil
	}
	if err := step("first", func() (remote.Change, error) { return m.Sync(ctx)[0], nil }); err != nil {
		return err
	}
	if err := step("resync", func() (remote.Change, error) { return m.Sync(ctx)[0], nil }); err != nil {
		return err
	}
	if err := step("open", func() (remote.Change, error) {
		m, err = remote.NewManager([]remote.Spec{spec}, opt)
		if err != nil {
			return remote.Change{}, err
		}
		if d := m.Open(ctx, false); len(d) > 0 {
			return remote.Change{}, fmt.Errorf("%v", d)
		}
		return remote.Change{}, nil
	}); err != nil {
		return err
	}
	// One skill changes upstream.
	var first string
	filepath.WalkDir(filepath.Join(work, "skills"), func(p string, d os.DirEntry, err error) error {
		if err == nil && first == "" && d.Name() == "SKILL.md" {
			first = p
		}
		return nil
	})
	f, err := os.OpenFile(first, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("changing a skill: %w", err)
	}
	f.WriteString("\nOne more line.\n")
	f.Close()
	if err := git(work, "commit", "-q", "-am", "change one"); err != nil {
		return err
	}
	if err := git(work, "push", "-q", bare, "main"); err != nil {
		return err
	}
	return step("moved", func() (remote.Change, error) { return m.Sync(ctx)[0], nil })
}

// hwm is the process's peak resident set (VmHWM).
func hwm() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kb int
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return fmt.Sprintf("%.1fMB", float64(kb)/1024)
		}
	}
	return "?"
}
