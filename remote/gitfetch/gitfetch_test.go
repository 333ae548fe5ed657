package gitfetch

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/remote"
	"github.com/loadout/loadout/skill"
)

// transports are the ways a test repository is read.
func transports(fx *fixture) map[string]string {
	return map[string]string{
		"path": fx.bare,
		"file": "file://" + fx.bare,
		"http": fx.serve("", false),
	}
}

func mustNew(t testing.TB, spec remote.Spec) *Fetcher {
	t.Helper()
	if spec.ID == "" {
		spec.ID = "test"
	}
	f, err := New(spec)
	if err != nil {
		t.Fatalf("New(%+v): %v", spec, err)
	}
	return f
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want %s", code)
	}
	if got := remote.CodeOf(err); got != code {
		t.Fatalf("code %s, want %s: %v", got, code, err)
	}
	t.Logf("%s: %v", code, err)
}

// tree lists the files under dir as path → content ("->target" for links,
// a trailing " +x" for executables).
func tree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "->" + target
		case fi.Mode().IsRegular():
			s := readFile(t, p)
			if fi.Mode()&0o111 != 0 {
				s += " +x"
			}
			out[rel] = s
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func equalMaps(t testing.TB, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected %s = %q", k, v)
		}
	}
}

func TestRefsAndFiles(t *testing.T) {
	fx := newFixture(t)
	fx.write(map[string]string{
		"skills/pdf/SKILL.md":        "---\nname: pdf\n---\nv1\n",
		"skills/pdf/scripts/run.sh":  "#!/bin/sh\n",
		"skills/docx/SKILL.md":       "---\nname: docx\n---\n",
		"README.md":                  "top\n",
		"skills/pdf/reference/go.md": "->../SKILL.md",
	})
	if err := os.Chmod(filepath.Join(fx.work, "skills/pdf/scripts/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	v1 := fx.commit("v1")
	fx.git(fx.work, "tag", "-a", "-m", "release", "v1")
	fx.git(fx.work, "push", "-q", fx.bare, "refs/tags/v1")
	fx.git(fx.work, "tag", "light")
	fx.git(fx.work, "push", "-q", fx.bare, "refs/tags/light")
	fx.git(fx.work, "checkout", "-q", "-b", "dev")
	fx.write(map[string]string{"skills/pdf/SKILL.md": "---\nname: pdf\n---\ndev\n"})
	dev := fx.commit("dev")
	fx.git(fx.work, "checkout", "-q", "main")

	all := map[string]string{
		"skills/pdf/SKILL.md":        "---\nname: pdf\n---\nv1\n",
		"skills/pdf/scripts/run.sh":  "#!/bin/sh\n +x",
		"skills/docx/SKILL.md":       "---\nname: docx\n---\n",
		"README.md":                  "top\n",
		"skills/pdf/reference/go.md": "->../SKILL.md",
	}
	for name, loc := range transports(fx) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			for _, tc := range []struct{ ref, want string }{
				{"", v1}, {"main", v1}, {"refs/heads/main", v1}, {"v1", v1}, {"light", v1}, {"dev", dev}, {strings.ToUpper(dev), dev},
			} {
				got, err := mustNew(t, remote.Spec{Git: loc, Ref: tc.ref}).Resolve(ctx)
				if err != nil || got != tc.want {
					t.Errorf("Resolve(ref %q) = %q, %v; want %s", tc.ref, got, err, tc.want)
				}
			}
			_, err := mustNew(t, remote.Spec{Git: loc, Ref: "nope"}).Resolve(ctx)
			wantCode(t, err, remote.CodeRef)

			dir := filepath.Join(t.TempDir(), "snap")
			notes, err := mustNew(t, remote.Spec{Git: loc, Ref: "v1"}).Fetch(ctx, v1, dir, remote.DefaultLimits)
			if err != nil || len(notes) != 0 {
				t.Fatalf("Fetch: %v %v", notes, err)
			}
			equalMaps(t, tree(t, dir), all)

			dir = filepath.Join(t.TempDir(), "snap")
			if _, err := mustNew(t, remote.Spec{Git: loc, Ref: "", Paths: []string{"skills/pdf", "skills/pdf/scripts"}}).Fetch(ctx, v1, dir, remote.DefaultLimits); err != nil {
				t.Fatal(err)
			}
			equalMaps(t, tree(t, dir), map[string]string{
				"skills/pdf/SKILL.md":        all["skills/pdf/SKILL.md"],
				"skills/pdf/scripts/run.sh":  all["skills/pdf/scripts/run.sh"],
				"skills/pdf/reference/go.md": "->../SKILL.md",
			})

			// A commit id as ref: fetched by id.
			dir = filepath.Join(t.TempDir(), "snap")
			if _, err := mustNew(t, remote.Spec{Git: loc, Ref: dev, Paths: []string{"skills/pdf/SKILL.md"}}).Fetch(ctx, dev, dir, remote.DefaultLimits); err != nil {
				t.Fatal(err)
			}
			equalMaps(t, tree(t, dir), map[string]string{"skills/pdf/SKILL.md": "---\nname: pdf\n---\ndev\n"})

			// An absent path is an error naming it.
			_, err = mustNew(t, remote.Spec{Git: loc, Paths: []string{"skills/gone"}}).Fetch(ctx, v1, filepath.Join(t.TempDir(), "snap"), remote.DefaultLimits)
			wantCode(t, err, remote.CodeInvalid)
			if !strings.Contains(err.Error(), `"skills/gone"`) {
				t.Errorf("error does not name the path: %v", err)
			}
		})
	}
}

