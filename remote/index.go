package remote

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/source"
)

// The index fetcher reads a well-known skills index, the one `loadout
// serve` publishes at /.well-known/agent-skills/index.json (and that other
// sites publish for `npx skills`):
//
//	{"$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json",
//	 "skills": [{"name", "type": "skill-md" | "archive", "description", "url", "digest"}]}
//
// A "skill-md" entry is one SKILL.md; an "archive" entry is a .tar.gz (or
// .zip) whose root is the skill folder. The legacy 0.1.0 shape,
// {"skills": [{"name", "description", "files": ["SKILL.md", …]}]} at
// /.well-known/skills/index.json, is read too: its files come from
// <index folder>/<name>/<path> and carry no digests, which Fetch says in a
// note.
//
// Revision: the index's own bytes, "sha256:<hex>". Fetch reads the index
// again and fails with CodeDigest if it changed, then checks every
// artifact against the digest the pinned index gives for it before a byte
// of it is unpacked.
//
// Origins: artifact URLs resolve against the index URL (after redirects).
// Every request, and every redirect, stays on the index's origin (scheme,
// host and port) unless the source's allowedOrigins names another (a CDN
// or release host): an index must not make loadout GET whatever URL it
// names, such as an admin route on this machine. An entry on another
// origin refuses the index before anything is downloaded; a redirect to
// one stops the request. Any other scheme (file:, ftp:, data:, …) is
// refused. A server's own error message is quoted in an error only when
// it comes from the index's origin. The token goes to the index's own
// origin only: never to another the index points at, nor to one a
// redirect leads to.

// SchemaIndexV2 is the $schema of the 0.2.0 discovery index (the same value
// as wellknown.SchemaV2, which this package may not import).
const SchemaIndexV2 = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"

// Bounds of an index source, on top of the snapshot's Limits.
const (
	// MaxIndexBytes is the largest index document read (10,000 entries
	// with long descriptions fit with room to spare).
	MaxIndexBytes = 8 << 20
	// MaxIndexEntries is the most skills one index may list.
	MaxIndexEntries = 10000
	// maxIndexNotes is the most notes one fetch returns for the index's
	// own warnings; the rest are counted in one more note.
	maxIndexNotes = 20
	// maxRedirects is the most redirects one request follows (net/http's
	// default).
	maxRedirects = 10
	// downloadName is the file in the snapshot folder that an artifact is
	// downloaded into and verified in before it is used. It starts with a
	// dot, so no skill name can be the same.
	downloadName = ".download"
)

// IndexFetcher reads a well-known skills index. Make one with NewIndex.
type IndexFetcher struct {
	spec    Spec
	index   *url.URL
	client  *http.Client
	origins map[string]bool // the index's origin and spec.AllowedOrigins, as source.OriginOf gives them
}

var _ Fetcher = (*IndexFetcher)(nil)

// NewIndex returns the fetcher of spec.Index, an http or https URL.
// client is used for every request (nil: http.DefaultClient's transport);
// its Timeout, if any, bounds each request, and the context given to
// Resolve and Fetch bounds them all. Redirects are followed up to 10, and
// the token is dropped on a redirect to another host.
func NewIndex(spec Spec, client *http.Client) (*IndexFetcher, error) {
	if spec.Index == "" {
		return nil, Errorf(spec.ID, CodeInvalid, "no index URL: give \"index\": \"https://host/.well-known/agent-skills/index.json\"")
	}
	u, err := url.Parse(spec.Index)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, Errorf(spec.ID, CodeInvalid, "index URL %q is not an http or https URL: give the index's full address, like https://host/.well-known/agent-skills/index.json", spec.Index)
	}
	f := &IndexFetcher{spec: spec, index: u, origins: map[string]bool{source.OriginOf(u): true}}
	for i, o := range spec.AllowedOrigins {
		n, err := source.Origin(o)
		if err != nil {
			return nil, Errorf(spec.ID, CodeInvalid, "allowedOrigins[%d]: %v", i, err)
		}
		f.origins[n] = true
	}
	if client == nil {
		client = http.DefaultClient
	}
	c := *client // a copy, so that the redirect policy below is ours only
	next := client.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if !f.allowed(req.URL) {
			return &originError{to: req.URL}
		}
		if !sameOrigin(req.URL, u) {
			// net/http keeps Authorization on a redirect to a subdomain;
			// the token is for the index's host only.
			req.Header.Del("Authorization")
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	f.client = &c
	return f, nil
}

func sameOrigin(a, b *url.URL) bool { return source.OriginOf(a) == source.OriginOf(b) }

