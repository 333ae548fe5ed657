package gitfetch

import (
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

const httpBackend = "/usr/lib/git-core/git-http-backend"

// fixture is a working repository (work) pushed to a bare one (bare, under
// root) that the tests read over file://, as a path and over HTTP.
type fixture struct {
	t    testing.TB
	root string // GIT_PROJECT_ROOT: holds repo.git
	work string
	bare string
}

func needGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI must not skip the git tests: install Debian's git")
		}
		t.Skip("the git binary is needed to build test repositories")
	}
}

func newFixture(t testing.TB) *fixture {
	needGit(t)
	base := t.TempDir()
	fx := &fixture{t: t, root: filepath.Join(base, "srv"), work: filepath.Join(base, "work")}
	fx.bare = filepath.Join(fx.root, "repo.git")
	fx.git(base, "init", "-q", "-b", "main", fx.work)
	fx.git(base, "init", "-q", "--bare", "-b", "main", fx.bare)
	return fx
}

func (fx *fixture) git(dir string, args ...string) string {
	fx.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		fx.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// write writes files into the working repository; a value of "" removes
// the file, a value starting with "->" makes a symlink.
func (fx *fixture) write(files map[string]string) {
	fx.t.Helper()
	for p, body := range files {
		full := filepath.Join(fx.work, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			fx.t.Fatal(err)
		}
		if err := os.Remove(full); err != nil && !os.IsNotExist(err) {
			fx.t.Fatal(err)
		}
		switch {
		case body == "":
		case strings.HasPrefix(body, "->"):
			if err := os.Symlink(body[2:], full); err != nil {
				fx.t.Fatal(err)
			}
		default:
			if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
				fx.t.Fatal(err)
			}
		}
	}
}

// commit commits everything and force-pushes the branch to the bare
// repository; it returns the commit id.
func (fx *fixture) commit(msg string) string {
	fx.t.Helper()
	fx.git(fx.work, "add", "-A")
	fx.git(fx.work, "commit", "-q", "--allow-empty", "-m", msg)
	branch := fx.git(fx.work, "rev-parse", "--abbrev-ref", "HEAD")
	fx.git(fx.work, "push", "-q", "--force", fx.bare, "HEAD:refs/heads/"+branch)
	return fx.git(fx.work, "rev-parse", "HEAD")
}

// serve serves fx.root over HTTP with git http-backend; with a token, a
// request must carry it as the basic-auth password. With cut, the pack of
// every fetch is cut off half way and the connection dropped.
func (fx *fixture) serve(token string, cut bool) string {
	fx.t.Helper()
	if _, err := os.Stat(httpBackend); err != nil {
		if os.Getenv("CI") != "" {
			fx.t.Fatal("CI must not skip the HTTP git tests: install Debian's git")
		}
		fx.t.Skip("git http-backend is needed for the HTTP tests")
	}
	backend := &cgi.Handler{Path: httpBackend, Env: []string{"GIT_PROJECT_ROOT=" + fx.root, "GIT_HTTP_EXPORT_ALL=1"}, Stderr: io.Discard}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" {
			if _, pw, ok := r.BasicAuth(); !ok || pw != token {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		if cut && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-upload-pack") {
			rec := httptest.NewRecorder()
			backend.ServeHTTP(rec, r)
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Del("Content-Length")
			w.WriteHeader(rec.Code)
			body := rec.Body.Bytes()
			w.Write(body[:len(body)/2])
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
		backend.ServeHTTP(w, r)
	}))
	fx.t.Cleanup(srv.Close)
	return srv.URL + "/repo.git"
}

// plumbingRepo makes a bare repository at dir whose main branch holds the
// given tree entries (names the git binary might refuse), each a blob with
// the given content (or, for a gitlink, the commit id).
func plumbingRepo(t testing.TB, dir string, entries []object.TreeEntry, blobs map[string]string) string {
	t.Helper()
	repo, err := git.PlainInit(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	st := repo.Storer
	put := func(o interface {
		Encode(plumbing.EncodedObject) error
	}) plumbing.Hash {
		obj := st.NewEncodedObject()
		if err := o.Encode(obj); err != nil {
			t.Fatal(err)
		}
		h, err := st.SetEncodedObject(obj)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	for i := range entries {
		e := &entries[i]
		if e.Mode == filemode.Submodule || e.Mode == filemode.Dir {
			continue
		}
		obj := st.NewEncodedObject()
		obj.SetType(plumbing.BlobObject)
		w, _ := obj.Writer()
		w.Write([]byte(blobs[e.Name]))
		w.Close()
		h, err := st.SetEncodedObject(obj)
		if err != nil {
			t.Fatal(err)
		}
		e.Hash = h
	}
	tree := put(&object.Tree{Entries: entries})
	sig := object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000000, 0)}
	c := put(&object.Commit{Author: sig, Committer: sig, Message: "plumbing\n", TreeHash: tree})
	setRef(t, st, "refs/heads/main", c)
	if err := st.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, "refs/heads/main")); err != nil {
		t.Fatal(err)
	}
	return c.String()
}

func setRef(t testing.TB, st storer.ReferenceStorer, name string, h plumbing.Hash) {
	t.Helper()
	if err := st.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(name), h)); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