func TestMovedBranchAndForcePush(t *testing.T) {
	fx := newFixture(t)
	fx.write(map[string]string{"s/SKILL.md": "one\n"})
	a := fx.commit("a")
	fx.write(map[string]string{"s/SKILL.md": "two\n"})
	b := fx.commit("b")
	for name, loc := range transports(fx) {
		t.Run(name, func(t *testing.T) {
			f := mustNew(t, remote.Spec{Git: loc, Ref: "main"})
			if got, err := f.Resolve(context.Background()); err != nil || got != b {
				t.Fatalf("Resolve = %s, %v; want %s", got, err, b)
			}
			dir := filepath.Join(t.TempDir(), "snap")
			if _, err := f.Fetch(context.Background(), a, dir, remote.DefaultLimits); err != nil {
				t.Fatalf("Fetch of the old pin: %v", err)
			}
			if got := readFile(t, filepath.Join(dir, "s/SKILL.md")); got != "one\n" {
				t.Errorf("old pin's file = %q", got)
			}
		})
	}
	// Rewrite main without a or b: the pin is gone.
	fx.git(fx.work, "checkout", "-q", "--orphan", "new")
	fx.write(map[string]string{"s/SKILL.md": "three\n"})
	fx.git(fx.work, "add", "-A")
	fx.git(fx.work, "commit", "-q", "-m", "c")
	fx.git(fx.work, "push", "-q", "--force", fx.bare, "HEAD:refs/heads/main")
	for name, loc := range transports(fx) {
		t.Run("forced/"+name, func(t *testing.T) {
			_, err := mustNew(t, remote.Spec{Git: loc, Ref: "main"}).Fetch(context.Background(), a, filepath.Join(t.TempDir(), "snap"), remote.DefaultLimits)
			wantCode(t, err, remote.CodeRef)
			if !strings.Contains(err.Error(), "loadout sync") || !strings.Contains(err.Error(), a) {
				t.Errorf("error does not say the pin is gone and what to run: %v", err)
			}
		})
	}
}

