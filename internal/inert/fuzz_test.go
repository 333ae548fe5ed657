package inert

import (
	"strings"
	"testing"
)

// FuzzType: whatever type a manifest or an import claims, and whatever a
// request's Sec-Fetch-Dest says, the answer is one of the inert types, and
// an SVG image only to an <img>.
func FuzzType(f *testing.F) {
	for _, s := range []string{"text/html", "TEXT/HTML; charset=utf-8", "image/svg+xml", "application/xhtml+xml",
		"text/javascript", "text/plain", "image/png", "", "text/markdown;x=\"y\"", "application/json", "image/svg"} {
		f.Add(s, true, "")
		f.Add(s, false, "image")
		f.Add(s, true, "document")
	}
	inertTypes := map[string]bool{
		"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true,
		"text/plain; charset=utf-8": true, "text/markdown; charset=utf-8": true, "text/csv; charset=utf-8": true,
		"text/tab-separated-values; charset=utf-8": true, "application/json": true,
		"application/octet-stream": true,
	}
	f.Fuzz(func(t *testing.T, stored string, text bool, dest string) {
		ct, attach := Type(stored, text, dest)
		if ct == "image/svg+xml" {
			if dest != "image" {
				t.Fatalf("Type(%q, %v, %q) = an SVG image outside an <img>", stored, text, dest)
			}
			return
		}
		if !inertTypes[ct] {
			t.Fatalf("Type(%q, %v, %q) = %q, not an inert type", stored, text, dest, ct)
		}
		if ct == "application/octet-stream" && !attach {
			t.Fatalf("Type(%q, %v, %q): octet-stream not as an attachment", stored, text, dest)
		}
		if !text && strings.HasPrefix(ct, "text/") {
			t.Fatalf("Type(%q, false, %q) = %q: bytes that are not UTF-8 text sent as text", stored, dest, ct)
		}
	})
}
