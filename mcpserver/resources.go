package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
)

const (
	scheme        = "skill://"
	entryName     = "SKILL.md" // every skill's entry file, whatever its case on disk
	mimeDirectory = "inode/directory"
	mimeMarkdown  = "text/markdown"
	// listTTLMs is the freshness hint of listings and reads. Changes are
	// also announced with list_changed notifications.
	listTTLMs = 60_000
	// metaOmitted is the _meta key listing skills left out of skills/list.
	metaOmitted = "io.github.loadout/omitted"
	// resourceTemplate serves reads of every file of every skill.
	resourceTemplate = "skill://{name}/{+path}"
)

// fileURI is the resource URI of a file of a skill. Path segments are
// escaped, so any file name round-trips through parseURI.
func fileURI(name, p string) string {
	if p == "" {
		return scheme + name
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return scheme + name + "/" + strings.Join(segs, "/")
}

// parseURI splits skill://<name>[/<path>] into the skill name and the
// unescaped path ("" for the skill's root).
func parseURI(uri string) (name, p string, ok bool) {
	rest, found := strings.CutPrefix(uri, scheme)
	if !found {
		return "", "", false
	}
	rest = strings.TrimSuffix(rest, "/")
	name, p, _ = strings.Cut(rest, "/")
	if name == "" {
		return "", "", false
	}
	p, err := url.PathUnescape(p)
	if err != nil {
		return "", "", false
	}
	return name, p, true
}

func cacheScope(ctx context.Context) string {
	if service.PrincipalFrom(ctx).Open {
		return "public"
	}
	return "private"
}

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// installTemplate adds (or replaces) the one resource template that serves
// every skill file; replacing it makes the SDK send resources/list_changed.
func (s *server) installTemplate() {
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: resourceTemplate,
		Name:        "skill-file",
		Title:       "A file of a skill",
		Description: "Every file of every skill of this agent: skill://<name>/SKILL.md is the entry file (text/markdown), other paths are relative to the skill folder.",
	}, s.readResource)
}

// skillFile is one file of a skill as the extension lists it.
type skillFile struct {
	path string // as in the URI: SKILL.md for the entry file
	mime string
	size int64 // from the manifest; -1 when unknown (the entry file)
}

// files lists a skill's files in listing order: SKILL.md, then the
// manifest's files (sorted by path).
func files(sk *skill.Skill) []skillFile {
	out := make([]skillFile, 0, 1+len(sk.Files))
	out = append(out, skillFile{path: entryName, mime: mimeMarkdown, size: -1})
	for _, f := range sk.Files {
		if f.Path == entryName {
			continue // a supporting file cannot take the entry's URI
		}
		out = append(out, skillFile{path: f.Path, mime: f.ContentType, size: f.Size})
	}
	return out
}

// realPath maps a URI path to the path the skill reads.
func realPath(sk *skill.Skill, p string) string {
	if p == entryName {
		return sk.Entry
	}
	return p
}

func (f skillFile) resource(sk *skill.Skill) *mcp.Resource {
	r := &mcp.Resource{URI: fileURI(sk.Name, f.path), Name: f.path, MIMEType: f.mime}
	if f.size > 0 {
		r.Size = f.size
	}
	if f.path == entryName {
		r.Name, r.Description = sk.Name, sk.Description
	}
	return r
}