func TestSymlinksAndSubmodules(t *testing.T) {
	fx := newFixture(t)
	fx.write(map[string]string{
		"skills/a/SKILL.md":    "a\n",
		"skills/a/shared.md":   "->../../shared/x.md",
		"shared/x.md":          "x\n",
		"skills/a/etc":         "->../../../etc/passwd",
		"skills/a/abs":         "->/etc/passwd",
		"dot":                  "->.",
		"skills/a/through":     "->../../dot/../outside", // lexically inside, leaves through "dot"
		"skills/a/missing":     "->nothing-here.md",
		"skills/a/selected.md": "->../../shared/x.md",
	})
	sub := fx.commit("files")
	fx.git(fx.work, "update-index", "--add", "--cacheinfo", "160000,"+sub+",skills/a/vendor")
	fx.git(fx.work, "commit", "-q", "-m", "submodule")
	fx.git(fx.work, "push", "-q", fx.bare, "HEAD:refs/heads/main")
	rev := fx.git(fx.work, "rev-parse", "HEAD")
	for name, loc := range transports(fx) {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "snap")
			notes, err := mustNew(t, remote.Spec{Git: loc}).Fetch(context.Background(), rev, dir, remote.DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			equalMaps(t, tree(t, dir), map[string]string{
				"skills/a/SKILL.md":    "a\n",
				"skills/a/shared.md":   "->../../shared/x.md",
				"skills/a/selected.md": "->../../shared/x.md",
				"shared/x.md":          "x\n",
				"dot":                  "->.",
			})
			joined := strings.Join(notes, "\n")
			for _, want := range []string{"skills/a/etc", "skills/a/abs", "skills/a/through", "skills/a/missing", "submodule skills/a/vendor"} {
				if !strings.Contains(joined, want) {
					t.Errorf("no note about %s in:\n%s", want, joined)
				}
			}
			if len(notes) != 5 {
				t.Errorf("%d notes, want 5:\n%s", len(notes), joined)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	fx := newFixture(t)
	big := make([]byte, 16<<20)
	rand.Read(big)
	fx.write(map[string]string{"s/SKILL.md": "s\n", "s/b.md": "bb\n", "s/c.md": "cc\n"})
	small := fx.commit("small")
	ctx := context.Background()
	locs := transports(fx)
	for name, loc := range locs {
		t.Run(name, func(t *testing.T) {
			f := mustNew(t, remote.Spec{Git: loc, Ref: "main"})
			_, err := f.Fetch(ctx, small, filepath.Join(t.TempDir(), "snap"), remote.Limits{MaxFiles: 2})
			wantCode(t, err, remote.CodeLimit)
			_, err = f.Fetch(ctx, small, filepath.Join(t.TempDir(), "snap"), remote.Limits{MaxBytes: 7})
			wantCode(t, err, remote.CodeLimit)
			if _, err := f.Fetch(ctx, small, filepath.Join(t.TempDir(), "snap"), remote.Limits{MaxFiles: 3, MaxBytes: 8}); err != nil {
				t.Errorf("at the limits: %v", err)
			}
		})
	}
	if err := os.WriteFile(filepath.Join(fx.work, "s/big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	withBig := fx.commit("big")
	for name, loc := range locs {
		t.Run(name, func(t *testing.T) {
			f := mustNew(t, remote.Spec{Git: loc, Ref: "main"})
			dir := filepath.Join(t.TempDir(), "snap")
			_, err := f.Fetch(ctx, withBig, dir, remote.Limits{MaxFileBytes: 1 << 20})
			wantCode(t, err, remote.CodeLimit)
			if !strings.Contains(err.Error(), "1048576") || !strings.Contains(err.Error(), "maxFileSize") {
				t.Errorf("error does not name the limit: %v", err)
			}
			if name != "http" && !strings.Contains(err.Error(), "s/big.bin") {
				t.Errorf("error does not name the file: %v", err)
			}
			if _, err := os.Lstat(filepath.Join(dir, "s/big.bin")); err == nil {
				t.Error("the oversized file was written")
			}
			// At the limit exactly, it is fetched.
			if _, err := f.Fetch(ctx, withBig, filepath.Join(t.TempDir(), "snap"), remote.Limits{MaxFileBytes: 16 << 20}); err != nil {
				t.Errorf("a file at the limit: %v", err)
			}
		})
	}
	// Read in place, the oversized blob is not read: the fetch allocates
	// far less than the blob's size.
	t.Run("not read", func(t *testing.T) {
		f := mustNew(t, remote.Spec{Git: fx.bare, Ref: "main", Paths: []string{"s/big.bin"}})
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := f.Fetch(ctx, withBig, filepath.Join(t.TempDir(), "snap"), remote.Limits{MaxFileBytes: 1 << 20})
		runtime.ReadMemStats(&after)
		wantCode(t, err, remote.CodeLimit)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
			t.Errorf("refusing a 16 MiB file allocated %d bytes; it should not read it", alloc)
		}
	})
}

func TestRefusedPaths(t *testing.T) {
	for _, name := range []string{`a\b.md`, "bell\x07.md", "x/y.md", "..", "\u202eevil.md"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "repo.git")
			rev := plumbingRepo(t, dir, []object.TreeEntry{{Name: name, Mode: filemode.Regular}}, map[string]string{name: "x"})
			_, err := mustNew(t, remote.Spec{Git: dir}).Fetch(context.Background(), rev, filepath.Join(t.TempDir(), "snap"), remote.DefaultLimits)
			wantCode(t, err, remote.CodePath)
		})
	}
	// A name given twice in one tree is refused, not overwritten.
	dir := filepath.Join(t.TempDir(), "repo.git")
	rev := plumbingRepo(t, dir, []object.TreeEntry{{Name: "a.md", Mode: filemode.Regular}, {Name: "a.md", Mode: filemode.Executable}}, map[string]string{"a.md": "x"})
	_, err := mustNew(t, remote.Spec{Git: dir}).Fetch(context.Background(), rev, filepath.Join(t.TempDir(), "snap"), remote.DefaultLimits)
	wantCode(t, err, remote.CodePath)

	// The same tree served over HTTP.
	fx := newFixture(t)
	testutil.Must(t, os.RemoveAll(fx.bare))
	rev = plumbingRepo(t, fx.bare, []object.TreeEntry{{Name: "ok.md", Mode: filemode.Regular}, {Name: "tab\t.md", Mode: filemode.Regular}}, nil)
	_, err = mustNew(t, remote.Spec{Git: fx.serve("", false)}).Fetch(context.Background(), rev, filepath.Join(t.TempDir(), "snap"), remote.DefaultLimits)
	wantCode(t, err, remote.CodePath)
	if !strings.Contains(err.Error(), "control character") {
		t.Errorf("error does not say why: %v", err)
	}
}

