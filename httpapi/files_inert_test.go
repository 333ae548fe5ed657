package httpapi_test

import (
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/inert"
	"github.com/loadout/loadout/skill"
)

const activeHTML = "<html><script>fetch('/v1/skills',{method:'POST'})</script></html>\n"

// inertFiles are a folder skill's active files (by their names, in any
// case) and inert ones, with the Content-Type each must go out with.
var inertFiles = map[string]string{
	"page.html":  inert.Text,
	"page.HTML":  inert.Text,
	"page.htm":   inert.Text,
	"page.xhtml": inert.Text,
	"feed.xml":   inert.Text,
	"pic.svg":    inert.Text,
	"app.js":     inert.Text,
	"app.mjs":    inert.Text,
	"style.css":  inert.Text,
	"run.sh":     inert.Text,
	"a.txt":      inert.Text, // HTML inside: nosniff keeps it text
	"notes.md":   "text/markdown; charset=utf-8",
	"data.json":  "application/json",
	"pic.svgz":   inert.Binary,
	"doc.pdf":    inert.Binary,
	"logo.png":   "image/png",
}

func inertData(p string) string {
	switch p {
	case "pic.svgz":
		return "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xff\xfe"
	case "doc.pdf":
		return "%PDF-1.4\n\xff\xfe\x00"
	case "logo.png":
		return "\x89PNG\r\n\x1a\n\x00\xff"
	case "data.json":
		return `{"a": "<script>x</script>"}`
	}
	return activeHTML
}

// checkInert fails unless r carries a skill's bytes under internal/inert's
// headers with Content-Type want (an attachment when it is bytes).
func checkInert(t *testing.T, what string, r resp, want string) {
	t.Helper()
	if r.code != 200 && r.code != 206 && r.code != 304 {
		t.Errorf("%s: status %d: %s", what, r.code, r.body)
		return
	}
	if r.code != 304 && r.h.Get("Content-Type") != want {
		t.Errorf("%s: Content-Type %q, want %q", what, r.h.Get("Content-Type"), want)
	}
	if r.h.Get("Content-Security-Policy") != inert.CSP || r.h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("%s: CSP %q, X-Content-Type-Options %q", what, r.h.Get("Content-Security-Policy"), r.h.Get("X-Content-Type-Options"))
	}
	if attach := strings.HasPrefix(r.h.Get("Content-Disposition"), "attachment"); attach != (want == inert.Binary) {
		t.Errorf("%s: Content-Disposition %q", what, r.h.Get("Content-Disposition"))
	}
}

// Every route that serves a folder skill's bytes (the admin's file route,
// and read_skill_file with raw=1, whole, ranged and revalidated) serves
// its active files as text or as an attachment, sandboxed: before,
// page.html went out as text/html and ran its script in this origin for
// any page that navigated to it.
func TestFolderFilesInert(t *testing.T) {
	files := map[string]string{"web/SKILL.md": md("web", "A skill with web files.", "See page.html.")}
	for p := range inertFiles {
		files["web/assets/"+p] = inertData(p)
	}
	e := newEnv(t, files)
	for p, want := range inertFiles {
		u := "/v1/skills/web/files/assets/" + p
		r := e.do(t, "GET", u, e.admin, nil)
		checkInert(t, u, r, want)
		checkInert(t, u+" (304)", e.do(t, "GET", u, e.admin, nil, "If-None-Match", r.h.Get("ETag")), want)
		checkInert(t, u+" (a range)", e.do(t, "GET", u, e.admin, nil, "Range", "bytes=0-3"), want)
		a := "/v1/agents/coder/skills/web/files/assets/" + p + "?raw=1"
		checkInert(t, a, e.do(t, "GET", a, e.coder, nil), want)
		checkInert(t, a+"&offset=1&length=3", e.do(t, "GET", a+"&offset=1&length=3", e.coder, nil), want)
	}
	// Two ranges make a multipart answer: its parts are typed by the same
	// rule, and the answer is sandboxed.
	r := e.do(t, "GET", "/v1/skills/web/files/assets/page.html", e.admin, nil, "Range", "bytes=0-1,3-4")
	if r.code != 206 || !strings.HasPrefix(r.h.Get("Content-Type"), "multipart/byteranges") || strings.Contains(string(r.body), "text/html") ||
		!strings.Contains(string(r.body), "Content-Type: "+inert.Text) || r.h.Get("Content-Security-Policy") != inert.CSP {
		t.Errorf("two ranges: %d %v\n%s", r.code, r.h, r.body)
	}
	// An <img> may have the SVG as an image; nothing else may.
	r = e.do(t, "GET", "/v1/skills/web/files/assets/pic.svg", e.admin, nil, "Sec-Fetch-Dest", "image")
	if r.h.Get("Content-Type") != "image/svg+xml" || r.h.Get("Vary") != "Sec-Fetch-Dest" || r.h.Get("Content-Security-Policy") != inert.CSP {
		t.Errorf("pic.svg for an <img>: %v", r.h)
	}
	for _, dest := range []string{"document", "iframe", "object", "embed", "script", ""} {
		checkInert(t, "pic.svg for "+dest, e.do(t, "GET", "/v1/skills/web/files/assets/pic.svg", e.admin, nil, "Sec-Fetch-Dest", dest), inert.Text)
	}
	// SKILL.md is Markdown on both routes.
	checkInert(t, "SKILL.md", e.do(t, "GET", "/v1/skills/web/files/SKILL.md", e.admin, nil), "text/markdown; charset=utf-8")
	checkInert(t, "SKILL.md raw", e.do(t, "GET", "/v1/agents/coder/skills/web/files/SKILL.md?raw=1", e.coder, nil), "text/markdown; charset=utf-8")
}