// listResources answers resources/list from the catalog, page by page:
// every file of every skill, SKILL.md first within a skill. The cursor
// names the next (skill, file index).
func (s *server) listResources(ctx context.Context, req *mcp.ListResourcesRequest) (*mcp.ListResourcesResult, error) {
	l, v, err := s.loadout(ctx)
	if err != nil {
		return nil, err
	}
	var cursor string
	if req.Params != nil {
		cursor = req.Params.Cursor
	}
	startName, startFile, err := decodeCursor(cursor)
	if err != nil {
		return nil, err
	}
	names := l.Names()
	page := s.opt.PageSize * 10
	res := &mcp.ListResourcesResult{Resources: []*mcp.Resource{},
		Cacheable: mcp.Cacheable{TTLMs: listTTLMs, CacheScope: cacheScope(ctx)}}
	for i := sort.SearchStrings(names, startName); i < len(names); i++ {
		e, ok := l.Lookup(names[i])
		if !ok || strictProblem(l, v, e.Skill) != "" {
			continue
		}
		fs := files(e.Skill)
		j := 0
		if names[i] == startName {
			j = startFile
		}
		for ; j < len(fs); j++ {
			if len(res.Resources) == page {
				res.NextCursor = encodeCursor(names[i], j)
				return res, nil
			}
			res.Resources = append(res.Resources, fs[j].resource(e.Skill))
		}
	}
	return res, nil
}

func encodeCursor(name string, i int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(name + "\x00" + strconv.Itoa(i)))
}

// nameAfter is where a page of a listing by skill name starts: the index
// in names of the first name after the one the cursor holds (0 for no
// cursor).
func nameAfter(names []string, cursor string) (int, error) {
	after, _, err := decodeCursor(cursor)
	if err != nil {
		return 0, err
	}
	i := sort.SearchStrings(names, after)
	if cursor != "" && i < len(names) && names[i] == after {
		i++
	}
	return i, nil
}

func decodeCursor(c string) (string, int, error) {
	if c == "" {
		return "", 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		name, num, ok := strings.Cut(string(b), "\x00")
		if i, err := strconv.Atoi(num); ok && err == nil && i >= 0 {
			return name, i, nil
		}
	}
	return "", 0, invalidParams("invalid cursor %q: pass back the nextCursor of the previous page", c)
}

// readResource serves resources/read of skill://<name>/<path> through the
// service, so the read is authorized and leaves a receipt. The whole file
// is returned, as text when it is UTF-8, not empty and not flagged binary,
// else as a blob: the bytes are exactly those the listing's digest covers.
func (s *server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	l, _, err := s.loadout(ctx)
	if err != nil {
		return nil, err
	}
	name, p, ok := parseURI(uri)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	e, ok := l.Lookup(name)
	if !ok {
		if b, blocked := l.BlockedName(name); blocked {
			// Through the service, so that the refusal leaves its receipt.
			res, _ := s.svc.ReadFile(ctx, service.PrincipalFrom(ctx), s.agent, name, p, catalog.ReadOptions{}, callFrom(ctx).transport)
			if res.Message == "" {
				res.Message = catalog.BlockedText(name, b.Block)
			}
			return nil, invalidParams("%s: %s", uri, res.Message)
		}
		return nil, invalidParams("no skill is served at %s", uri)
	}
	if p == "" || isDir(e.Skill, p) {
		return nil, invalidParams("%s is a directory: list it with resources/directory/read", uri)
	}
	rp := realPath(e.Skill, p)
	res, err := s.svc.ReadFile(ctx, service.PrincipalFrom(ctx), s.agent, name, rp,
		catalog.ReadOptions{Max: MaxSkillBytes}, callFrom(ctx).transport)
	if err != nil {
		return nil, s.rpcError(err)
	}
	switch res.Status {
	case catalog.StatusOK:
	case catalog.StatusError:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: res.Message}
	default:
		return nil, invalidParams("%s: %s", uri, res.Message)
	}
	c := &mcp.ResourceContents{URI: uri, MIMEType: res.ContentType}
	if p == entryName {
		c.MIMEType = mimeMarkdown
	}
	if f, ok := e.Skill.File(rp); (ok && f.Binary) || !utf8.Valid(res.Data) || len(res.Data) == 0 {
		// An empty file goes as an empty blob: the SDK drops an empty
		// "text" (omitempty, no custom marshaler), and a content with
		// neither text nor blob is refused by every TypeScript client. A
		// non-nil empty blob is always sent, as "blob": "".
		c.Blob = res.Data
		if c.Blob == nil {
			c.Blob = []byte{}
		}
	} else {
		c.Text = string(res.Data)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c},
		Cacheable: mcp.Cacheable{TTLMs: listTTLMs, CacheScope: cacheScope(ctx)}}, nil
}