func TestFailures(t *testing.T) {
	fx := newFixture(t)
	fx.write(map[string]string{"s/SKILL.md": strings.Repeat("x", 64<<10)})
	for i := range 50 {
		fx.write(map[string]string{"s/f" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + ".md": strings.Repeat(string(rune('a'+i%26)), 4<<10)})
	}
	rev := fx.commit("a")
	ctx := context.Background()

	t.Run("cut", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "snap")
		_, err := mustNew(t, remote.Spec{Git: fx.serve("", true)}).Fetch(ctx, rev, dir, remote.DefaultLimits)
		wantCode(t, err, remote.CodeNetwork)
	})
	t.Run("cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		for name, loc := range transports(fx) {
			f := mustNew(t, remote.Spec{Git: loc, Ref: "main"})
			_, err := f.Fetch(cctx, rev, filepath.Join(t.TempDir(), "snap"), remote.DefaultLimits)
			wantCode(t, err, remote.CodeNetwork)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s: Fetch error is not context.Canceled: %v", name, err)
			}
			if name == "http" {
				_, err := f.Resolve(cctx)
				if !errors.Is(err, context.Canceled) {
					t.Errorf("%s: Resolve error is not context.Canceled: %v", name, err)
				}
			}
		}
	})
	t.Run("not a repository", func(t *testing.T) {
		empty := t.TempDir()
		for _, loc := range []string{empty, "file://" + empty, strings.TrimSuffix(fx.serve("", false), "repo.git") + "none.git", filepath.Join(empty, "absent")} {
			_, err := mustNew(t, remote.Spec{Git: loc}).Resolve(ctx)
			wantCode(t, err, remote.CodeInvalid)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		_, err := mustNew(t, remote.Spec{Git: "http://127.0.0.1:1/repo.git"}).Resolve(ctx)
		wantCode(t, err, remote.CodeNetwork)
	})
	t.Run("bad rev", func(t *testing.T) {
		_, err := mustNew(t, remote.Spec{Git: fx.bare}).Fetch(ctx, "abc", filepath.Join(t.TempDir(), "snap"), remote.DefaultLimits)
		wantCode(t, err, remote.CodeRef)
		_, err = mustNew(t, remote.Spec{Git: fx.bare, Ref: strings.Repeat("ab", 20)}).Fetch(ctx, strings.Repeat("ab", 20), filepath.Join(t.TempDir(), "snap"), remote.DefaultLimits)
		wantCode(t, err, remote.CodeRef)
	})
}