// A stored skill's files keep the content type their import gave, but
// only an inert one is sent: an imported "text/html" on a.txt, in any
// case and with any parameters, goes out as text. Before, it went out as
// text/html.
func TestStoredImportedTypesInert(t *testing.T) {
	e := newEnv(t, baseFiles)
	cases := []struct{ path, ct, want string }{
		{"a.txt", "text/html", inert.Text},
		{"b.txt", "text/html; charset=utf-8", inert.Text},
		{"c.txt", "TEXT/HTML", inert.Text},
		{"d.txt", "application/xhtml+xml", inert.Text},
		{"e.txt", "image/svg+xml", inert.Text},
		{"f.txt", "text/javascript", inert.Text},
		{"g.txt", "application/xml", inert.Text},
		{"h.txt", "text/xml", inert.Text},
		{"i.txt", "text/plain; charset=utf-7", inert.Text},
		{"j.md", "text/markdown; charset=iso-8859-1", "text/markdown; charset=utf-8"},
		{"k.png", "text/html", inert.Binary}, // binary by its name
		{"l.html", "text/plain", inert.Text},
		{"m.txt", "image/png", "image/png"},
		{"n.bin", "text/html", inert.Binary},
		{"o.txt", "multipart/x-mixed-replace; boundary=x", inert.Text},
	}
	var files []skill.BundleFile
	for _, c := range cases {
		data := []byte(activeHTML)
		if c.path == "n.bin" {
			data = []byte("<script>x</script>\xff\xfe\x00")
		}
		files = append(files, skill.BundleFile{Path: c.path, Data: data, ContentType: c.ct})
	}
	want(t, e.do(t, "POST", "/v1/skills", e.admin, doc(t, "stored", "A stored skill.", "See a.txt.", files...)), 201)
	r := e.do(t, "GET", "/v1/skills/stored/files", e.admin, nil)
	want(t, r, 200)
	if !strings.Contains(string(r.body), `"contentType":"text/html"`) {
		t.Errorf("the manifest no longer keeps the imported type: %s", r.body)
	}
	for _, c := range cases {
		u := "/v1/skills/stored/files/" + c.path
		r := e.do(t, "GET", u, e.admin, nil)
		checkInert(t, u+" ("+c.ct+")", r, c.want)
		checkInert(t, u+" (304)", e.do(t, "GET", u, e.admin, nil, "If-None-Match", r.h.Get("ETag")), c.want)
		a := "/v1/agents/coder/skills/stored/files/" + c.path + "?raw=1"
		checkInert(t, a+" ("+c.ct+")", e.do(t, "GET", a, e.coder, nil), c.want)
	}
}

// read_skill_file with raw=1 types a range by the file's manifest, not by
// the range's bytes: a range of a UTF-8 text file that starts inside a
// character (which the JSON form sends as base64) is still text, like the
// whole file; a range of a PDF is still an attachment.
func TestAgentRawRangeTypedByManifest(t *testing.T) {
	e := newEnv(t, map[string]string{
		"web/SKILL.md":         md("web", "A skill with notes.", "See notes.txt."),
		"web/assets/notes.txt": "é<script>x</script> and more\n",
		"web/assets/doc.pdf":   inertData("doc.pdf"),
	})
	base := "/v1/agents/coder/skills/web/files/assets/"
	// The JSON form of the range says base64: the range alone is not text.
	r := e.do(t, "GET", base+"notes.txt?offset=1&length=6", e.coder, nil)
	want(t, r, 200)
	if !strings.Contains(string(r.body), `"encoding":"base64"`) {
		t.Fatalf("the range starting inside é is not base64 in the JSON form, so this test proves nothing: %s", r.body)
	}
	checkInert(t, "notes.txt whole", e.do(t, "GET", base+"notes.txt?raw=1", e.coder, nil), inert.Text)
	checkInert(t, "notes.txt from inside é", e.do(t, "GET", base+"notes.txt?raw=1&offset=1&length=6", e.coder, nil), inert.Text)
	checkInert(t, "doc.pdf from its first byte of text", e.do(t, "GET", base+"doc.pdf?raw=1&offset=0&length=4", e.coder, nil), inert.Binary)
}
