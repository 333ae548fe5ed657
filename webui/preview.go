package webui

import (
	"bytes"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/inert"
	"github.com/loadout/loadout/service"
)

// The Preview tab and the skill's files inside the UI. A skill's Markdown
// is rendered with goldmark and GFM, never with raw HTML (goldmark drops
// it unless told otherwise, and it is not told). Every link and image URL
// is checked: only relative paths, http(s) and mailto survive; relative
// ones resolve to the skill's own files (/ui/skills/NAME/files/PATH) or,
// for Markdown files, to their rendered view (/ui/skills/NAME/view/PATH);
// images from elsewhere become links, so no request leaves the origin.
// A link or image naming this server itself (the host the page was asked
// for, at any port or scheme, or a loopback name of its port when it was
// asked for on loopback) is shown as text, never a live link: a click on
// it would run as the admin reading the page, and a skill's own files are
// linked by relative paths.
// The files are served through the service (svc.ReadFile with the
// caller's principal) under internal/inert's headers, as the API serves
// them, so an SVG or HTML file of a skill never runs script even when
// opened directly.

// MaxPreviewFileBytes is the largest file of a skill the UI serves or
// renders (a larger one is refused with a message saying how to get it:
// the API's ranged reads).
const MaxPreviewFileBytes = 8 << 20

// uiTransport names the UI in the receipts of the files it reads.
const uiTransport = "ui"

var (
	keyName = parser.NewContextKey() // the skill's name
	keyBase = parser.NewContextKey() // the folder of the file rendered, relative to the skill
	keyDown = parser.NewContextKey() // how many levels the headings go down
	keySelf = parser.NewContextKey() // the host:port the page was asked for (selfHost)
)

var md = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithParserOptions(parser.WithAutoHeadingID(), parser.WithASTTransformers(util.Prioritized(linkRewriter{}, 100))),
	// Registered after GFM's task-box renderer (priority 500; lower runs
	// later and its registration wins), so this one draws the boxes.
	goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(taskBoxRenderer{}, 0))),
)

// renderMarkdown renders a Markdown file of a skill (file is its path in
// the skill; "SKILL.md" for the body) to sanitised HTML. Its headings go
// down by down levels (at most to h6), so they follow the page's own.
// self is the host:port the page was asked for (selfHost): links to it
// are not live.
func renderMarkdown(skillName, file, self string, src []byte, down int) (template.HTML, error) {
	ctx := parser.NewContext()
	ctx.Set(keyName, skillName)
	ctx.Set(keySelf, self)
	ctx.Set(keyBase, path.Dir(file))
	ctx.Set(keyDown, down)
	var b bytes.Buffer
	if err := md.Convert(src, &b, parser.WithContext(ctx)); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil
}

// linkRewriter checks and rewrites every link and image.
type linkRewriter struct{}

func (linkRewriter) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	name, _ := pc.Get(keyName).(string)
	base, _ := pc.Get(keyBase).(string)
	down, _ := pc.Get(keyDown).(int)
	self, _ := pc.Get(keySelf).(string)
	var links []ast.Node
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			switch h := n.(type) {
			case *ast.Link, *ast.Image, *ast.AutoLink:
				links = append(links, n)
			case *ast.Heading:
				h.Level = min(6, h.Level+down)
			}
		}
		return ast.WalkContinue, nil
	})
	src := reader.Source()
	for _, n := range links {
		switch n := n.(type) {
		case *ast.AutoLink:
			if u := safeURL(name, base, self, string(n.URL(src)), false); u.href == "" {
				unwrap(n, string(n.Label(src)), "")
			} else {
				n.SetAttributeString("rel", []byte("noopener noreferrer nofollow"))
			}
		case *ast.Link:
			u := safeURL(name, base, self, string(n.Destination), false)
			if u.href == "" {
				unwrap(n, "", u.self)
				continue
			}
			n.Destination = []byte(u.href)
			if u.external {
				n.SetAttributeString("rel", []byte("noopener noreferrer nofollow"))
			}
		case *ast.Image:
			u := safeURL(name, base, self, string(n.Destination), true)
			switch {
			case u.href == "":
				unwrap(n, "", u.self)
			case u.external:
				// Not loaded: the UI fetches nothing from elsewhere. It
				// becomes a link to the image.
				l := ast.NewLink()
				l.Destination = []byte(u.href)
				l.Title = n.Title
				l.SetAttributeString("rel", []byte("noopener noreferrer nofollow"))
				for c := n.FirstChild(); c != nil; {
					next := c.NextSibling()
					l.AppendChild(l, c)
					c = next
				}
				if !l.HasChildren() {
					l.AppendChild(l, ast.NewString([]byte("image")))
				}
				n.Parent().ReplaceChild(n.Parent(), n, l)
			default:
				n.Destination = []byte(u.href)
			}
		}
	}
}