// allowed reports whether a request may go to u: the index's origin or
// one the source allows.
func (f *IndexFetcher) allowed(u *url.URL) bool { return f.origins[source.OriginOf(u)] }

// originError is a redirect to an origin the source does not allow.
type originError struct{ to *url.URL }

func (e *originError) Error() string {
	return "redirected to " + source.OriginOf(e.to) + ", which the source does not allow"
}

// offOrigin says what to do about a URL on an origin not allowed.
func (f *IndexFetcher) offOrigin(u *url.URL) string {
	return fmt.Sprintf("%s is not the index's origin (%s): loadout fetches an index's entries from its own origin only; if the index is meant to use %s, add it to the source's \"allowedOrigins\"", source.OriginOf(u), source.OriginOf(f.index), source.OriginOf(u))
}

// Resolve reads the index, checks that loadout can read it, and returns
// the digest of its bytes.
func (f *IndexFetcher) Resolve(ctx context.Context) (string, error) {
	body, base, err := f.readIndex(ctx)
	if err != nil {
		return "", err
	}
	if _, err := f.parseIndex(body, base); err != nil {
		return "", err
	}
	return skill.DigestBytes(body), nil
}

// Fetch reads the index again, fails with CodeDigest unless it is still
// the one rev pinned, and writes every skill it lists into dir/<name>/,
// each artifact verified against its digest before it is unpacked.
func (f *IndexFetcher) Fetch(ctx context.Context, rev, dir string, lim Limits) (notes []string, err error) {
	body, base, err := f.readIndex(ctx)
	if err != nil {
		return nil, err
	}
	if got := skill.DigestBytes(body); got != rev {
		return nil, Errorf(f.spec.ID, CodeDigest, "the index at %s changed since it was pinned (pinned %s, now %s): run loadout sync to fetch it and move the pin", f.index, rev, got)
	}
	idx, err := f.parseIndex(body, base)
	if err != nil {
		return nil, err
	}
	notes = idx.notes
	if f.spec.Token != "" && f.index.Scheme == "http" {
		notes = append(notes, fmt.Sprintf("the token is sent to %s over plain http: use https", f.index.Host))
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return notes, Errorf(f.spec.ID, CodeInvalid, "creating the snapshot folder: %v", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return notes, Errorf(f.spec.ID, CodeInvalid, "creating the snapshot folder: %v", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return notes, Errorf(f.spec.ID, CodeInvalid, "opening the snapshot folder: %v", err)
	}
	defer root.Close()
	b := &budget{lim: lim.WithDefaults()}
	for _, e := range idx.entries {
		if err := ctx.Err(); err != nil {
			return notes, Errorf(f.spec.ID, CodeNetwork, "fetch stopped: %v", err)
		}
		if e.legacy != nil {
			err = f.fetchLegacy(ctx, root, e, b)
		} else {
			err = f.fetchEntry(ctx, root, e, b)
		}
		if err != nil {
			return notes, err
		}
	}
	return notes, nil
}

// indexEntry is one skill of a parsed index.
type indexEntry struct {
	name   string
	kind   string   // "skill-md" or "archive"; "" for a legacy entry
	url    *url.URL // the artifact; for a legacy entry, the index
	digest string
	legacy []string // the 0.1.0 shape: clean file paths, SKILL.md first
}

type parsedIndex struct {
	entries []indexEntry
	notes   []string
}

// rawIndex is both shapes at once: unknown fields are ignored, as the
// discovery format asks of clients.
type rawIndex struct {
	Schema   *string    `json:"$schema"`
	Skills   []rawEntry `json:"skills"`
	Warnings []struct {
		Skill   string `json:"skill"`
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"warnings"`
}

type rawEntry struct {
	Name   string          `json:"name"`
	Type   string          `json:"type"`
	URL    string          `json:"url"`
	Digest string          `json:"digest"`
	Files  json.RawMessage `json:"files"`
}

// readIndex GETs the index (with the token), at most MaxIndexBytes, and
// returns it with the URL it came from after redirects, which the
// artifacts' URLs are relative to.
func (f *IndexFetcher) readIndex(ctx context.Context) ([]byte, *url.URL, error) {
	res, err := f.get(ctx, f.index, "the index")
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	if res.ContentLength > MaxIndexBytes {
		return nil, nil, Errorf(f.spec.ID, CodeLimit, "the index at %s is %d bytes, over the limit of %d", f.index, res.ContentLength, MaxIndexBytes)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, MaxIndexBytes+1))
	if err != nil {
		return nil, nil, f.netErr(err, "reading the index at %s", f.index)
	}
	if len(body) > MaxIndexBytes {
		return nil, nil, Errorf(f.spec.ID, CodeLimit, "the index at %s is over the limit of %d bytes", f.index, MaxIndexBytes)
	}
	return body, res.Request.URL, nil
}

// parseIndex checks the whole index before anything is downloaded: the
// shape, every name (valid, unique), type, digest and URL.
func (f *IndexFetcher) parseIndex(body []byte, base *url.URL) (*parsedIndex, error) {
	invalid := func(format string, args ...any) error {
		return Errorf(f.spec.ID, CodeInvalid, "the index at %s: "+format, append([]any{f.index}, args...)...)
	}
	var raw rawIndex
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, invalid("is not a skills index (JSON with a \"skills\" array): %v", err)
	}
	if raw.Skills == nil {
		return nil, invalid("has no \"skills\" array: give the address of a well-known skills index, …/.well-known/agent-skills/index.json")
	}
	if raw.Schema != nil && *raw.Schema != SchemaIndexV2 {
		return nil, invalid("has $schema %s, which loadout does not read: it reads %s and the 0.1.0 shape without $schema", short(*raw.Schema), SchemaIndexV2)
	}
	if n := len(raw.Skills); n > MaxIndexEntries {
		return nil, Errorf(f.spec.ID, CodeLimit, "the index at %s lists %d skills, over the limit of %d", f.index, n, MaxIndexEntries)
	}
	legacy := raw.Schema == nil
	for _, e := range raw.Skills {
		if e.Type != "" || e.URL != "" || e.Digest != "" {
			legacy = false
		}
	}
	p := &parsedIndex{}
	seen := map[string]int{}
	for i, e := range raw.Skills {
		at := fmt.Sprintf("skill %d (%s)", i+1, short(e.Name))
		if probs := skill.NameProblems(e.Name); len(probs) > 0 || e.Name != skill.NormalizeName(e.Name) || e.Name == "" {
			why := "it is not NFKC-normalised"
			if len(probs) > 0 {
				why = probs[0].Message
			}
			if e.Name == "" {
				why = "it is empty"
			}
			return nil, invalid("%s has an invalid name: %s", at, why)
		}
		if j, dup := seen[e.Name]; dup {
			return nil, invalid("%s has the same name as skill %d: names must be unique in an index", at, j)
		}
		seen[e.Name] = i + 1
		if legacy {
			files, err := f.legacyFiles(e, at)
			if err != nil {
				return nil, err
			}
			p.entries = append(p.entries, indexEntry{name: e.Name, url: base, legacy: files})
			continue
		}
		if e.Type != "skill-md" && e.Type != "archive" {
			return nil, invalid("%s has type %s: loadout reads \"skill-md\" and \"archive\"", at, short(e.Type))
		}
		if !validDigest(e.Digest) {
			return nil, invalid("%s has digest %s: it must be \"sha256:\" and 64 lowercase hex digits", at, short(e.Digest))
		}
		u, err := artifactURL(base, e.URL)
		if err != nil {
			return nil, invalid("%s: %v", at, err)
		}
		if !f.allowed(u) {
			return nil, invalid("%s has url %s, refused: %s", at, short(u.String()), f.offOrigin(u))
		}
		p.entries = append(p.entries, indexEntry{name: e.Name, kind: e.Type, url: u, digest: e.Digest})
	}
	if legacy && len(p.entries) > 0 {
		p.notes = append(p.notes, "the index is in the 0.1.0 shape, without digests: only the index itself is pinned, not the files it lists; publish the 0.2.0 index (…/.well-known/agent-skills/index.json) for verified archives")
	}
	// A loadout publisher's warnings: skills it left out of its index are
	// worth knowing; the two about installers (executable bits dropped,
	// descriptions shortened in the index) do not apply here, since the
	// archives keep modes and SKILL.md is read whole.
	n := 0
	for _, w := range raw.Warnings {
		if w.Code == "executable-dropped" || w.Code == "description-shortened" {
			continue
		}
		if n++; n > maxIndexNotes {
			continue
		}
		p.notes = append(p.notes, fmt.Sprintf("the index warns (%s) about skill %s: %s", clip(w.Code, 40), short(w.Skill), clip(w.Message, 400)))
	}
	if n > maxIndexNotes {
		p.notes = append(p.notes, fmt.Sprintf("the index gives %d more warnings", n-maxIndexNotes))
	}
	return p, nil
}

// legacyFiles checks a 0.1.0 entry's file list.
func (f *IndexFetcher) legacyFiles(e rawEntry, at string) ([]string, error) {
	var files []string
	if err := json.Unmarshal(e.Files, &files); err != nil || len(files) == 0 {
		return nil, Errorf(f.spec.ID, CodeInvalid, "the index at %s: %s has no \"type\", \"url\" and \"digest\" (the 0.2.0 shape) and no \"files\" list of paths (the 0.1.0 shape)", f.index, at)
	}
	out := make([]string, 0, len(files))
	hasEntry := false
	seen := map[string]bool{}
	for _, p := range files {
		c, err := skill.CleanPath(p)
		if err != nil {
			return nil, Errorf(f.spec.ID, CodePath, "the index at %s: %s lists file %s, which is refused: %s", f.index, at, short(p), pathReason(err))
		}
		if seen[c] {
			return nil, Errorf(f.spec.ID, CodeInvalid, "the index at %s: %s lists file %q twice", f.index, at, c)
		}
		seen[c] = true
		if c == "SKILL.md" {
			hasEntry = true
		}
		out = append(out, c)
	}
	if !hasEntry {
		return nil, Errorf(f.spec.ID, CodeInvalid, "the index at %s: %s does not list SKILL.md", f.index, at)
	}
	return out, nil
}

func validDigest(d string) bool {
	h, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// artifactURL resolves an entry's url against the index's (after
// redirects, as a browser would) and refuses
// every scheme but http and https.
func artifactURL(base *url.URL, s string) (*url.URL, error) {
	if s == "" {
		return nil, errors.New("it has no url")
	}
	ref, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("its url %s cannot be read", short(s))
	}
	u := base.ResolveReference(ref)
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("its url %s is refused: artifacts are fetched over http or https only", short(s))
	}
	return u, nil
}

// get sends a GET, with the token to the index's host only, and returns a
// 200 response. Other statuses are CodeAuth (401, 403) or CodeNetwork.
func (f *IndexFetcher) get(ctx context.Context, u *url.URL, what string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, Errorf(f.spec.ID, CodeInvalid, "%s: %v", what, err)
	}
	if f.spec.Token != "" && sameOrigin(u, f.index) {
		req.Header.Set("Authorization", "Bearer "+f.spec.Token)
	}
	req.Header.Set("Accept-Encoding", "identity") // digests are of the bytes as published
	res, err := f.client.Do(req)
	if err != nil {
		var oe *originError
		if errors.As(err, &oe) {
			return nil, Errorf(f.spec.ID, CodeInvalid, "GET %s (%s) was redirected to %s, refused: %s", u, what, short(oe.to.String()), f.offOrigin(oe.to))
		}
		return nil, f.netErr(err, "GET %s (%s)", u, what)
	}
	if res.StatusCode == http.StatusOK {
		return res, nil
	}
	why := ""
	if sameOrigin(res.Request.URL, f.index) {
		// Only the index's own server is quoted: another origin's
		// answer is not for the sync's output.
		why = errorMessage(res)
	}
	res.Body.Close()
	status := strconv.Itoa(res.StatusCode) + " " + http.StatusText(res.StatusCode)
	switch res.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		hint := "give a token (\"token\": \"${ENV_VAR}\") that the server accepts"
		if f.spec.Token != "" {
			hint = "check the token"
		}
		if !sameOrigin(u, f.index) {
			hint = "the token is sent to the index's host only, and this is another host"
		}
		return nil, Errorf(f.spec.ID, CodeAuth, "GET %s (%s): %s%s: %s", u, what, status, why, hint)
	}
	return nil, Errorf(f.spec.ID, CodeNetwork, "GET %s (%s): %s%s", u, what, status, why)
}

// errorMessage is the message of an error response in the shape loadout
// (and many servers) answer with, {"error": {"message"}} or {"message"},
// as ` ("…")`, or "". At most maxErrorBody bytes are read.
func errorMessage(res *http.Response) string {
	const maxErrorBody = 4096
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	var v struct {
		Message string `json:"message"`
		Error   struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	m := v.Error.Message
	if m == "" {
		m = v.Message
	}
	if m == "" {
		return ""
	}
	return " (the server says " + strconv.Quote(clip(m, 200)) + ")"
}

// netErr is a transfer error: CodeNetwork, with the cause. The token is in
// no URL and no error net/http makes, and Errorf redacts userinfo.
func (f *IndexFetcher) netErr(err error, format string, args ...any) error {
	msg := fmt.Sprintf(format+": %v", append(args, err)...)
	if f.spec.Token != "" {
		msg = strings.ReplaceAll(msg, f.spec.Token, "***")
	}
	return &Error{Source: f.spec.ID, Code: CodeNetwork, Msg: Redact(msg), Err: err}
}

// budget counts what the snapshot holds against its Limits. downloaded
// counts the artifacts' bytes as transferred, written the files' bytes.
type budget struct {
	lim        Limits
	files      int
	written    int64
	downloaded int64
	// Reused across the snapshot's files and archives.
	buf  []byte
	gz   *gzip.Reader
	made map[string]bool // folders made so far
}

// copy is io.Copy through the budget's buffer (an *os.File's ReadFrom
// would take a new one each time).
func (b *budget) copy(w io.Writer, r io.Reader) (int64, error) {
	if b.buf == nil {
		b.buf = make([]byte, 32<<10)
	}
	return io.CopyBuffer(struct{ io.Writer }{w}, r, b.buf)
}

// limitErr is an artifact or file over one of the limits.
type limitErr struct{ msg string }

func (e *limitErr) Error() string { return e.msg }

// addFile counts one more file of size bytes (as its header says; the
// copy checks again).
func (b *budget) addFile(size int64) error {
	b.files++
	if b.lim.MaxFiles > 0 && b.files > b.lim.MaxFiles {
		return &limitErr{fmt.Sprintf("the snapshot would hold more than %d files (the maxFiles limit)", b.lim.MaxFiles)}
	}
	if b.lim.MaxFileBytes > 0 && size > b.lim.MaxFileBytes {
		return &limitErr{fmt.Sprintf("it is %d bytes, over the limit of %d for one file (maxFileBytes)", size, b.lim.MaxFileBytes)}
	}
	if b.lim.MaxBytes > 0 && b.written+size > b.lim.MaxBytes {
		return &limitErr{fmt.Sprintf("the snapshot would hold more than %d bytes (the maxBytes limit)", b.lim.MaxBytes)}
	}
	return nil
}

// fileRoom is how many bytes the next file may have.
func (b *budget) fileRoom() int64 {
	room := int64(1<<63 - 1)
	if b.lim.MaxFileBytes > 0 {
		room = b.lim.MaxFileBytes
	}
	if b.lim.MaxBytes > 0 && b.lim.MaxBytes-b.written < room {
		room = b.lim.MaxBytes - b.written
	}
	return room
}

// copyFile copies r into w, at most the budget's room, counting it.
func (b *budget) copyFile(w io.Writer, r io.Reader) error {
	room := b.fileRoom()
	n, err := b.copy(w, io.LimitReader(r, room+1))
	b.written += n
	if err != nil {
		return err
	}
	if n > room {
		if b.lim.MaxFileBytes > 0 && n > b.lim.MaxFileBytes {
			return &limitErr{fmt.Sprintf("it is over the limit of %d bytes for one file (maxFileBytes)", b.lim.MaxFileBytes)}
		}
		return &limitErr{fmt.Sprintf("the snapshot would hold more than %d bytes (the maxBytes limit)", b.lim.MaxBytes)}
	}
	return nil
}

// download GETs u into the download file of root, at most max bytes and at
// most what is left of the snapshot's download budget, and returns the
// file (at offset 0), its size and its digest. The caller closes and
// removes it.
func (f *IndexFetcher) download(ctx context.Context, root *os.Root, u *url.URL, what string, max int64, b *budget) (*os.File, int64, string, error) {
	if b.lim.MaxBytes > 0 && b.lim.MaxBytes-b.downloaded < max {
		max = b.lim.MaxBytes - b.downloaded
	}
	over := func() error {
		return Errorf(f.spec.ID, CodeLimit, "%s at %s is over the limit of %d bytes (the snapshot's maxBytes, or maxFileBytes for a single SKILL.md): raise the limit or leave the source out", what, u, max)
	}
	res, err := f.get(ctx, u, what)
	if err != nil {
		return nil, 0, "", err
	}
	defer res.Body.Close()
	if res.ContentLength > max {
		return nil, 0, "", over()
	}
	tmp, err := root.OpenFile(downloadName, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, 0, "", Errorf(f.spec.ID, CodeInvalid, "%s: creating the download file: %v", what, err)
	}
	h := sha256.New()
	n, err := b.copy(io.MultiWriter(tmp, h), io.LimitReader(res.Body, max+1))
	b.downloaded += n
	if err == nil && n > max {
		err = over()
	} else if err != nil {
		err = f.netErr(err, "reading %s from %s", what, u)
	}
	if err == nil {
		_, err = tmp.Seek(0, io.SeekStart)
	}
	if err != nil {
		tmp.Close()
		return nil, 0, "", err
	}
	return tmp, n, "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// fetchEntry downloads one 0.2.0 entry, verifies it and writes it.
func (f *IndexFetcher) fetchEntry(ctx context.Context, root *os.Root, e indexEntry, b *budget) error {
	what := fmt.Sprintf("the archive of skill %q", e.name)
	max := int64(1<<63 - 1)
	if e.kind == "skill-md" {
		what = fmt.Sprintf("the SKILL.md of skill %q", e.name)
		max = b.fileRoom()
	}
	tmp, size, got, err := f.download(ctx, root, e.url, what, max, b)
	if err != nil {
		return err
	}
	defer func() {
		tmp.Close()
		_ = root.Remove(downloadName)
	}()
	if got != e.digest {
		return Errorf(f.spec.ID, CodeDigest, "%s at %s does not match its digest in the index (the index says %s, the download is %s): it changed after the index was built, or was altered on the way; nothing of it was used. Run loadout sync to fetch the index again", what, e.url, e.digest, got)
	}
	if err := root.Mkdir(e.name, 0o755); err != nil {
		return Errorf(f.spec.ID, CodeInvalid, "skill %q: creating its folder: %v", e.name, err)
	}
	if e.kind == "skill-md" {
		if err := b.addFile(size); err != nil {
			return f.fileErr(e.name, "SKILL.md", err)
		}
		b.written += size
		tmp.Close()
		if err := root.Rename(downloadName, e.name+"/SKILL.md"); err != nil {
			return Errorf(f.spec.ID, CodeInvalid, "skill %q: %v", e.name, err)
		}
		return chmod(root, e.name+"/SKILL.md", false)
	}
	if err := unpack(ctx, tmp, size, root, e.name, b); err != nil {
		return f.fileErr(e.name, "", err)
	}
	return nil
}

// fetchLegacy downloads the files of a 0.1.0 entry from
// <index folder>/<name>/<path>, each at most the file limit.
func (f *IndexFetcher) fetchLegacy(ctx context.Context, root *os.Root, e indexEntry, b *budget) error {
	for _, p := range e.legacy {
		u := e.url.JoinPath("..", e.name, p) // beside the index: <folder>/<name>/<path>
		u.RawQuery, u.Fragment = "", ""
		what := fmt.Sprintf("file %q of skill %q", p, e.name)
		if err := b.addFile(0); err != nil {
			return f.fileErr(e.name, p, err)
		}
		tmp, size, _, err := f.download(ctx, root, u, what, b.fileRoom(), b)
		if err != nil {
			return err
		}
		tmp.Close()
		b.written += size
		if err := root.MkdirAll(path.Dir(e.name+"/"+p), 0o755); err != nil {
			_ = root.Remove(downloadName)
			return f.fileErr(e.name, p, err)
		}
		if err := root.Rename(downloadName, e.name+"/"+p); err != nil {
			_ = root.Remove(downloadName)
			return f.fileErr(e.name, p, err)
		}
		if err := chmod(root, e.name+"/"+p, false); err != nil {
			return err
		}
	}
	return nil
}

func chmod(root *os.Root, name string, exec bool) error {
	mode := fs.FileMode(0o644)
	if exec {
		mode = 0o755
	}
	return root.Chmod(name, mode) // umask-proof
}

// fileErr gives an unpacking error its code and names the skill (and the
// file, when known).
func (f *IndexFetcher) fileErr(name, file string, err error) error {
	var re *Error
	if errors.As(err, &re) {
		if re.Source == "" {
			re.Source = f.spec.ID
		}
		return re
	}
	at := fmt.Sprintf("skill %q", name)
	if file != "" {
		at += fmt.Sprintf(", file %q", file)
	}
	var le *limitErr
	if errors.As(err, &le) {
		return Errorf(f.spec.ID, CodeLimit, "%s: %v: raise the limit or leave the source out", at, err)
	}
	return &Error{Source: f.spec.ID, Code: CodeInvalid, Msg: Redact(at + ": " + err.Error()), Err: err}
}

// unpack writes the archive r (a .tar.gz or a .zip, told by its first
// bytes) into root/name/. Every path goes through skill.CleanPath; only
// regular files and folders are written (links, devices and pipes are
// CodePath refusals); b bounds files and bytes; no file is overwritten;
// SKILL.md must be at the archive's root. Errors are *Error (CodePath,
// CodeInvalid) or *limitErr, with the path; the skill's folder may hold a
// part of the files.
func unpack(ctx context.Context, r io.ReaderAt, size int64, root *os.Root, name string, b *budget) error {
	var magic [4]byte
	n, _ := r.ReadAt(magic[:], 0)
	var err error
	switch {
	case n >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		err = unpackTarGz(ctx, io.NewSectionReader(r, 0, size), root, name, b)
	case n == 4 && bytes.Equal(magic[:], []byte("PK\x03\x04")) || n == 4 && bytes.Equal(magic[:], []byte("PK\x05\x06")):
		err = unpackZip(ctx, r, size, root, name, b)
	default:
		return &Error{Code: CodeInvalid, Msg: fmt.Sprintf("the archive of skill %q is neither a .tar.gz nor a .zip", name)}
	}
	if err != nil {
		return err
	}
	if fi, err := root.Lstat(name + "/SKILL.md"); err != nil || !fi.Mode().IsRegular() {
		return &Error{Code: CodeInvalid, Msg: fmt.Sprintf("the archive of skill %q has no SKILL.md at its root: the archive's root must be the skill folder", name)}
	}
	return nil
}

// unpacker writes the entries of one archive.
type unpacker struct {
	root  *os.Root
	name  string
	b     *budget
	entry string // the SKILL.md written at the top, as the archive spells it
}

func (u *unpacker) refuse(p, format string, args ...any) error {
	return &Error{Code: CodePath, Msg: Redact(fmt.Sprintf("the archive of skill %q: entry %s is refused: ", u.name, short(p)) + clip(fmt.Sprintf(format, args...), 400))}
}

func (u *unpacker) broken(err error) error {
	return &Error{Code: CodeInvalid, Msg: fmt.Sprintf("the archive of skill %q cannot be read: %v", u.name, err), Err: err}
}

// clean checks an entry's path; dir entries may end in "/", and the root
// folder itself ("./") is "" with ok false.
func (u *unpacker) clean(p string, dir bool) (string, bool, error) {
	q := p
	if dir {
		q = strings.TrimRight(p, "/")
		if q == "" || q == "." {
			return "", false, nil
		}
	}
	c, err := skill.CleanPath(q)
	if err != nil {
		var pe *skill.PathError
		if errors.As(err, &pe) && pe.Code == skill.CodePathEmpty && dir {
			return "", false, nil
		}
		return "", false, u.refuse(p, "%s", pathReason(err))
	}
	return c, true, nil
}

func (u *unpacker) mkdir(p, clean string) error {
	full := u.name + "/" + clean
	if u.b.made[full] {
		return nil
	}
	if err := u.root.MkdirAll(full, 0o755); err != nil {
		return u.refuse(p, "%v", err)
	}
	if u.b.made == nil {
		u.b.made = map[string]bool{}
	}
	u.b.made[full] = true
	return nil
}

// write creates the file clean (never over an existing one) from r.
func (u *unpacker) write(p, clean string, size int64, exec bool, r io.Reader) error {
	if skill.IsEntryPath(clean) {
		// SKILL.md and skill.md side by side: which is the skill would
		// depend on the reader and, on a case-insensitive disk, on order.
		if u.entry != "" && u.entry != clean {
			return &Error{Code: CodePath, Msg: fmt.Sprintf("the archive of skill %q holds both %q and %q: a skill has one SKILL.md at its top, in any case; the publisher must remove one", u.name, u.entry, clean)}
		}
		u.entry = clean
	}
	if err := u.b.addFile(size); err != nil {
		return fmt.Errorf("file %q: %w", clean, err)
	}
	full := u.name + "/" + clean
	if i := strings.LastIndexByte(clean, '/'); i >= 0 {
		if err := u.mkdir(p, clean[:i]); err != nil {
			return err
		}
	}
	out, err := u.root.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return &Error{Code: CodeInvalid, Msg: fmt.Sprintf("the archive of skill %q holds %q twice", u.name, clean)}
		}
		return u.refuse(p, "%v", err)
	}
	err = u.b.copyFile(out, r)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	var le *limitErr
	if errors.As(err, &le) {
		return fmt.Errorf("file %q: %w", clean, err)
	}
	if err != nil {
		return u.broken(err)
	}
	return chmod(u.root, full, exec)
}

func unpackTarGz(ctx context.Context, r io.Reader, root *os.Root, name string, b *budget) error {
	u := &unpacker{root: root, name: name, b: b}
	gz := b.gz
	var err error
	if gz == nil {
		gz, err = gzip.NewReader(r)
	} else {
		err = gz.Reset(r)
	}
	if err != nil {
		return u.broken(err)
	}
	b.gz = gz // its decompressor is reused for the next archive
	tr := tar.NewReader(gz)
	for {
		if err := ctx.Err(); err != nil {
			return &Error{Code: CodeNetwork, Msg: "fetch stopped: " + err.Error(), Err: err}
		}
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return u.broken(err)
		}
		switch h.Typeflag {
		case tar.TypeXGlobalHeader:
			continue // pax metadata (git archive writes one): no file
		case tar.TypeDir:
			c, ok, err := u.clean(h.Name, true)
			if err != nil {
				return err
			}
			if ok {
				if err := u.mkdir(h.Name, c); err != nil {
					return err
				}
			}
		case tar.TypeReg, tar.TypeRegA:
			c, _, err := u.clean(h.Name, false)
			if err != nil {
				return err
			}
			if err := u.write(h.Name, c, h.Size, h.Mode&0o111 != 0, tr); err != nil {
				return err
			}
		default:
			return u.refuse(h.Name, "it is %s, and only regular files and folders are unpacked", tarKind(h))
		}
	}
}

func tarKind(h *tar.Header) string {
	switch h.Typeflag {
	case tar.TypeSymlink:
		return "a symbolic link (to " + short(h.Linkname) + ")"
	case tar.TypeLink:
		return "a hard link (to " + short(h.Linkname) + ")"
	case tar.TypeChar, tar.TypeBlock:
		return "a device"
	case tar.TypeFifo:
		return "a named pipe (FIFO)"
	}
	return "an entry of type " + strconv.Quote(string(h.Typeflag))
}

// short quotes a string from the remote for a message, cut to 120 bytes.
func short(s string) string { return strconv.Quote(clip(s, 120)) }

// clip cuts s to at most n bytes on a rune boundary, marking the cut, and
// replaces control characters (a remote's text goes into logs).
func clip(s string, n int) string {
	cut := false
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s, cut = s[:n], true
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if cut {
		s += "…"
	}
	return s
}

// pathReason is why skill.CleanPath refused a path, without the path
// (which the caller quotes, cut).
func pathReason(err error) string {
	var pe *skill.PathError
	if errors.As(err, &pe) {
		return pe.Reason
	}
	return err.Error()
}

// maxZipDirectory bounds the bytes of a zip's central directory that
// archive/zip reads into memory (one entry takes about 46 bytes plus its
// name there): enough for any archive within MaxFiles.
func maxZipDirectory(lim Limits) int64 {
	files := int64(lim.MaxFiles)
	if files <= 0 {
		files = int64(DefaultLimits.MaxFiles)
	}
	return files * (46 + skill.MaxPathLen + 512)
}

func unpackZip(ctx context.Context, r io.ReaderAt, size int64, root *os.Root, name string, b *budget) error {
	u := &unpacker{root: root, name: name, b: b}
	if dirSize, ok := zipDirectorySize(r, size); ok && dirSize > maxZipDirectory(b.lim) {
		return &limitErr{fmt.Sprintf("its zip directory is %d bytes, more than %d files can take (the maxFiles limit)", dirSize, b.lim.MaxFiles)}
	}
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return u.broken(err)
	}
	for _, zf := range zr.File {
		if err := ctx.Err(); err != nil {
			return &Error{Code: CodeNetwork, Msg: "fetch stopped: " + err.Error(), Err: err}
		}
		m := zf.Mode()
		switch {
		case m.IsDir():
			c, ok, err := u.clean(zf.Name, true)
			if err != nil {
				return err
			}
			if ok {
				if err := u.mkdir(zf.Name, c); err != nil {
					return err
				}
			}
		case m.IsRegular():
			c, _, err := u.clean(zf.Name, false)
			if err != nil {
				return err
			}
			if zf.UncompressedSize64 > 1<<62 {
				return &limitErr{fmt.Sprintf("file %q: its size is out of range", c)}
			}
			rc, err := zf.Open()
			if err != nil {
				return u.broken(err)
			}
			err = u.write(zf.Name, c, int64(zf.UncompressedSize64), m&0o111 != 0, rc)
			rc.Close()
			if err != nil {
				return err
			}
		default:
			kind := "a special file"
			if m&fs.ModeSymlink != 0 {
				kind = "a symbolic link"
			}
			return u.refuse(zf.Name, "it is %s, and only regular files and folders are unpacked", kind)
		}
	}
	return nil
}

// zipDirectorySize reads the end of central directory record (the last
// 22 bytes plus a comment of up to 65,535) for the directory's size.
func zipDirectorySize(r io.ReaderAt, size int64) (int64, bool) {
	const eocd = 22
	tail := int64(eocd + 65535)
	if tail > size {
		tail = size
	}
	buf := make([]byte, tail)
	if _, err := r.ReadAt(buf, size-tail); err != nil && err != io.EOF {
		return 0, false
	}
	i := bytes.LastIndex(buf, []byte("PK\x05\x06"))
	if i < 0 || len(buf)-i < eocd {
		return 0, false
	}
	d := buf[i:]
	n := int64(d[12]) | int64(d[13])<<8 | int64(d[14])<<16 | int64(d[15])<<24
	return n, true
}
