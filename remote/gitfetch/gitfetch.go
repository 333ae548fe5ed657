// Package gitfetch reads skills from git repositories: it implements
// remote.Fetcher with go-git, a pure-Go git library, so that no git binary
// is needed at run time.
//
// A repository is given as https://, http://, ssh://, file:// or a plain
// path to a repository on disk (bare or with a .git folder).
//
//   - Resolve lists the remote's refs (ls-remote: no objects are fetched)
//     and returns the commit the ref points at; a full commit id as the ref
//     is returned as is. A local repository is read in place.
//   - Fetch brings the commit into a temporary git storage on disk beside
//     the snapshot (a shallow fetch of depth 1 when the commit is the
//     ref's tip; when the branch has moved past a pinned commit, its
//     history back to the pin, deepening 16, 256, then all, which also
//     checks that the commit is still on it) and writes the
//     files under the source's paths into a new folder, walking the tree
//     objects itself: no worktree is checked out and nothing of the clone
//     is left on disk.
//
// Every path goes through skill.CleanPath. Executable bits are kept;
// symlinks are written as symlinks when their target is relative and stays
// inside the snapshot, and skipped with a note otherwise; submodules are
// skipped with a note. Limits bound files, one file's size (checked before
// the blob is read) and the total. Tokens are sent as HTTP basic auth (user
// "x-access-token", which GitHub and GitLab accept) and never appear in an
// error: every message is built with remote.Errorf.
//
// The pack a remote sends is held to the same limits while it streams in
// (pack.go): every object's declared size, and the size a delta makes, is
// read before go-git sees the object, and the first one over
// remote.maxFileSize (or files over remote.maxTotalSize in all, or more
// objects than remote.maxFiles allows) stops the transfer. Every object the
// pack brings counts, including files outside the source's paths and, when
// the branch has moved past the pin, the versions in the history fetched
// (whose totals may be 4 times the snapshot's).
package gitfetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/loadout/loadout/remote"
	"github.com/loadout/loadout/skill"
)

// TokenUser is the user name sent with a token as HTTP basic auth; GitHub
// and GitLab accept it with a personal or installation token as password.
const TokenUser = "x-access-token"

// largeObjectThreshold is the size above which a blob of a local
// repository is read lazily from its pack, so that its size can be checked
// against the limits before its content is read.
const largeObjectThreshold = 256 << 10

// maxLinkTarget is the longest symlink target written; a longer one is
// skipped with a note.
const maxLinkTarget = skill.MaxPathLen

// Fetcher reads one git source. It is safe for use by one goroutine at a
// time per call; calls share no state.
type Fetcher struct {
	spec  remote.Spec
	id    string
	url   string // what go-git is given (remote repositories)
	local string // the repository folder (file:// and plain paths)
	auth  transport.AuthMethod
	paths []string
	// policy is the source's verify policy, read (nil: none); signers
	// are who signed each commit Fetch wrote.
	policy  *policy
	mu      sync.Mutex
	signers map[string]*remote.Signer
}

var _ remote.Signed = (*Fetcher)(nil)

