package inert

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestType pins the policy: every active type a skill may carry (by its
// name, or given by an import, with parameters and in any case) goes out
// as text or as an attachment; the inert ones go out as they are; and the
// near misses of the allowlist are not on it.
func TestType(t *testing.T) {
	const (
		txt = "text/plain; charset=utf-8"
		bin = "application/octet-stream"
	)
	cases := []struct {
		stored string
		text   bool
		dest   string
		want   string
		attach bool
	}{
		// Active types, as the name table gives them and as an import may.
		{"text/html", true, "", txt, false},
		{"text/html", true, "document", txt, false},
		{"text/html", true, "iframe", txt, false},
		{"text/html", true, "image", txt, false},
		{"text/html; charset=utf-8", true, "", txt, false},
		{"TEXT/HTML", true, "", txt, false},
		{"Text/Html;Charset=UTF-7", true, "", txt, false},
		{"text/html", false, "", bin, true},
		{"application/xhtml+xml", true, "", txt, false},
		{"application/xml", true, "", txt, false},
		{"text/xml", true, "", txt, false},
		{"application/xslt+xml", true, "", txt, false},
		{"application/rss+xml", true, "", txt, false},
		{"image/svg+xml", true, "", txt, false},
		{"image/svg+xml", true, "document", txt, false},
		{"image/svg+xml", true, "iframe", txt, false},
		{"image/svg+xml", true, "object", txt, false},
		{"image/svg+xml", true, "embed", txt, false},
		{"image/svg+xml", true, "script", txt, false},
		{"image/svg+xml; charset=utf-8", true, "", txt, false},
		{"IMAGE/SVG+XML", true, "", txt, false},
		{"image/svg+xml", false, "image", bin, true}, // an .svgz, or an SVG that is not UTF-8
		{"text/javascript", true, "", txt, false},
		{"text/javascript", true, "script", txt, false},
		{"text/javascript", true, "worker", txt, false},
		{"text/javascript", true, "serviceworker", txt, false},
		{"application/javascript", true, "", txt, false},
		{"application/ecmascript", true, "", txt, false},
		{"text/css", true, "style", txt, false},
		{"application/x-sh", true, "", txt, false},
		{"text/x-python", true, "", txt, false},
		{"multipart/x-mixed-replace; boundary=x", true, "", txt, false},
		{"application/pdf", false, "", bin, true},
		{"application/pdf", true, "", txt, false},
		{"application/x-shockwave-flash", false, "", bin, true},
		{"application/wasm", false, "", bin, true},
		{"application/zip", false, "", bin, true},
		{"application/gzip", false, "", bin, true},
		{"font/woff2", false, "", bin, true},
		{"application/octet-stream", false, "", bin, true},
		{"", true, "", txt, false},
		{"", false, "", bin, true},
		{"not a type", true, "", txt, false},
		{"text/html; =x", true, "", txt, false},
		// Inert types go out as they are, with utf-8 as the only charset.
		{"text/plain", true, "", txt, false},
		{"text/plain; charset=utf-7", true, "", txt, false},
		{"text/plain; charset=iso-8859-1", true, "", txt, false},
		{"text/markdown", true, "", "text/markdown; charset=utf-8", false},
		{"TEXT/Markdown; charset=utf-8", true, "", "text/markdown; charset=utf-8", false},
		{"text/csv", true, "", "text/csv; charset=utf-8", false},
		{"text/tab-separated-values", true, "", "text/tab-separated-values; charset=utf-8", false},
		{"application/json", true, "", "application/json", false},
		{"application/json; charset=utf-16", true, "", "application/json", false},
		{"image/png", false, "", "image/png", false},
		{"image/png", true, "document", "image/png", false},
		{"IMAGE/PNG; x=y", false, "", "image/png", false},
		{"image/jpeg", false, "", "image/jpeg", false},
		{"image/gif", false, "", "image/gif", false},
		{"image/webp", false, "", "image/webp", false},
		// The case fold at its edges: an 'A' that is the only capital
		// letter, and an '@' just below it that is not a letter at all.
		{"imAge/png", false, "", "image/png", false},
		{"im@ge/png", false, "", bin, true},
		{"image/svg+xml", true, "image", "image/svg+xml", false},
		{"image/svg+xml; charset=utf-8", true, "image", "image/svg+xml", false},
		// Text types that are not UTF-8 are bytes.
		{"text/plain", false, "", bin, true},
		{"text/markdown", false, "", bin, true},
		{"application/json", false, "", bin, true},
		// Near misses of the allowlist.
		{"text/plainx", true, "", txt, false},
		{"text/plain+html", true, "", txt, false},
		{"image/pngx", false, "", bin, true},
		{"image/png+xml", true, "", txt, false},
		{"image/x-png", false, "", bin, true},
		{"image/svg", true, "image", txt, false},
		{"image/svg-xml", true, "image", txt, false},
		{"image/svg+xml", true, "Image", txt, false},
		{"application/json+html", true, "", txt, false},
		{"application/jsonp", true, "", txt, false},
		{"application/ld+json", true, "", txt, false},
		{"image/bmp", false, "", bin, true},
		{"image/x-icon", false, "", bin, true},
	}
	for _, c := range cases {
		ct, attach := Type(c.stored, c.text, c.dest)
		if ct != c.want || attach != c.attach {
			t.Errorf("Type(%q, text=%v, dest=%q) = %q, attachment %v; want %q, %v", c.stored, c.text, c.dest, ct, attach, c.want, c.attach)
		}
	}
}

func TestSet(t *testing.T) {
	get := func(dest string) *http.Request {
		r := httptest.NewRequest("GET", "/x", nil)
		if dest != "" {
			r.Header.Set("Sec-Fetch-Dest", dest)
		}
		return r
	}
	cases := []struct {
		name, stored string
		text         bool
		r            *http.Request
		ct, disp     string
		vary         string
	}{
		{"docs/page.html", "text/html", true, get("document"), Text, `inline; filename=page.html`, ""},
		{"page.HTML", "text/html", true, nil, Text, `inline; filename=page.HTML`, ""},
		{"a.txt", "text/html", true, get(""), Text, `inline; filename=a.txt`, ""},
		{"pic.svg", "image/svg+xml", true, get("document"), Text, `inline; filename=pic.svg`, "Sec-Fetch-Dest"},
		{"pic.svg", "image/svg+xml", true, get("image"), "image/svg+xml", `inline; filename=pic.svg`, "Sec-Fetch-Dest"},
		{"pic.svgz", "application/gzip", false, get("image"), Binary, `attachment; filename=pic.svgz`, ""},
		{"tool.bin", "application/octet-stream", false, get(""), Binary, `attachment; filename=tool.bin`, ""},
		{"my file.pdf", "application/pdf", false, get(""), Binary, `attachment; filename="my file.pdf"`, ""},
		{"ünï.png", "image/png", false, get(""), "image/png", `inline; filename*=utf-8''%C3%BCn%C3%AF.png`, ""},
		{"a\x01b.bin", "application/octet-stream", false, get(""), Binary, `attachment; filename*=utf-8''a%01b.bin`, ""},
		{"", "text/plain", true, get(""), Text, `inline`, ""},
	}
	for _, c := range cases {
		h := http.Header{}
		Set(h, c.r, c.name, c.stored, c.text)
		if h.Get("Content-Type") != c.ct || h.Get("Content-Disposition") != c.disp || h.Get("Vary") != c.vary ||
			h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Content-Security-Policy") != CSP {
			t.Errorf("Set(%q, %q): %v", c.name, c.stored, h)
		}
	}
	if !strings.Contains(CSP, "sandbox;") || !strings.Contains(CSP, "default-src 'none'") || !strings.Contains(CSP, "frame-ancestors 'none'") {
		t.Errorf("CSP %q", CSP)
	}
}