// unwrap replaces a link or image by its text (its children), or by label,
// followed by " (target)" when target is set: the URL of a link to this
// server, shown so a reader sees where it pointed.
func unwrap(n ast.Node, label, target string) {
	p := n.Parent()
	if p == nil {
		return
	}
	if label != "" {
		p.InsertBefore(p, n, ast.NewString([]byte(label)))
	}
	for c := n.FirstChild(); c != nil; {
		next := c.NextSibling()
		p.InsertBefore(p, n, c)
		c = next
	}
	if target != "" {
		p.InsertBefore(p, n, ast.NewString([]byte(" ("+target+")")))
	}
	p.RemoveChild(p, n)
}

type checkedURL struct {
	href     string // "" when refused
	external bool
	self     string // when refused as a URL of this server: the URL, to show as text
}

// safeURL checks one link or image URL of a skill's Markdown: http(s) and
// mailto (links only) pass as they are, unless an http(s) URL names this
// server (self is the host the page was asked for; see sameServer); a
// relative path resolves inside the skill (base is the folder of the
// file it is in) to the UI's view of the file; an in-page #anchor stays.
// Anything else (javascript:, data:, file:, an absolute path into the UI
// or the API, //host, a path out of the skill) is refused.
func safeURL(skillName, base, self, raw string, image bool) checkedURL {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return checkedURL{}
	}
	if strings.HasPrefix(raw, "#") {
		if image {
			return checkedURL{}
		}
		return checkedURL{href: raw}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return checkedURL{}
	}
	if u.Scheme != "" {
		switch strings.ToLower(u.Scheme) {
		case "http", "https":
			if u.Host == "" {
				return checkedURL{}
			}
			if sameServer(u, self) {
				return checkedURL{self: u.String()}
			}
			return checkedURL{href: u.String(), external: true}
		case "mailto":
			if image {
				return checkedURL{}
			}
			return checkedURL{href: u.String(), external: true}
		}
		return checkedURL{}
	}
	if u.Host != "" || u.User != nil || strings.HasPrefix(u.Path, "/") || strings.Contains(raw, "\\") {
		return checkedURL{}
	}
	p := path.Clean(path.Join(base, u.Path))
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return checkedURL{}
	}
	href := fileURL(skillName, p, !image && isMarkdown(p))
	if u.Fragment != "" && !image {
		href += "#" + url.PathEscape(u.Fragment)
	}
	return checkedURL{href: href}
}

// sameServer says whether an http(s) URL may reach the server a page was
// asked for at self (selfHost: host:port). It errs towards yes, since yes
// only costs a live link:
//   - the same host name, at any port or scheme: a redirect to https, or a
//     proxy's other port, lands on this server, and cookies are shared
//     across ports;
//   - when self is loopback, any loopback or unspecified address
//     (localhost, 127.0.0.2, [::1], 0.0.0.0) at self's port;
//   - a host a browser would rewrite before use: one that is not plain
//     ASCII (IDNA maps full-width letters and dots and drops soft
//     hyphens), or holds a percent escape.
//
// Host names compare as a browser reads them: without case, without a
// trailing dot, and IPv4 written as a number, in hex or octal, or with
// fewer dots in its dotted form (the WHATWG URL standard's IPv4 parser).
func sameServer(u *url.URL, self string) bool {
	if self == "" {
		return false
	}
	raw := u.Hostname()
	for i := 0; i < len(raw); i++ {
		if raw[i] >= 0x80 || raw[i] == '%' {
			return true
		}
	}
	sh, sp, err := net.SplitHostPort(self)
	if err != nil {
		return false
	}
	h, s := canonHost(raw), canonHost(sh)
	if h == s {
		return true
	}
	return isLoopback(h) && isLoopback(s) && portOf(u.Port(), u.Scheme) == portOf(sp, "")
}