// TestTokenNeverInErrors fetches with a token and with URL userinfo in
// every way that fails, and checks every error's text (and what it wraps).
func TestTokenNeverInErrors(t *testing.T) {
	const token = "s3cr3t-t0ken-value"
	fx := newFixture(t)
	fx.write(map[string]string{"s/SKILL.md": "s\n"})
	rev := fx.commit("a")
	loc := fx.serve(token, false)
	ctx := context.Background()

	f := mustNew(t, remote.Spec{Git: loc, Ref: "main", Token: token})
	if got, err := f.Resolve(ctx); err != nil || got != rev {
		t.Fatalf("with the token: %s, %v", got, err)
	}
	if _, err := f.Fetch(ctx, rev, filepath.Join(t.TempDir(), "snap"), remote.DefaultLimits); err != nil {
		t.Fatalf("with the token: %v", err)
	}

	withUser := strings.Replace(loc, "http://", "http://user:"+token+"-wrong@", 1)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	var errs []error
	check := func(_ any, err error) { errs = append(errs, err) }
	for _, spec := range []remote.Spec{
		{Git: loc, Token: token + "-wrong"},
		{Git: loc},
		{Git: withUser},
		{Git: strings.Replace(withUser, "repo.git", "none.git", 1), Token: token},
		{Git: "http://user:" + token + "@127.0.0.1:1/repo.git", Token: token},
		{Git: loc, Ref: "nope", Token: token},
	} {
		f := mustNew(t, spec)
		check(f.Resolve(ctx))
		check(f.Resolve(cancelled))
		check(f.Fetch(ctx, rev, filepath.Join(t.TempDir(), "snap"), remote.DefaultLimits))
	}
	_, err := New(remote.Spec{Git: "ssh://git:" + token + "@example.com/skills.git", Token: token})
	errs = append(errs, err)
	_, err = New(remote.Spec{Git: "ftp://user:" + token + "@example.com/x"})
	errs = append(errs, err)
	codes := map[string]int{}
	for i, err := range errs {
		if err == nil {
			t.Errorf("case %d: no error", i)
			continue
		}
		codes[remote.CodeOf(err)]++
		for e := err; e != nil; e = errors.Unwrap(e) {
			if strings.Contains(e.Error(), token) {
				t.Errorf("case %d: the token is in the error: %v", i, e)
			}
		}
	}
	if codes[remote.CodeAuth] < 4 {
		t.Errorf("codes %v: want the refused credentials as %s", codes, remote.CodeAuth)
	}
}

func TestNew(t *testing.T) {
	for _, loc := range []string{"", "git@github.com:org/skills.git", "ftp://example.com/x", "https://", "file://host/x"} {
		_, err := New(remote.Spec{Git: loc})
		wantCode(t, err, remote.CodeInvalid)
	}
	for _, spec := range []remote.Spec{
		{Git: "/tmp/x", Token: "t"},
		{Git: "http://example.com/x.git", Token: "t"},
		{Git: "https://example.com/x.git", Paths: []string{"../x"}},
		{Git: "https://example.com/x.git", Paths: []string{"/abs"}},
	} {
		_, err := New(spec)
		wantCode(t, err, remote.CodeInvalid)
	}
	for _, loc := range []string{"https://example.com/org/skills.git", "http://127.0.0.1/x", "ssh://git@example.com/org/skills.git", "file:///srv/x.git", "relative/repo", `C:\repos\x`} {
		if _, err := New(remote.Spec{Git: loc}); err != nil {
			t.Errorf("New(%q): %v", loc, err)
		}
	}
	f := mustNew(t, remote.Spec{Git: "https://example.com/x.git", Paths: []string{"skills/pdf", "skills", "skills/", "other/", "skills/docx"}})
	if !slices.Equal(f.paths, []string{"skills", "other"}) {
		t.Errorf("paths = %q", f.paths)
	}
}