// isDir reports whether p is a folder of the skill: one holding a file, or
// an empty folder (or one holding only empty folders).
func isDir(sk *skill.Skill, p string) bool {
	prefix := p + "/"
	i := sort.Search(len(sk.Files), func(i int) bool { return sk.Files[i].Path >= prefix })
	if i < len(sk.Files) && strings.HasPrefix(sk.Files[i].Path, prefix) {
		return true
	}
	if j := sort.SearchStrings(sk.Dirs, p); j < len(sk.Dirs) && sk.Dirs[j] == p {
		return true
	}
	j := sort.SearchStrings(sk.Dirs, prefix)
	return j < len(sk.Dirs) && strings.HasPrefix(sk.Dirs[j], prefix)
}

// SkillEntry is one skill as skills/list and skills/get return it.
type SkillEntry struct {
	URI string `json:"uri"`
	// Frontmatter is the frontmatter of the SKILL.md resources/read serves,
	// typed as the extension's clients read it (skill.TypedFrontmatter):
	// a JSON object in key order, nothing added.
	Frontmatter json.RawMessage `json:"frontmatter"`
	Resources   []SkillResource `json:"resources"`
}

// SkillResource is one file of a skill with the digest and size of the
// exact bytes resources/read serves.
type SkillResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// manifest is a skill's entry, computed once per skill value (skills are
// immutable; a reload makes new ones). problem says why the skill is not
// served through the extension; it starts with a stable code (see
// extension.go: invalid-name, invalid-description, invalid-compatibility,
// invalid-metadata, invalid-frontmatter, invalid-encoding; and
// too-many-files, too-large, unreadable here).
type manifest struct {
	entry   *SkillEntry
	problem string
}

func (v *view) manifest(sk *skill.Skill) *manifest {
	if m, ok := v.manifests.Load(sk); ok {
		return m.(*manifest)
	}
	m, _ := v.manifests.LoadOrStore(sk, buildManifest(sk, v.validity(sk)))
	return m.(*manifest)
}

func buildManifest(sk *skill.Skill, val *validity) *manifest {
	fs := files(sk)
	if len(fs) > MaxSkillFiles {
		return &manifest{problem: fmt.Sprintf("too-many-files: it has %d files, over the extension's limit of %d per skill", len(fs), MaxSkillFiles)}
	}
	var listed int64
	for _, f := range fs {
		listed += max(f.size, 0)
	}
	if listed > MaxSkillBytes {
		return &manifest{problem: fmt.Sprintf("too-large: its files hold %d bytes, over the extension's limit of %d per skill", listed, MaxSkillBytes)}
	}
	if val.problem != "" {
		return &manifest{problem: val.problem}
	}
	front, err := json.Marshal(val.frontmatter)
	if err != nil {
		return &manifest{problem: fmt.Sprintf("invalid-frontmatter: SKILL.md's frontmatter cannot be written as JSON (%v)", err)}
	}
	e := &SkillEntry{URI: fileURI(sk.Name, entryName), Frontmatter: front, Resources: make([]SkillResource, 0, len(fs))}
	var total int64
	for _, f := range fs {
		// The digest covers the bytes the skill's reader returns, which
		// are the bytes resources/read serves (a stored skill's are a
		// fixed version). Files are hashed in pieces, never held whole,
		// and a file over the skill's size cap is refused unread.
		c, err := sk.OpenWhole(realPath(sk, f.path))
		if err != nil {
			return &manifest{problem: fmt.Sprintf("unreadable: %s could not be read (%v), so its manifest would be incomplete", f.path, err)}
		}
		size := c.Size()
		total += size
		if total > MaxSkillBytes {
			c.Close()
			return &manifest{problem: fmt.Sprintf("too-large: its files hold more than %d bytes, over the extension's limit per skill", MaxSkillBytes)}
		}
		digest, err := skill.DigestOf(c)
		c.Close()
		if err != nil {
			return &manifest{problem: fmt.Sprintf("unreadable: %s could not be read (%v), so its manifest would be incomplete", f.path, err)}
		}
		e.Resources = append(e.Resources, SkillResource{URI: fileURI(sk.Name, f.path), Digest: digest, Size: size})
	}
	return &manifest{entry: e}
}