// New checks spec.Git and spec.Paths and returns a Fetcher. Nothing is read
// from the remote until Resolve or Fetch.
func New(spec remote.Spec) (*Fetcher, error) {
	f := &Fetcher{spec: spec, id: spec.ID}
	if f.id == "" {
		redacted := spec
		redacted.Git = remote.Redact(spec.Git)
		f.id = remote.DefaultID(redacted)
	}
	g := strings.TrimSpace(spec.Git)
	if g == "" {
		return nil, f.errorf(remote.CodeInvalid, "git: the repository is empty: give an https://, ssh:// or file:// URL or a path to a repository")
	}
	switch {
	case hasScheme(g, "https"), hasScheme(g, "http"):
		u, err := url.Parse(g)
		if err != nil || u.Host == "" {
			return nil, f.errorf(remote.CodeInvalid, "git: %q is not a URL with a host", g)
		}
		f.url = g
		if spec.Token != "" && hasScheme(g, "http") && !isLoopback(u.Hostname()) {
			return nil, f.errorf(remote.CodeInvalid, "git: a token is sent only over https (or plain http to this machine); %s would send it in the clear: use https://", remote.Redact(g))
		}
		if spec.Token != "" {
			f.auth = &githttp.BasicAuth{Username: TokenUser, Password: spec.Token}
		}
	case hasScheme(g, "ssh"):
		u, err := url.Parse(g)
		if err != nil || u.Host == "" {
			return nil, f.errorf(remote.CodeInvalid, "git: %q is not a URL with a host", g)
		}
		if spec.Token != "" {
			return nil, f.errorf(remote.CodeInvalid, "git: a token is sent only over https; %s uses the ssh agent or your ssh keys: remove the token", g)
		}
		f.url = g
		user := "git"
		if u.User != nil && u.User.Username() != "" {
			user = u.User.Username()
		}
		f.auth = sshAuth(user)
	case hasScheme(g, "file"):
		u, err := url.Parse(g)
		if err != nil || u.Path == "" || (u.Host != "" && u.Host != "localhost") {
			return nil, f.errorf(remote.CodeInvalid, "git: %q is not a file:// URL of a local folder (file:///path/to/repo)", g)
		}
		f.local = filepath.FromSlash(u.Path)
	case strings.Contains(g, "://"):
		return nil, f.errorf(remote.CodeInvalid, "git: %q: only https://, http://, ssh://, file:// URLs and local paths are read", g)
	default:
		if i := strings.IndexByte(g, ':'); i > 0 && !filepath.IsAbs(g) && !strings.ContainsAny(g[:i], `/\`) && i != 1 {
			return nil, f.errorf(remote.CodeInvalid, "git: %q looks like an scp-style address: write it as ssh://%s", g, strings.Replace(g, ":", "/", 1))
		}
		abs, err := filepath.Abs(g)
		if err != nil {
			return nil, f.errorf(remote.CodeInvalid, "git: %q: %v", g, err)
		}
		f.local = abs
	}
	if f.local != "" && spec.Token != "" {
		return nil, f.errorf(remote.CodeInvalid, "git: a token is sent only over https; %s is a local repository: remove the token", g)
	}
	paths, err := cleanPaths(spec.Paths)
	if err != nil {
		return nil, f.errorf(remote.CodeInvalid, "paths: %v", err)
	}
	f.paths = paths
	if spec.Verify != nil {
		if f.policy, err = loadPolicy(spec.Verify); err != nil {
			return nil, f.errorf(remote.CodeSignature, "%v", err)
		}
	}
	return f, nil
}

// Signer is who signed commit rev, when the source has a verify policy
// and Fetch wrote rev; nil otherwise.
func (f *Fetcher) Signer(rev string) *remote.Signer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.signers[rev]
}

// isLoopback reports whether host names this machine.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func hasScheme(s, scheme string) bool {
	return len(s) > len(scheme)+3 && strings.EqualFold(s[:len(scheme)], scheme) && s[len(scheme):len(scheme)+3] == "://"
}

// sshAuth is the ssh agent when one runs, else the first of the default
// keys (~/.ssh/id_ed25519, id_ecdsa, id_rsa) that loads without a
// passphrase; nil lets go-git try the agent itself. Host keys are checked
// against known_hosts by go-git.
func sshAuth(user string) transport.AuthMethod {
	if os.Getenv("SSH_AUTH_SOCK") != "" {
		if a, err := gitssh.NewSSHAgentAuth(user); err == nil {
			return a
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	for _, name := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
		if a, err := gitssh.NewPublicKeysFromFile(user, filepath.Join(home, ".ssh", name), ""); err == nil {
			return a
		}
	}
	return nil
}

// cleanPaths checks every path with skill.CleanPath and drops paths inside
// another one (reading "skills" already reads "skills/pdf").
func cleanPaths(in []string) ([]string, error) {
	var out []string
	for _, p := range in {
		c, err := skill.CleanPath(strings.TrimSuffix(p, "/"))
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	var kept []string
outer:
	for i, p := range out {
		for j, q := range out {
			if i != j && (strings.HasPrefix(p, q+"/") || p == q && j < i) {
				continue outer
			}
		}
		kept = append(kept, p)
	}
	return kept, nil
}

// errorf makes a remote.Error for this source; the message is redacted
// (URL userinfo) and the token is removed in case a library put it there.
func (f *Fetcher) errorf(code, format string, args ...any) *remote.Error {
	e := remote.Errorf(f.id, code, format, args...)
	if f.spec.Token != "" {
		e.Msg = strings.ReplaceAll(e.Msg, f.spec.Token, "***")
	}
	return e
}

// fail maps an error of go-git or the file system to a remote.Error with a
// code; what says what was being done. Only context errors are kept as the
// cause: others are folded into the (redacted) message, so that no
// credential can be reached through Unwrap.
func (f *Fetcher) fail(ctx context.Context, err error, what string) error {
	var re *remote.Error
	if errors.As(err, &re) {
		return err
	}
	if cerr := ctx.Err(); cerr != nil {
		e := f.errorf(remote.CodeNetwork, "%s: %v", what, cerr)
		e.Err = cerr
		return e
	}
	loc := remote.Redact(f.spec.Git)
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed), errors.Is(err, transport.ErrInvalidAuthMethod):
		hint := "set the source's token"
		if f.spec.Token != "" {
			hint = "check that the token is valid and may read the repository"
		}
		if hasScheme(f.spec.Git, "ssh") {
			hint = "check the ssh agent or keys and known_hosts"
		}
		return f.errorf(remote.CodeAuth, "%s: %s refused the credentials (%v): %s", what, loc, err, hint)
	case errors.Is(err, transport.ErrRepositoryNotFound), errors.Is(err, git.ErrRepositoryNotExists):
		return f.errorf(remote.CodeInvalid, "%s: %s is not a git repository (or it is not visible with these credentials)", what, loc)
	case errors.Is(err, transport.ErrEmptyRemoteRepository):
		return f.errorf(remote.CodeInvalid, "%s: %s is an empty repository: it has no commits", what, loc)
	}
	return f.errorf(remote.CodeNetwork, "%s: %s: %v", what, loc, err)
}

// Resolve returns the commit the source's ref points at now. For a remote
// it lists the refs only (no objects are fetched); a full commit id as Ref
// is returned as is.
func (f *Fetcher) Resolve(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", f.fail(ctx, err, "resolving "+f.refLabel())
	}
	if h, ok := commitID(f.spec.Ref); ok {
		return h, nil
	}
	if f.local != "" {
		st, err := f.openLocal()
		if err != nil {
			return "", err
		}
		defer closeStorage(st)
		_, tip, err := f.localRef(st)
		if err != nil {
			return "", err
		}
		return tip.String(), nil
	}
	_, tip, err := f.remoteRef(ctx)
	if err != nil {
		return "", err
	}
	return tip.String(), nil
}

// commitID reports whether s is a full commit id (40 hex digits), and
// returns it in lower case.
func commitID(s string) (string, bool) {
	if len(s) != 40 {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return "", false
		}
	}
	return strings.ToLower(s), true
}

// refCandidates are the names Ref may stand for, in the order git's
// rev-parse tries them.
func refCandidates(ref string) []plumbing.ReferenceName {
	if ref == "" {
		return []plumbing.ReferenceName{plumbing.HEAD}
	}
	if strings.HasPrefix(ref, "refs/") || ref == "HEAD" {
		return []plumbing.ReferenceName{plumbing.ReferenceName(ref)}
	}
	return []plumbing.ReferenceName{plumbing.NewTagReferenceName(ref), plumbing.NewBranchReferenceName(ref)}
}

func (f *Fetcher) refLabel() string {
	if f.spec.Ref == "" {
		return "the default branch (HEAD)"
	}
	return fmt.Sprintf("ref %q", f.spec.Ref)
}

// remoteRef lists the remote's refs and finds Ref: the name to fetch and
// the commit it points at (annotated tags peeled).
func (f *Fetcher) remoteRef(ctx context.Context) (plumbing.ReferenceName, plumbing.Hash, error) {
	r := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{f.url}})
	refs, err := r.ListContext(ctx, &git.ListOptions{Auth: f.auth, PeelingOption: git.AppendPeeled})
	if err != nil {
		return "", plumbing.ZeroHash, f.fail(ctx, err, "listing refs")
	}
	byName := make(map[plumbing.ReferenceName]*plumbing.Reference, len(refs))
	for _, ref := range refs {
		byName[ref.Name()] = ref
	}
	for _, name := range refCandidates(f.spec.Ref) {
		ref, ok := byName[name]
		if !ok {
			continue
		}
		if ref.Type() == plumbing.SymbolicReference {
			name = ref.Target()
			if ref, ok = byName[name]; !ok || ref.Type() != plumbing.HashReference {
				return "", plumbing.ZeroHash, f.errorf(remote.CodeRef, "%s points at %s, which the remote does not list", f.refLabel(), name)
			}
		} else if name == plumbing.HEAD {
			// No symref advertised: find the branch at HEAD's commit,
			// main and master first.
			found := plumbing.ReferenceName("")
			for _, cand := range []plumbing.ReferenceName{"refs/heads/main", "refs/heads/master"} {
				if b, ok := byName[cand]; ok && b.Hash() == ref.Hash() {
					found = cand
					break
				}
			}
			if found == "" {
				for _, b := range refs {
					if b.Name().IsBranch() && b.Hash() == ref.Hash() && (found == "" || b.Name() < found) {
						found = b.Name()
					}
				}
			}
			if found == "" {
				return "", plumbing.ZeroHash, f.errorf(remote.CodeRef, "the remote's HEAD is on no branch: give the source a ref")
			}
			name = found
		}
		h := ref.Hash()
		if peeled, ok := byName[name+"^{}"]; ok {
			h = peeled.Hash()
		}
		return name, h, nil
	}
	return "", plumbing.ZeroHash, f.errorf(remote.CodeRef, "%s is not a branch or tag of %s: check the ref's spelling (a commit id must have all 40 digits)", f.refLabel(), remote.Redact(f.spec.Git))
}

// openLocal opens a local repository's storage read-only in place: a bare
// repository or a folder with a .git folder.
func (f *Fetcher) openLocal() (storer.Storer, error) {
	loc := remote.Redact(f.spec.Git)
	fi, err := os.Stat(f.local)
	if err != nil || !fi.IsDir() {
		return nil, f.errorf(remote.CodeInvalid, "%s is not a folder holding a git repository", loc)
	}
	gitdir := f.local
	if dfi, err := os.Stat(filepath.Join(f.local, ".git")); err == nil {
		if !dfi.IsDir() {
			// A worktree or submodule's .git file: let go-git follow it.
			repo, err := git.PlainOpenWithOptions(f.local, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
			if err != nil {
				return nil, f.errorf(remote.CodeInvalid, "%s is not a git repository: %v", loc, err)
			}
			return repo.Storer, nil
		}
		gitdir = filepath.Join(f.local, ".git")
	}
	if _, err := os.Stat(filepath.Join(gitdir, "objects")); err != nil {
		return nil, f.errorf(remote.CodeInvalid, "%s is not a git repository (no objects folder)", loc)
	}
	if _, err := os.Stat(filepath.Join(gitdir, "HEAD")); err != nil {
		return nil, f.errorf(remote.CodeInvalid, "%s is not a git repository (no HEAD)", loc)
	}
	return filesystem.NewStorageWithOptions(osfs.New(gitdir), cache.NewObjectLRUDefault(), filesystem.Options{KeepDescriptors: true, LargeObjectThreshold: largeObjectThreshold}), nil
}

// localRef finds Ref in a local repository: its name and commit.
func (f *Fetcher) localRef(st storer.Storer) (plumbing.ReferenceName, plumbing.Hash, error) {
	for _, name := range refCandidates(f.spec.Ref) {
		ref, err := storer.ResolveReference(st, name)
		if err != nil {
			continue
		}
		h, err := peel(st, ref.Hash())
		if err != nil {
			return "", plumbing.ZeroHash, f.errorf(remote.CodeRef, "%s: %v", f.refLabel(), err)
		}
		return ref.Name(), h, nil
	}
	return "", plumbing.ZeroHash, f.errorf(remote.CodeRef, "%s is not a branch or tag of %s: check the ref's spelling (a commit id must have all 40 digits)", f.refLabel(), remote.Redact(f.spec.Git))
}

// peel follows annotated tags to the commit they name.
func peel(st storer.EncodedObjectStorer, h plumbing.Hash) (plumbing.Hash, error) {
	for range 10 {
		obj, err := st.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return h, fmt.Errorf("object %s: %w", h, err)
		}
		switch obj.Type() {
		case plumbing.CommitObject:
			return h, nil
		case plumbing.TagObject:
			tag, err := object.DecodeTag(st, obj)
			if err != nil {
				return h, err
			}
			h = tag.Target
		default:
			return h, fmt.Errorf("it points at a %s, not a commit", obj.Type())
		}
	}
	return h, errors.New("it is a chain of more than 10 tags")
}

// reachable reports whether want is tip or one of its ancestors.
func reachable(ctx context.Context, st storer.EncodedObjectStorer, tip, want plumbing.Hash) (bool, error) {
	seen := map[plumbing.Hash]bool{tip: true}
	queue := []plumbing.Hash{tip}
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		h := queue[0]
		queue = queue[1:]
		if h == want {
			return true, nil
		}
		c, err := object.GetCommit(st, h)
		if err != nil {
			if errors.Is(err, plumbing.ErrObjectNotFound) {
				continue // a shallow boundary
			}
			return false, err
		}
		for _, p := range c.ParentHashes {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return false, nil
}

func (f *Fetcher) pinGone(rev string) error {
	if _, ok := commitID(f.spec.Ref); ok {
		return f.errorf(remote.CodeRef, "commit %s is not in %s (on no branch or tag it lists): check the source's ref, or run `loadout sync` after fixing it", rev, remote.Redact(f.spec.Git))
	}
	return f.errorf(remote.CodeRef, "the pinned commit %s is no longer on %s of %s (a force-push or a deleted branch?): run `loadout sync` to pin the current commit", rev, f.refLabel(), remote.Redact(f.spec.Git))
}

// Fetch writes the files of commit rev under the source's paths into dir,
// which it creates. See remote.Fetcher.
func (f *Fetcher) Fetch(ctx context.Context, rev, dir string, lim remote.Limits) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, f.fail(ctx, err, "fetching "+rev)
	}
	want, ok := commitID(rev)
	if !ok {
		return nil, f.errorf(remote.CodeRef, "%q is not a commit id (40 hex digits): run `loadout sync` to pin the source again", rev)
	}
	h := plumbing.NewHash(want)
	lim = lim.WithDefaults()
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, f.errorf(remote.CodeInvalid, "creating the snapshot folder: %v", err)
	}
	var st storer.EncodedObjectStorer
	var err error
	if f.local != "" {
		st, err = f.localCommit(ctx, h)
	} else {
		// The pack goes to disk beside the snapshot (in the cache, not
		// in memory), under a name that begins like dir's, so that what
		// an interrupted fetch leaves is cleaned with dir's leftovers.
		work, terr := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".pack-")
		if terr != nil {
			return nil, f.errorf(remote.CodeInvalid, "creating the fetch folder: %v", terr)
		}
		defer os.RemoveAll(work)
		st, err = f.remoteCommit(ctx, h, work, lim)
	}
	if err != nil {
		return nil, err
	}
	defer closeStorage(st)
	commit, err := object.GetCommit(st, h)
	if err != nil {
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, f.pinGone(want)
		}
		return nil, f.fail(ctx, err, "reading commit "+want)
	}
	var signer *remote.Signer
	if f.policy != nil {
		// Before any file is written: a commit not signed as the policy
		// requires writes nothing.
		if signer, err = f.verifyCommit(commit); err != nil {
			return nil, err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, f.errorf(remote.CodeInvalid, "creating the snapshot folder: %v", err)
	}
	w := &writer{f: f, ctx: ctx, st: st, dir: dir, lim: lim, rev: want}
	if err := w.write(commit.TreeHash); err != nil {
		return w.notes, err
	}
	if signer != nil {
		f.mu.Lock()
		if f.signers == nil {
			f.signers = map[string]*remote.Signer{}
		}
		f.signers[want] = signer
		f.mu.Unlock()
	}
	return w.notes, nil
}

// localCommit opens a local repository and checks that h is on Ref (or,
// for a commit id as Ref, that it exists).
func (f *Fetcher) localCommit(ctx context.Context, h plumbing.Hash) (storer.EncodedObjectStorer, error) {
	st, err := f.openLocal()
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			closeStorage(st)
		}
	}()
	st2, err := f.localCommitOn(ctx, st, h)
	ok = err == nil
	return st2, err
}

// closeStorage closes the files a local repository's storage holds open.
func closeStorage(st any) {
	if c, ok := st.(io.Closer); ok {
		c.Close()
	}
}

func (f *Fetcher) localCommitOn(ctx context.Context, st storer.Storer, h plumbing.Hash) (storer.EncodedObjectStorer, error) {
	if _, ok := commitID(f.spec.Ref); ok {
		return st, nil // GetCommit says whether it exists
	}
	_, tip, err := f.localRef(st)
	if err != nil {
		return nil, err
	}
	if err := f.onRef(ctx, st, tip, h); err != nil {
		return nil, err
	}
	return st, nil
}

// remoteCommit fetches commit h into a storage under work: depth 1 when it
// is the ref's tip, else the whole ref, checking h is on it. For a commit
// id as Ref it asks for the commit itself, and when the server refuses
// that, fetches every branch and tag.
func (f *Fetcher) remoteCommit(ctx context.Context, h plumbing.Hash, work string, lim remote.Limits) (storer.EncodedObjectStorer, error) {
	if _, ok := commitID(f.spec.Ref); ok {
		st, err := f.fetch(ctx, []config.RefSpec{config.RefSpec(h.String() + ":refs/heads/pinned")}, 1, work, lim)
		if err == nil && hasCommit(st, h) {
			return st, nil
		}
		if st != nil {
			closeStorage(st)
		}
		if ctx.Err() != nil {
			return nil, f.fail(ctx, ctx.Err(), "fetching "+h.String())
		}
		var re *remote.Error
		if errors.As(err, &re) && (re.Code == remote.CodeAuth || re.Code == remote.CodeLimit) {
			return nil, err
		}
		st, err = f.fetch(ctx, []config.RefSpec{"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"}, 0, work, lim)
		if err != nil {
			return nil, err
		}
		return st, nil
	}
	name, tip, err := f.remoteRef(ctx)
	if err != nil {
		return nil, err
	}
	spec := config.RefSpec("+" + name.String() + ":" + name.String())
	if tip == h {
		return f.fetch(ctx, []config.RefSpec{spec}, 1, work, lim)
	}
	// The branch has moved past the pin: fetch its history back far
	// enough to hold the pin, deepening as needed, so that the pack holds
	// the versions between the pin and the tip rather than all history
	// (every object in it counts against the limits).
	for _, depth := range historyDepths {
		st, err := f.fetch(ctx, []config.RefSpec{spec}, depth, work, lim)
		if err != nil {
			return nil, err
		}
		ok, err := reachable(ctx, st, tip, h)
		if err != nil {
			closeStorage(st)
			return nil, f.fail(ctx, err, "walking the history of "+f.refLabel())
		}
		if ok {
			return st, nil
		}
		shallow, _ := st.Shallow()
		closeStorage(st)
		if len(shallow) == 0 {
			break // the whole history is here, and the pin is not in it
		}
	}
	return nil, f.pinGone(h.String())
}

// historyDepths are the depths of the fetches that look for a pin behind
// the tip; 0 is the whole history.
var historyDepths = []int{16, 256, 0}

// onRef checks that commit h is the ref's tip or in its history: a pin
// the branch no longer holds (after a force-push) is gone.
func (f *Fetcher) onRef(ctx context.Context, st storer.EncodedObjectStorer, tip, h plumbing.Hash) error {
	if tip == h {
		return nil
	}
	ok, err := reachable(ctx, st, tip, h)
	if err != nil {
		return f.fail(ctx, err, "walking the history of "+f.refLabel())
	}
	if !ok {
		return f.pinGone(h.String())
	}
	return nil
}

func hasCommit(st storer.EncodedObjectStorer, h plumbing.Hash) bool {
	_, err := object.GetCommit(st, h)
	return err == nil
}

// fetchCache bounds the objects a fetched storage keeps decoded in memory
// while the snapshot is written (go-git's default is 96 MiB).
const fetchCache = 8 << 20

// fetch runs one fetch into a new storage on disk in a new folder under
// work. The pack is guarded while it streams in (pack.go): an object over
// the limits stops the transfer with CodeLimit.
func (f *Fetcher) fetch(ctx context.Context, specs []config.RefSpec, depth int, work string, lim remote.Limits) (*guardedStorage, error) {
	gitdir, err := os.MkdirTemp(work, "git-")
	if err != nil {
		return nil, f.errorf(remote.CodeInvalid, "creating the fetch folder: %v", err)
	}
	st := &guardedStorage{
		Storage: filesystem.NewStorageWithOptions(osfs.New(gitdir), cache.NewObjectLRU(fetchCache), filesystem.Options{ExclusiveAccess: true, KeepDescriptors: true, LargeObjectThreshold: largeObjectThreshold}),
		lim:     newPackLimits(lim, depth != 1),
	}
	r := git.NewRemote(st, &config.RemoteConfig{Name: "origin", URLs: []string{f.url}, Fetch: specs})
	err = r.FetchContext(ctx, &git.FetchOptions{RefSpecs: specs, Depth: depth, Auth: f.auth, Tags: git.NoTags, Force: true})
	if le := st.tripped(); le != nil {
		closeStorage(st)
		return nil, f.errorf(remote.CodeLimit, "fetching %s of %s: %s; the transfer was stopped and nothing was written: raise the limit in the config's \"remote\" block, or leave the source out", f.refLabel(), remote.Redact(f.spec.Git), le.msg)
	}
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		closeStorage(st)
		return nil, f.fail(ctx, err, "fetching "+f.refLabel())
	}
	return st, nil
}

// writer writes a commit's tree into a snapshot folder.
type writer struct {
	f     *Fetcher
	ctx   context.Context
	st    storer.EncodedObjectStorer
	dir   string
	lim   remote.Limits
	rev   string
	files int
	bytes int64
	notes []string
	links []link
}

type link struct{ path, target string }

func (w *writer) note(format string, args ...any) {
	w.notes = append(w.notes, remote.Redact(fmt.Sprintf(format, args...)))
}

func (w *writer) write(root plumbing.Hash) error {
	tree, err := object.GetTree(w.st, root)
	if err != nil {
		return w.f.fail(w.ctx, err, "reading the tree of "+w.rev)
	}
	if len(w.f.paths) == 0 {
		if err := w.walk(tree, ""); err != nil {
			return err
		}
	} else {
		for _, p := range w.f.paths {
			e, err := tree.FindEntry(p)
			if err != nil {
				return w.f.errorf(remote.CodeInvalid, "paths: %q is not in %s at commit %s: fix the source's paths (was it moved or deleted?)", p, remote.Redact(w.f.spec.Git), w.rev)
			}
			if err := w.mkdirs(path.Dir(p)); err != nil {
				return err
			}
			if err := w.entry(p, e); err != nil {
				return err
			}
		}
	}
	return w.writeLinks()
}

// mkdirs creates the folders of a selected path (below dir, ours).
func (w *writer) mkdirs(p string) error {
	if p == "." {
		return nil
	}
	if err := os.MkdirAll(filepath.Join(w.dir, filepath.FromSlash(p)), 0o755); err != nil {
		return w.f.errorf(remote.CodeInvalid, "creating %s: %v", p, err)
	}
	return nil
}

func (w *writer) walk(tree *object.Tree, prefix string) error {
	if err := w.oneEntryFile(tree, prefix); err != nil {
		return err
	}
	for i := range tree.Entries {
		e := &tree.Entries[i]
		if err := w.ctx.Err(); err != nil {
			return w.f.fail(w.ctx, err, "writing the snapshot")
		}
		p := e.Name
		if prefix != "" {
			p = prefix + "/" + e.Name
		}
		if e.Name == "" || strings.Contains(e.Name, "/") || e.Name == "." || e.Name == ".." {
			return w.f.errorf(remote.CodePath, "the repository holds the path %q (commit %s), which cannot be written: a tree entry named %q; such a repository is not served", p, w.rev, e.Name)
		}
		if err := w.entry(p, e); err != nil {
			return err
		}
	}
	return nil
}

// oneEntryFile refuses a folder holding SKILL.md twice in different cases
// (SKILL.md and skill.md): which one is the skill would depend on the
// reader, and on a case-insensitive disk one overwrites the other.
func (w *writer) oneEntryFile(tree *object.Tree, prefix string) error {
	first := ""
	for i := range tree.Entries {
		name := tree.Entries[i].Name
		if !skill.IsEntryPath(name) {
			continue
		}
		if first == "" {
			first = name
			continue
		}
		at := func(n string) string { return strconv.Quote(path.Join(prefix, n)) }
		return w.f.errorf(remote.CodePath, "the repository holds both %s and %s (commit %s): a skill has one SKILL.md, in any case; remove or rename one of them", at(first), at(name), w.rev)
	}
	return nil
}

// entry writes one tree entry at path p.
func (w *writer) entry(p string, e *object.TreeEntry) error {
	c, err := skill.CleanPath(p)
	if err == nil && c != p {
		err = fmt.Errorf("it is not in its clean form %q", c)
	}
	if err != nil {
		return w.f.errorf(remote.CodePath, "the repository holds a path loadout refuses (commit %s): %v; such a repository is not served", w.rev, err)
	}
	full := filepath.Join(w.dir, filepath.FromSlash(p))
	switch e.Mode {
	case filemode.Dir:
		if err := os.Mkdir(full, 0o755); err != nil {
			return w.f.errorf(remote.CodePath, "creating folder %s: %v (a path given twice in one tree?)", p, err)
		}
		tree, err := object.GetTree(w.st, e.Hash)
		if err != nil {
			return w.f.fail(w.ctx, err, "reading folder "+p)
		}
		return w.walk(tree, p)
	case filemode.Regular, filemode.Deprecated, filemode.Executable:
		return w.file(p, full, e)
	case filemode.Symlink:
		return w.symlink(p, e)
	case filemode.Submodule:
		w.note("skipped the submodule %s (commit %s): submodules are not fetched; make it a source of its own", p, e.Hash)
		return nil
	default:
		w.note("skipped %s: unknown file mode %o", p, uint32(e.Mode))
		return nil
	}
}

func (w *writer) count(p string) error {
	w.files++
	if w.files > w.lim.MaxFiles {
		return w.f.errorf(remote.CodeLimit, "%s: the snapshot would hold more than %d files (the limit remote.maxFiles): select fewer paths or raise the limit", p, w.lim.MaxFiles)
	}
	return nil
}

// blob opens a blob after checking its size against the limits.
func (w *writer) blob(p string, h plumbing.Hash) (plumbing.EncodedObject, error) {
	obj, err := w.st.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return nil, w.f.fail(w.ctx, err, "reading "+p)
	}
	size := obj.Size()
	if size > w.lim.MaxFileBytes {
		return nil, w.f.errorf(remote.CodeLimit, "%s is %d bytes; the limit for one file is %d bytes (remote.maxFileSize): select paths without it or raise the limit", p, size, w.lim.MaxFileBytes)
	}
	if w.bytes+size > w.lim.MaxBytes {
		return nil, w.f.errorf(remote.CodeLimit, "%s: the snapshot would hold more than %d bytes (the limit remote.maxTotalSize): select fewer paths or raise the limit", p, w.lim.MaxBytes)
	}
	w.bytes += size
	return obj, nil
}

func (w *writer) file(p, full string, e *object.TreeEntry) error {
	if err := w.count(p); err != nil {
		return err
	}
	obj, err := w.blob(p, e.Hash)
	if err != nil {
		return err
	}
	perm := os.FileMode(0o644)
	if e.Mode == filemode.Executable {
		perm = 0o755
	}
	r, err := obj.Reader()
	if err != nil {
		return w.f.fail(w.ctx, err, "reading "+p)
	}
	defer r.Close()
	out, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return w.f.errorf(remote.CodePath, "writing %s: %v (a path given twice in one tree?)", p, err)
	}
	n, err := io.Copy(out, io.LimitReader(r, obj.Size()+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n != obj.Size() {
		err = fmt.Errorf("read %d bytes of %d", n, obj.Size())
	}
	if err != nil {
		return w.f.fail(w.ctx, err, "writing "+p)
	}
	if perm&0o111 != 0 {
		// The umask may have cleared bits; the mode is part of the file.
		if err := os.Chmod(full, perm); err != nil {
			return w.f.fail(w.ctx, err, "writing "+p)
		}
	}
	return nil
}

// symlink reads a link's target and queues it: links are written after
// every file and folder, so that nothing is ever written through one.
func (w *writer) symlink(p string, e *object.TreeEntry) error {
	if err := w.count(p); err != nil {
		return err
	}
	obj, err := w.st.EncodedObject(plumbing.BlobObject, e.Hash)
	if err != nil {
		return w.f.fail(w.ctx, err, "reading link "+p)
	}
	if obj.Size() > maxLinkTarget {
		w.note("skipped the symlink %s: its target is %d bytes long; the limit is %d", p, obj.Size(), maxLinkTarget)
		return nil
	}
	r, err := obj.Reader()
	if err != nil {
		return w.f.fail(w.ctx, err, "reading link "+p)
	}
	b, err := io.ReadAll(io.LimitReader(r, maxLinkTarget+1))
	r.Close()
	if err != nil {
		return w.f.fail(w.ctx, err, "reading link "+p)
	}
	target := string(b)
	if why := LinkEscapes(p, target); why != "" {
		w.note("skipped the symlink %s -> %q: %s", p, target, why)
		return nil
	}
	w.links = append(w.links, link{path: p, target: target})
	return nil
}

// LinkEscapes judges a symlink found at the clean relative path linkPath
// with the given target: "" when the target is relative and, resolved
// lexically from the link's folder, stays inside the snapshot; else why
// not. It does not follow other links (writeLinks checks the written links
// on disk as well).
func LinkEscapes(linkPath, target string) string {
	switch {
	case target == "":
		return "its target is empty"
	case strings.ContainsRune(target, 0):
		return "its target holds a NUL byte"
	case strings.HasPrefix(target, "/") || strings.HasPrefix(target, `\`) || len(target) >= 2 && target[1] == ':':
		return "its target is absolute; only relative links inside the repository are kept"
	case strings.Contains(target, `\`):
		return "its target holds a backslash; use / between folders"
	}
	resolved := path.Join(path.Dir(linkPath), target)
	if resolved == ".." || strings.HasPrefix(resolved, "../") || strings.HasPrefix(resolved, "/") {
		return "its target leaves the repository"
	}
	return ""
}

// writeLinks writes the queued symlinks, then checks each on disk: one that
// resolves outside dir through another link, dangles or loops is removed
// with a note.
func (w *writer) writeLinks() error {
	if len(w.links) == 0 {
		return nil
	}
	for _, l := range w.links {
		full := filepath.Join(w.dir, filepath.FromSlash(l.path))
		if err := os.Symlink(l.target, full); err != nil {
			return w.f.errorf(remote.CodePath, "writing the symlink %s: %v (a path given twice in one tree?)", l.path, err)
		}
	}
	root, err := filepath.EvalSymlinks(w.dir)
	if err != nil {
		return w.f.fail(w.ctx, err, "checking the snapshot's links")
	}
	for _, l := range w.links {
		full := filepath.Join(w.dir, filepath.FromSlash(l.path))
		real, err := filepath.EvalSymlinks(full)
		why := ""
		switch {
		case errors.Is(err, os.ErrNotExist):
			// A dangling link could name a path outside dir through
			// another link; it is of no use in a fixed snapshot anyway.
			why = "its target is not in the snapshot"
		case err != nil:
			why = "it cannot be resolved (a loop of links?)"
		case real != root && !strings.HasPrefix(real, root+string(filepath.Separator)):
			why = "through other links it leaves the repository"
		default:
			continue
		}
		if err := os.Remove(full); err != nil {
			return w.f.fail(w.ctx, err, "removing the symlink "+l.path)
		}
		w.note("skipped the symlink %s -> %q: %s", l.path, l.target, why)
	}
	return nil
}
