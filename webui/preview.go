package webui

import (
	"bytes"
	"html/template"
	"mime"
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
)

// The Preview tab and the skill's files inside the UI. A skill's Markdown
// is rendered with goldmark and GFM, never with raw HTML (goldmark drops
// it unless told otherwise, and it is not told). Every link and image URL
// is checked: only relative paths, http(s) and mailto survive; relative
// ones resolve to the skill's own files (/ui/skills/NAME/files/PATH) or,
// for Markdown files, to their rendered view (/ui/skills/NAME/view/PATH);
// images from elsewhere become links, so no request leaves the origin.
// The files are served through the service (svc.ReadFile with the
// caller's principal), as attachments unless they are images or text, and
// with the UI's CSP plus sandbox, so an SVG or HTML file of a skill never
// runs script even when opened directly.

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
func renderMarkdown(skillName, file string, src []byte, down int) (template.HTML, error) {
	ctx := parser.NewContext()
	ctx.Set(keyName, skillName)
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
			if u := safeURL(name, base, string(n.URL(src)), false); u.href == "" {
				unwrap(n, string(n.Label(src)))
			} else {
				n.SetAttributeString("rel", []byte("noopener noreferrer nofollow"))
			}
		case *ast.Link:
			u := safeURL(name, base, string(n.Destination), false)
			if u.href == "" {
				unwrap(n, "")
				continue
			}
			n.Destination = []byte(u.href)
			if u.external {
				n.SetAttributeString("rel", []byte("noopener noreferrer nofollow"))
			}
		case *ast.Image:
			u := safeURL(name, base, string(n.Destination), true)
			switch {
			case u.href == "":
				unwrap(n, "")
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

// unwrap replaces a link or image by its text (its children), or by label.
func unwrap(n ast.Node, label string) {
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
	p.RemoveChild(p, n)
}

type checkedURL struct {
	href     string // "" when refused
	external bool
}

// safeURL checks one link or image URL of a skill's Markdown: http(s) and
// mailto (links only) pass as they are; a relative path resolves inside
// the skill (base is the folder of the file it is in) to the UI's view of
// the file; an in-page #anchor stays. Anything else (javascript:, data:,
// file:, an absolute path into the UI, //host, a path out of the skill)
// is refused.
func safeURL(skillName, base, raw string, image bool) checkedURL {
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

func (u *ui) routesSkillViews(mux *http.ServeMux) {
	mux.HandleFunc("GET /ui/skills/{name}/files/{path...}", u.authed(u.skillFile))
	mux.HandleFunc("GET /ui/skills/{name}/view/{path...}", u.authed(u.skillFileView))
	mux.HandleFunc("POST /ui/skills/{name}/restore", u.authed(u.restoreVersion))
}

func (u *ui) tabPreview(w http.ResponseWriter, r *http.Request, sp *skillPage) (template.HTML, bool) {
	d := previewData{Name: sp.Name, File: sp.Skill.Entry}
	body, err := sp.Skill.Body()
	if err != nil {
		d.Err = "SKILL.md could not be read: " + err.Error()
	} else if d.HTML, err = renderMarkdown(sp.Name, sp.Skill.Entry, []byte(body), previewHeadingDown); err != nil {
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
	res, err := u.svc.ReadFile(r.Context(), principal(r), l.Spec.AgentID, name, p, catalog.ReadOptions{Max: MaxPreviewFileBytes}, uiTransport)
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
	default:
		u.fail(w, r, http.StatusConflict, "File not readable", res.Message)
	}
	return res, false
}

// skillFile serves the bytes of a skill's file: images inline with their
// type, text as text/plain, anything else as an attachment; always
// nosniff, and the CSP with sandbox so nothing in it runs.
func (u *ui) skillFile(w http.ResponseWriter, r *http.Request) {
	res, ok := u.readSkillFile(w, r)
	if !ok {
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", csp+"; sandbox")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	ct, _, _ := mime.ParseMediaType(res.ContentType)
	base := path.Base(res.Path)
	switch {
	case strings.HasPrefix(ct, "image/"):
		h.Set("Content-Type", ct)
		h.Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": base}))
	case res.Encoding == "utf-8":
		h.Set("Content-Type", "text/plain; charset=utf-8")
		h.Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": base}))
	default:
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": base}))
	}
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
		h, err := renderMarkdown(name, res.Path, res.Data, 1)
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