// ListSkillsParams are the params of skills/list.
type ListSkillsParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// ListSkillsResult is the result of skills/list.
type ListSkillsResult struct {
	mcp.ResultBase
	ResultType string        `json:"resultType"`
	Skills     []*SkillEntry `json:"skills"`
	NextCursor string        `json:"nextCursor,omitempty"`
	TTLMs      int           `json:"ttlMs"`
	CacheScope string        `json:"cacheScope"`
}

// Omitted is a skill left out of a skills/list page, in its _meta.
type Omitted struct {
	URI    string `json:"uri"`
	Reason string `json:"reason"`
}

// listSkills serves skills/list: each page covers PageSize skill names in
// order, and an entry is never split. Skills over the extension's limits,
// skills its rules refuse (extension.go) and skills whose files cannot all
// be read are left out, logged, and named in the page's _meta under
// "io.github.loadout/omitted" with the reason. Hidden skills
// (disable-model-invocation) are listed: hosts may offer them to a person.
func (s *server) listSkills(ctx context.Context, ss *mcp.ServerSession, params *ListSkillsParams) (*ListSkillsResult, error) {
	l, v, err := s.loadout(ctx)
	if err != nil {
		return nil, err
	}
	var cursor string
	if params != nil {
		cursor = params.Cursor
	}
	names := l.Names()
	i, err := nameAfter(names, cursor)
	if err != nil {
		return nil, err
	}
	res := &ListSkillsResult{ResultType: "complete", Skills: []*SkillEntry{}, TTLMs: listTTLMs, CacheScope: cacheScope(ctx)}
	var omitted []Omitted
	end := min(i+s.opt.PageSize, len(names))
	for ; i < end; i++ {
		e, ok := l.Lookup(names[i])
		if !ok {
			continue
		}
		m := v.manifest(e.Skill)
		if m.entry == nil {
			omitted = append(omitted, Omitted{URI: fileURI(names[i], entryName), Reason: m.problem})
			s.warnOnce(ctx, ss, v, names[i], m.problem)
			continue
		}
		res.Skills = append(res.Skills, m.entry)
	}
	if end < len(names) {
		res.NextCursor = encodeCursor(names[end-1], 0)
	}
	if len(omitted) > 0 {
		res.Meta = mcp.Meta{metaOmitted: omitted}
	}
	return res, nil
}

// GetSkillParams are the params of skills/get.
type GetSkillParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

// GetSkillResult is the result of skills/get.
type GetSkillResult struct {
	mcp.ResultBase
	ResultType string      `json:"resultType"`
	Skill      *SkillEntry `json:"skill"`
	TTLMs      int         `json:"ttlMs"`
	CacheScope string      `json:"cacheScope"`
}

