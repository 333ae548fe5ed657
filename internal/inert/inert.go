// Package inert decides the headers of every HTTP response that carries
// the bytes of a skill's file: the API's file routes, the well-known
// routes (and the link URLs that reach them) and the web UI's file route.
// A skill's bytes come from whoever wrote the skill, and the server's
// origin holds the UI's session and, on loopback without tokens, the
// whole API; so nothing in those bytes may run as a page, a script, a
// worker or a stylesheet of that origin, whatever the file is called and
// whatever content type its manifest (or an import) claims.
//
// The rule, in Type:
//
//   - A small allowlist of inert types goes out as it is: raster images
//     (PNG, JPEG, GIF, WebP) and, for UTF-8 text, text/plain, text/markdown,
//     text/csv, text/tab-separated-values and application/json.
//   - An SVG goes out as image/svg+xml only to a request whose
//     Sec-Fetch-Dest is "image" (a browser's <img>, where an SVG never runs
//     script); any other request for it gets text. Such answers say
//     Vary: Sec-Fetch-Dest, so a cache never hands one to a navigation.
//   - Everything else that is UTF-8 text (HTML, XHTML, XML, SVG, JavaScript,
//     CSS, shell, an imported "text/html" on a.txt...) goes out as
//     text/plain; charset=utf-8, to be read, not run.
//   - Everything else (PDF, archives, fonts, executables, text that is not
//     UTF-8) goes out as application/octet-stream, as an attachment.
//
// Every such answer also says X-Content-Type-Options: nosniff (so a
// browser believes the type) and CSP (so a document made of the bytes,
// should a browser render one anyway, has an opaque origin, runs no
// script, loads nothing and cannot be framed), and names the file in
// Content-Disposition. The manifest's own
// type stays in the JSON answers (the manifest, read_skill_file without
// raw) for clients that want it.
package inert

import (
	"mime"
	"net/http"
	"path"
	"strings"
)

// CSP is the Content-Security-Policy of every answer carrying a skill's
// bytes: a document made of them is a sandbox (an opaque origin, no
// script, no forms) that loads nothing and that no page may frame.
const CSP = "sandbox; default-src 'none'; frame-ancestors 'none'"

// The types sent in place of one that is not on the allowlist.
const (
	Text   = "text/plain; charset=utf-8"
	Binary = "application/octet-stream"
)

// Type returns the Content-Type to send for a file whose manifest says
// stored, and whether to send it as an attachment. text says the file is
// UTF-8 text; dest is the request's Sec-Fetch-Dest header. stored's
// parameters (a charset, say) are never passed on: the charset sent is
// utf-8, for text, or none.
func Type(stored string, text bool, dest string) (ct string, attachment bool) {
	c := classify(stored, text, dest)
	return c.ct, c.attach
}

// class is one answer of the policy, with its header values made once.
type class struct {
	ct     string
	attach bool
	hdr    []string // {ct}
}

func newClass(ct string, attach bool) *class { return &class{ct, attach, []string{ct}} }

var (
	clText   = newClass(Text, false)
	clBinary = newClass(Binary, true)
	clSVG    = newClass("image/svg+xml", false)
	clJSON   = newClass("application/json", false)
	// inline are the types served as they are, by their essence: raster
	// images (a browser only ever decodes them, and with nosniff reads
	// nothing else into them), whatever the bytes; the text types only
	// for UTF-8 text.
	inline = map[string]*class{
		"image/png": newClass("image/png", false), "image/jpeg": newClass("image/jpeg", false),
		"image/gif": newClass("image/gif", false), "image/webp": newClass("image/webp", false),
	}
	inlineText = map[string]*class{
		"text/plain": clText, "text/markdown": newClass("text/markdown; charset=utf-8", false),
		"text/csv": newClass("text/csv; charset=utf-8", false), "text/tab-separated-values": newClass("text/tab-separated-values; charset=utf-8", false),
		"application/json": clJSON,
	}
)

func classify(stored string, text bool, dest string) *class {
	essence := essenceOf(stored)
	if c := inline[essence]; c != nil {
		return c
	}
	if !text {
		return clBinary
	}
	if c := inlineText[essence]; c != nil {
		return c
	}
	if essence == "image/svg+xml" && dest == "image" {
		return clSVG
	}
	return clText
}

// essenceOf is a media type's type/subtype in lower case, without its
// parameters; "" when it is not one. Only an exact match of the
// allowlist counts, so anything odd falls to text or bytes.
func essenceOf(ct string) string {
	e, _, _ := strings.Cut(ct, ";")
	e = strings.TrimSpace(e)
	for i := 0; i < len(e); i++ {
		if c := e[i]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(e)
		}
	}
	return e
}

var (
	hdrNosniff = []string{"nosniff"}
	hdrCSP     = []string{CSP}
	hdrVary    = []string{"Sec-Fetch-Dest"}
)

// Set writes the headers of an answer carrying the bytes of the file at
// name (a path in the skill; its base names the download) whose manifest
// type is stored: Content-Type as Type decides, X-Content-Type-Options,
// Content-Security-Policy, Content-Disposition, and Vary: Sec-Fetch-Dest
// when the type depends on it. r may be nil (no Sec-Fetch-Dest).
func Set(h http.Header, r *http.Request, name, stored string, text bool) {
	dest := ""
	if r != nil {
		dest = r.Header.Get("Sec-Fetch-Dest")
	}
	c := classify(stored, text, dest)
	// Assigned as slices made once: these run on every file read.
	h["Content-Type"] = c.hdr
	h["X-Content-Type-Options"] = hdrNosniff
	h["Content-Security-Policy"] = hdrCSP
	if essenceOf(stored) == "image/svg+xml" {
		h["Vary"] = append(h["Vary"], hdrVary...)
	}
	h["Content-Disposition"] = []string{disposition(c.attach, path.Base(name))}
}

// disposition is the Content-Disposition of a file named base.
func disposition(attach bool, base string) string {
	disp := "inline"
	if attach {
		disp = "attachment"
	}
	if base == "" || base == "." || base == "/" {
		return disp
	}
	for i := 0; i < len(base); i++ {
		if !isToken(base[i]) {
			if v := mime.FormatMediaType(disp, map[string]string{"filename": base}); v != "" {
				return v
			}
			return disp
		}
	}
	return disp + "; filename=" + base
}

// isToken says whether c may appear in an RFC 9110 token.
func isToken(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