// Set runs on every file read: it costs the Content-Disposition only (its
// value and its slice), whatever the type.
func TestSetAllocs(t *testing.T) {
	r := httptest.NewRequest("GET", "/x", nil)
	r.Header.Set("Sec-Fetch-Dest", "document")
	h := http.Header{}
	for _, ct := range []string{"text/markdown", "text/html", "image/png", "application/x-sh"} {
		if n := testing.AllocsPerRun(100, func() { Set(h, r, "references/guide.md", ct, true) }); n > 2 {
			t.Errorf("Set(%q) allocates %.0f times, want at most 2", ct, n)
		}
	}
}

// A file name made only of RFC 9110 token characters is written into
// Content-Disposition as it is, at no cost beyond that header (the
// budget of TestSetAllocs); only a name that needs quoting or encoding
// pays for mime.FormatMediaType. The names here hold each edge of the
// token ranges (a z A Z 0 9, and the first and last of the others);
// "my file" is the "no" case, which must cost more, or the count proves
// nothing.
func TestSetTokenNameAllocs(t *testing.T) {
	h := http.Header{}
	cost := func(name string) float64 {
		return testing.AllocsPerRun(100, func() { Set(h, nil, name, "text/plain", true) })
	}
	for _, name := range []string{"a", "z", "A", "Z", "0", "9", "!", "~", "notes-v2.md"} {
		n := cost(name)
		if want := "inline; filename=" + name; h.Get("Content-Disposition") != want {
			t.Errorf("Set(%q): Content-Disposition %q, want %q", name, h.Get("Content-Disposition"), want)
		}
		if n > 2 {
			t.Errorf("Set(%q) allocates %.0f times, want at most 2: a token name needs no quoting", name, n)
		}
	}
	if n := cost("my file"); n <= 2 {
		t.Errorf("Set(%q) allocates %.0f times; a quoted name should cost more than 2", "my file", n)
	}
}