// getSkill serves skills/get: -32602 for a URI that is not the SKILL.md of
// a skill this agent has, and for a skill left out of skills/list, with
// the reason.
func (s *server) getSkill(ctx context.Context, ss *mcp.ServerSession, params *GetSkillParams) (*GetSkillResult, error) {
	l, v, err := s.loadout(ctx)
	if err != nil {
		return nil, err
	}
	if params == nil || params.URI == "" {
		return nil, invalidParams("skills/get needs params.uri, the URI of a skill's SKILL.md (skill://<name>/SKILL.md)")
	}
	name, p, ok := parseURI(params.URI)
	e, found := l.Lookup(name)
	if !ok || !found || p != entryName {
		return nil, invalidParams("no skill is served at %s", params.URI)
	}
	m := v.manifest(e.Skill)
	if m.entry == nil {
		s.warnOnce(ctx, ss, v, name, m.problem)
		return nil, invalidParams("skill %s is not served through the skills extension: %s%s", name, m.problem, stillServed(l, v, e.Skill))
	}
	return &GetSkillResult{ResultType: "complete", Skill: m.entry, TTLMs: listTTLMs, CacheScope: cacheScope(ctx)}, nil
}

// ReadDirectoryParams are the params of resources/directory/read.
type ReadDirectoryParams struct {
	mcp.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

// ReadDirectoryResult is the result of resources/directory/read.
type ReadDirectoryResult struct {
	mcp.ResultBase
	ResultType string          `json:"resultType"`
	Resources  []*mcp.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
	TTLMs      int             `json:"ttlMs"`
	CacheScope string          `json:"cacheScope"`
}

// readDirectory serves resources/directory/read: the direct children of a
// skill's root or of one of its folders, folders as inode/directory. An
// empty folder (skill.Skill.Dirs) is listed as a child and answers an
// empty list.
func (s *server) readDirectory(ctx context.Context, _ *mcp.ServerSession, params *ReadDirectoryParams) (*ReadDirectoryResult, error) {
	l, v, err := s.loadout(ctx)
	if err != nil {
		return nil, err
	}
	if params == nil || params.URI == "" {
		return nil, invalidParams("resources/directory/read needs params.uri, e.g. skill://<name> or skill://<name>/references")
	}
	name, dir, ok := parseURI(params.URI)
	e, found := l.Lookup(name)
	if !ok || !found {
		return nil, invalidParams("no skill is served at %s", params.URI)
	}
	if p := strictProblem(l, v, e.Skill); p != "" {
		return nil, refusedInvalid(name, p)
	}
	if dir != "" && !isDir(e.Skill, dir) {
		return nil, invalidParams("%s is not a directory resource", params.URI)
	}
	after, _, err := decodeCursor(params.Cursor)
	if err != nil {
		return nil, err
	}
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	var children []*mcp.Resource
	seen := map[string]bool{}
	for _, f := range files(e.Skill) {
		rest, ok := strings.CutPrefix(f.path, prefix)
		if !ok {
			continue
		}
		if sub, _, nested := strings.Cut(rest, "/"); nested {
			if !seen[sub] {
				seen[sub] = true
				children = append(children, &mcp.Resource{URI: fileURI(name, prefix+sub), Name: sub, MIMEType: mimeDirectory})
			}
			continue
		}
		r := f.resource(e.Skill)
		r.Name = path.Base(f.path)
		children = append(children, r)
	}
	for _, d := range e.Skill.Dirs {
		rest, ok := strings.CutPrefix(d, prefix)
		if !ok || rest == "" {
			continue
		}
		sub, _, _ := strings.Cut(rest, "/")
		if !seen[sub] {
			seen[sub] = true
			children = append(children, &mcp.Resource{URI: fileURI(name, prefix+sub), Name: sub, MIMEType: mimeDirectory})
		}
	}
	sort.Slice(children, func(i, j int) bool { return children[i].Name < children[j].Name })
	start := 0
	if params.Cursor != "" {
		start = sort.Search(len(children), func(i int) bool { return children[i].Name > after })
	}
	page := s.opt.PageSize * 10
	res := &ReadDirectoryResult{ResultType: "complete", Resources: children[start:min(start+page, len(children))],
		TTLMs: listTTLMs, CacheScope: cacheScope(ctx)}
	if start+page < len(children) {
		res.NextCursor = encodeCursor(children[start+page-1].Name, 0)
	}
	if res.Resources == nil {
		res.Resources = []*mcp.Resource{}
	}
	return res, nil
}