// selfHost is the host:port a request was sent to, as its URLs name it:
// Request.Host, with the scheme's port when it gives none.
func selfHost(r *http.Request) string {
	if _, _, err := net.SplitHostPort(r.Host); err == nil {
		return r.Host
	}
	port := "80"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		port = "443"
	}
	return net.JoinHostPort(strings.Trim(r.Host, "[]"), port)
}

// portOf is a URL's port as a number (0080 is 80), the scheme's own when
// it has none; -1 when it is not a port.
func portOf(p, scheme string) int {
	if p == "" {
		if strings.EqualFold(scheme, "https") {
			return 443
		}
		return 80
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 || n > 65535 {
		return -1
	}
	return n
}

// canonHost is a host name as a browser uses it: lower case, without a
// trailing dot, an IP in its canonical form.
func canonHost(h string) string {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if strings.Contains(h, ":") {
		if ip := net.ParseIP(h); ip != nil {
			return ip.String()
		}
		return h
	}
	if ip, ok := parseIPv4(h); ok {
		return ip.String()
	}
	return h
}

// parseIPv4 is the WHATWG URL standard's IPv4 parser: up to four parts,
// each decimal, 0x hex or 0 octal, the last filling the bytes left. ok is
// false when h is not an IPv4 address that way.
func parseIPv4(h string) (net.IP, bool) {
	parts := strings.Split(h, ".")
	if len(parts) > 4 || len(parts) == 0 {
		return nil, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		base := 10
		switch {
		case len(p) >= 2 && (p[:2] == "0x"):
			base, p = 16, p[2:]
		case len(p) >= 2 && p[0] == '0':
			base, p = 8, p[1:]
		}
		if p == "" {
			if base != 16 {
				return nil, false
			}
			p = "0" // "0x" alone is 0
		}
		n, err := strconv.ParseUint(p, base, 64)
		if err != nil {
			return nil, false
		}
		nums[i] = n
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return nil, false
		}
		v |= n << (8 * (3 - i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return nil, false
	}
	v |= last
	return net.IPv4(byte(v>>24), byte(v>>16), byte(v>>8), byte(v)), true
}

// isLoopback says whether a canonical host reaches this machine itself.
func isLoopback(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}

func isMarkdown(p string) bool {
	ext := strings.ToLower(path.Ext(p))
	return ext == ".md" || ext == ".markdown"
}

// fileURL is the UI's URL of a file of a skill: its rendered view (view)
// or its bytes. SKILL.md's view is the Preview tab.
func fileURL(skillName, p string, view bool) string {
	if view && (p == "SKILL.md" || p == "skill.md") {
		return "/ui/skills/" + url.PathEscape(skillName) + "?tab=preview"
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	kind := "files"
	if view {
		kind = "view"
	}
	return "/ui/skills/" + url.PathEscape(skillName) + "/" + kind + "/" + strings.Join(segs, "/")
}

// previewHeadingDown: the preview sits under the page's h1 and the
// tab's h2, so a skill's # heading shows as h3.
const previewHeadingDown = 2

// previewData is what frag_preview.html and file.html show.
type previewData struct {
	Name, File string
	HTML       template.HTML
	Err        string
	Files      []fileLink
}

type fileLink struct {
	Path, Href, Size string
}

func (u *ui) tabPreview(w http.ResponseWriter, r *http.Request, sp *skillPage) (template.HTML, bool) {
	d := previewData{Name: sp.Name, File: sp.Skill.Entry}
	body, err := sp.Skill.Body()
	if err != nil {
		d.Err = "SKILL.md could not be read: " + err.Error()
	} else if d.HTML, err = renderMarkdown(sp.Name, sp.Skill.Entry, selfHost(r), []byte(body), previewHeadingDown); err != nil {
		d.Err = "SKILL.md could not be rendered: " + err.Error()
	}
	for _, f := range sp.Skill.Files {
		d.Files = append(d.Files, fileLink{Path: f.Path, Href: fileURL(sp.Name, f.Path, isMarkdown(f.Path)), Size: humanBytes(f.Size)})
	}
	return u.tabFragment(w, r, "frag_preview.html", d)
}

// tabFragment renders a tab's fragment, or the error page.
func (u *ui) tabFragment(w http.ResponseWriter, r *http.Request, name string, data any) (template.HTML, bool) {
	h, err := u.fragment(name, data)
	if err != nil {
		u.log.Error("ui: rendering a tab failed", "fragment", name, "err", err)
		u.fail(w, r, http.StatusInternalServerError, "This tab could not be shown", "The server could not render it; its log says why.")
		return "", false
	}
	return h, true
}

// readSkillFile reads a file of a skill through the service, as the
// caller, from the loadout the caller sees. ok is false when it wrote an
// error page.
func (u *ui) readSkillFile(w http.ResponseWriter, r *http.Request) (catalog.FileResult, bool) {
	l, err := u.visible(r)
	if err != nil {
		u.failErr(w, r, err)
		return catalog.FileResult{}, false
	}
	name, p := r.PathValue("name"), r.PathValue("path")
	var res catalog.FileResult
	if pr := principal(r); canRead(pr) && !pr.Admin() {
		// A viewer (author, reviewer) reads the file from the catalog it
		// sees, as GET /v1/skills/{name}/files does: it has no agent's
		// rights, so no agent's read (and receipt) is made for it.
		res = l.ReadFile(name, p, catalog.ReadOptions{Max: MaxPreviewFileBytes})
	} else {
		res, err = u.svc.ReadFile(r.Context(), pr, l.Spec.AgentID, name, p, catalog.ReadOptions{Max: MaxPreviewFileBytes}, uiTransport)
	}
	if err != nil {
		u.failErr(w, r, err)
		return res, false
	}
	switch res.Status {
	case catalog.StatusOK:
		return res, true
	case catalog.StatusNotFound:
		u.fail(w, r, http.StatusNotFound, "No such file", res.Message+" Pick a file from the skill's Files tab.")
	case catalog.StatusTooLarge:
		u.fail(w, r, http.StatusRequestEntityTooLarge, "File too large to show", res.Message+" The UI shows files up to "+humanBytes(MaxPreviewFileBytes)+"; read larger ones in ranges through the API (GET /v1/skills/"+name+"/files/"+p+" with a Range header).")
	case catalog.StatusRefused:
		u.fail(w, r, http.StatusForbidden, "File refused", res.Message)
	case catalog.StatusBlocked:
		u.refuse(w, r, http.StatusForbidden, service.CodeBlocked, "Skill blocked", res.Message)
	default:
		u.fail(w, r, http.StatusConflict, "File not readable", res.Message)
	}
	return res, false
}

// skillFile serves the bytes of a skill's file under internal/inert's
// headers, as the API does (images inline with their type, an SVG as an
// image only to an <img>, other text as text/plain, anything else as an
// attachment; nosniff and a sandbox CSP), so nothing in it runs.
func (u *ui) skillFile(w http.ResponseWriter, r *http.Request) {
	res, ok := u.readSkillFile(w, r)
	if !ok {
		return
	}
	h := w.Header()
	inert.Set(h, r, res.Path, res.ContentType, res.Encoding == "utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(res.Data)))
	w.Write(res.Data)
}

// skillFileView renders a Markdown file of a skill inside the UI (other
// text files as text), with its links resolved like the preview's.
func (u *ui) skillFileView(w http.ResponseWriter, r *http.Request) {
	res, ok := u.readSkillFile(w, r)
	if !ok {
		return
	}
	name := r.PathValue("name")
	d := previewData{Name: name, File: res.Path}
	switch {
	case res.Encoding != "utf-8":
		d.Err = res.Path + " is not text: download it instead."
	case isMarkdown(res.Path):
		h, err := renderMarkdown(name, res.Path, selfHost(r), res.Data, 1)
		if err != nil {
			d.Err = res.Path + " could not be rendered: " + err.Error()
		}
		d.HTML = h
	default:
		d.HTML = template.HTML("<pre>" + template.HTMLEscapeString(string(res.Data)) + "</pre>")
	}
	d.Files = []fileLink{{Path: res.Path, Href: fileURL(name, res.Path, false), Size: humanBytes(res.Size)}}
	u.render(w, r, "file.html", page{Title: res.Path + " · " + name, Active: "skills", Data: d})
}