func TestLinkEscapes(t *testing.T) {
	for _, tc := range []struct {
		link, target string
		ok           bool
	}{
		{"a/b", "c", true},
		{"a/b", "../c", true},
		{"a/b", "../../c", false},
		{"a/b", "/etc/passwd", false},
		{"a", ".", true},
		{"a", "..", false},
		{"a/b", "./../c/../../d", false},
		{"a/b", `..\..\x`, false},
		{"a/b", "C:/x", false},
		{"a/b", "", false},
	} {
		if got := LinkEscapes(tc.link, tc.target) == ""; got != tc.ok {
			t.Errorf("LinkEscapes(%q, %q) ok = %v, want %v", tc.link, tc.target, got, tc.ok)
		}
	}
}

func FuzzLinkEscapes(f *testing.F) {
	f.Add("a/b", "../c")
	f.Add("a/b", "../../c")
	f.Add("x", "/etc")
	f.Add("a/b/c", "./../.././../d")
	f.Fuzz(func(t *testing.T, link, target string) {
		if c, err := skill.CleanPath(link); err != nil || c != link {
			return // links are judged at clean paths only
		}
		if LinkEscapes(link, target) != "" {
			return
		}
		// A kept link, put in a folder /root, resolves lexically inside it.
		got := path.Join("/root", path.Dir(link), target)
		if got != "/root" && !strings.HasPrefix(got, "/root/") {
			t.Fatalf("LinkEscapes(%q, %q) kept a link resolving to %s", link, target, got)
		}
		if strings.HasPrefix(target, "/") || strings.Contains(target, `\`) {
			t.Fatalf("kept an absolute or backslashed target %q", target)
		}
	})
}

// TestTwoEntryFiles: SKILL.md and skill.md side by side in one folder of
// the repository refuse the snapshot, naming both; apart (one in a folder
// below) they are fetched.
func TestTwoEntryFiles(t *testing.T) {
	fx := newFixture(t)
	fx.write(map[string]string{"skills/pdf/SKILL.md": "---\nname: pdf\n---\n", "skills/pdf/skill.md": "other\n"})
	both := fx.commit("both")
	fx.write(map[string]string{"skills/pdf/skill.md": "", "skills/pdf/docs/skill.md": "nested\n", "skills/docx/Skill.MD": "---\nname: docx\n---\n"})
	apart := fx.commit("apart")
	for name, loc := range transports(fx) {
		t.Run(name, func(t *testing.T) {
			f := mustNew(t, remote.Spec{Git: loc, Ref: "main", Paths: []string{"skills"}})
			_, err := f.Fetch(context.Background(), both, filepath.Join(t.TempDir(), "snap"), remote.DefaultLimits)
			wantCode(t, err, remote.CodePath)
			if !strings.Contains(err.Error(), `"skills/pdf/SKILL.md"`) || !strings.Contains(err.Error(), `"skills/pdf/skill.md"`) {
				t.Errorf("the error does not name both files: %v", err)
			}
			dir := filepath.Join(t.TempDir(), "snap")
			if _, err := f.Fetch(context.Background(), apart, dir, remote.DefaultLimits); err != nil {
				t.Fatalf("apart: %v", err)
			}
			equalMaps(t, tree(t, dir), map[string]string{
				"skills/pdf/SKILL.md":      "---\nname: pdf\n---\n",
				"skills/pdf/docs/skill.md": "nested\n",
				"skills/docx/Skill.MD":     "---\nname: docx\n---\n",
			})
		})
	}
}

// TestLinkToSiblingFolder: a link that, through another link, resolves
// into a folder beside the snapshot whose name begins with the snapshot's
// (/x/snap-x beside /x/snap) has left the snapshot and is removed.
func TestLinkToSiblingFolder(t *testing.T) {
	fx := newFixture(t)
	// a -> z/snap-x/secret; z -> d/l/..; d/l -> .. (the snapshot's top):
	// each lexically inside, together outside. a is checked first.
	fx.write(map[string]string{"s/SKILL.md": "s\n", "a": "->z/snap-x/secret", "z": "->d/l/..", "d/l": "->.."})
	rev := fx.commit("links")
	base := t.TempDir()
	if err := os.MkdirAll(filepath.Join(base, "snap-x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "snap-x", "secret"), []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "snap")
	notes, err := mustNew(t, remote.Spec{Git: fx.bare, Ref: "main"}).Fetch(context.Background(), rev, dir, remote.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "a")); err == nil {
		t.Errorf("the link into the sibling folder was kept: %v", notes)
	}
	joined := strings.Join(notes, "\n")
	if !strings.Contains(joined, `skipped the symlink a -> "z/snap-x/secret": through other links it leaves the repository`) {
		t.Errorf("notes do not say why a was skipped:\n%s", joined)
	}
}

// TestPinBehindTip: when the branch has moved past the pin, the fetch
// holds the history back to the pin (deepening 16, 256, all), not all of
// it: a large file committed and removed long before the pin does not
// count; one within the fetched history does, and the error names the
// limit. A pin 19 commits back is found.
func TestPinBehindTip(t *testing.T) {
	fx := newFixture(t)
	big := make([]byte, 2<<20)
	rand.Read(big)
	if err := os.MkdirAll(filepath.Join(fx.work, "s"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fx.work, "s/big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	fx.write(map[string]string{"s/SKILL.md": "v0\n"})
	fx.commit("big")
	fx.write(map[string]string{"s/big.bin": ""})
	var revs []string
	for i := range 20 {
		fx.write(map[string]string{"s/SKILL.md": fmt.Sprintf("v%d\n", i+1)})
		revs = append(revs, fx.commit(fmt.Sprint(i+1)))
	}
	loc := fx.serve("", false)
	f := mustNew(t, remote.Spec{Git: loc, Ref: "main"})
	ctx := context.Background()
	small := remote.Limits{MaxFileBytes: 1 << 20}
	dir := filepath.Join(t.TempDir(), "snap")
	if _, err := f.Fetch(ctx, revs[16], dir, small); err != nil {
		t.Fatalf("a pin 3 commits behind, the large file 20 back: %v", err)
	}
	if got := readFile(t, filepath.Join(dir, "s/SKILL.md")); got != "v17\n" {
		t.Errorf("SKILL.md = %q", got)
	}
	_, err := f.Fetch(ctx, revs[0], filepath.Join(t.TempDir(), "snap"), small)
	wantCode(t, err, remote.CodeLimit)
	if !strings.Contains(err.Error(), "remote.maxFileSize") {
		t.Errorf("the error does not name the limit: %v", err)
	}
	dir = filepath.Join(t.TempDir(), "snap")
	if _, err := f.Fetch(ctx, revs[0], dir, remote.DefaultLimits); err != nil {
		t.Fatalf("a pin 19 commits behind: %v", err)
	}
	if got := readFile(t, filepath.Join(dir, "s/SKILL.md")); got != "v1\n" {
		t.Errorf("SKILL.md = %q", got)
	}
}

// TestPackCountsWholeCommit: the pack of the tip is the whole commit, so
// files outside the source's paths count against the limits while it
// streams in; a file removed at the tip does not (the tip is fetched at
// depth 1, without its history).
func TestPackCountsWholeCommit(t *testing.T) {
	fx := newFixture(t)
	big := make([]byte, 2<<20)
	rand.Read(big)
	if err := os.MkdirAll(filepath.Join(fx.work, "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fx.work, "other/big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	fx.write(map[string]string{"s/SKILL.md": "s\n", "other/notes.md": strings.Repeat("n", 90)})
	fx.commit("with big")
	fx.write(map[string]string{"other/big.bin": ""})
	tip := fx.commit("without big")
	loc := fx.serve("", false)
	ctx := context.Background()
	f := mustNew(t, remote.Spec{Git: loc, Ref: "main", Paths: []string{"s"}})
	if _, err := f.Fetch(ctx, tip, filepath.Join(t.TempDir(), "snap"), remote.Limits{MaxFileBytes: 1 << 20}); err != nil {
		t.Errorf("the tip, whose parent held a file over the limit: %v", err)
	}
	// s/SKILL.md is 2 bytes, other/notes.md 90: 92 in the pack.
	_, err := f.Fetch(ctx, tip, filepath.Join(t.TempDir(), "snap"), remote.Limits{MaxBytes: 91})
	wantCode(t, err, remote.CodeLimit)
	if !strings.Contains(err.Error(), "the files of the pack are over 91 bytes") {
		t.Errorf("the error does not say the pack's files are over the total: %v", err)
	}
	if _, err := f.Fetch(ctx, tip, filepath.Join(t.TempDir(), "snap"), remote.Limits{MaxBytes: 92}); err != nil {
		t.Errorf("at the total exactly: %v", err)
	}
}
