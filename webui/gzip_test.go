package webui

import (
	"bytes"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
)

func gzGet(h http.Handler, method, target, acceptEncoding string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	if acceptEncoding != "" {
		r.Header.Set("Accept-Encoding", acceptEncoding)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestCompressResponses: a page goes out gzipped to a client that accepts
// it, whole; short bodies, non-text bodies, already encoded bodies, HEAD
// and clients without gzip get it as is.
func TestCompressResponses(t *testing.T) {
	page := "<!doctype html><title>x</title>" + strings.Repeat("<p>a skill row</p>\n", 200)
	h := compressResponses(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusNotFound) // an error page is compressed too, status kept
			// in pieces, the first shorter than httpbody.MinCompress
			w.Write([]byte(page[:100]))
			w.Write([]byte(page[100:]))
		case "/short":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<p>hi</p>"))
		case "/png":
			w.Header().Set("Content-Type", "image/png")
			w.Write(bytes.Repeat([]byte{0}, 4096))
		case "/encoded":
			w.Header().Set("Content-Type", "application/javascript")
			w.Header().Set("Content-Encoding", "br")
			w.Write(bytes.Repeat([]byte{1}, 4096))
		case "/sniffed":
			w.Write([]byte(page))
		}
	}))

	w := gzGet(h, "GET", "/page", "br, gzip;q=0.9")
	if w.Code != http.StatusNotFound || w.Header().Get("Content-Encoding") != "gzip" || !strings.Contains(w.Header().Get("Vary"), "Accept-Encoding") {
		t.Fatalf("page: status %d, headers %v", w.Code, w.Header())
	}
	if got := testutil.Gunzip(t, w.Body.Bytes()); string(got) != page {
		t.Errorf("page decompresses to %d bytes, want the %d written", len(got), len(page))
	}
	if w.Body.Len() > len(page)/4 {
		t.Errorf("page: %d bytes compressed of %d", w.Body.Len(), len(page))
	}
	if w := gzGet(h, "GET", "/sniffed", "gzip"); w.Header().Get("Content-Encoding") != "gzip" || string(testutil.Gunzip(t, w.Body.Bytes())) != page {
		t.Errorf("a page without Content-Type is sniffed as HTML and compressed: %v", w.Header())
	}
	for _, c := range []struct{ path, ae string }{
		{"/page", ""}, {"/page", "gzip;q=0"}, {"/page", "identity"}, {"/short", "gzip"}, {"/png", "gzip"}, {"/encoded", "gzip"},
	} {
		w := gzGet(h, "GET", c.path, c.ae)
		if enc := w.Header().Get("Content-Encoding"); enc == "gzip" {
			t.Errorf("%s with Accept-Encoding %q: compressed", c.path, c.ae)
		}
	}
	for site, want := range map[string]string{"same-origin": "gzip", "none": "gzip", "cross-site": "", "same-site": ""} {
		r := httptest.NewRequest("GET", "/page", nil)
		r.Header.Set("Accept-Encoding", "gzip")
		r.Header.Set("Sec-Fetch-Site", site)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if got := w.Header().Get("Content-Encoding"); got != want {
			t.Errorf("Sec-Fetch-Site %s: Content-Encoding %q, want %q (another site's requests are never compressed)", site, got, want)
		}
	}
	if w := gzGet(h, "HEAD", "/page", "gzip"); w.Header().Get("Content-Encoding") != "" {
		t.Errorf("HEAD: Content-Encoding %q", w.Header().Get("Content-Encoding"))
	}
}

// TestCompressResponsesStream: an event stream is never compressed and its
// flushes reach the client.
func TestCompressResponsesStream(t *testing.T) {
	h := compressResponses(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: hello\n\n"))
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("flush through the compressing writer: %v", err)
		}
	}))
	w := gzGet(h, "GET", "/events", "gzip")
	if w.Header().Get("Content-Encoding") != "" || w.Body.String() != "data: hello\n\n" || !w.Flushed {
		t.Errorf("event stream: headers %v, body %q, flushed %v", w.Header(), w.Body.String(), w.Flushed)
	}
}

// TestPrecompressedStatic: the embedded stylesheet and script go out
// gzipped (compressed once) with their types, and as they are without
// gzip.
func TestPrecompressedStatic(t *testing.T) {
	static, _ := fs.Sub(staticFS, "static")
	h := compressResponses(http.StripPrefix("/ui/static/", precompressed(static, staticHandler(static))))
	for _, name := range []string{"app.css", "app.js"} {
		raw, err := fs.ReadFile(static, name)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ { // the second from the cache
			w := gzGet(h, "GET", "/ui/static/"+name, "gzip, deflate")
			if w.Code != 200 || w.Header().Get("Content-Encoding") != "gzip" {
				t.Fatalf("%s: status %d, headers %v", name, w.Code, w.Header())
			}
			if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/") {
				t.Errorf("%s: Content-Type %q", name, ct)
			}
			if got := testutil.Gunzip(t, w.Body.Bytes()); !bytes.Equal(got, raw) {
				t.Errorf("%s decompresses to something else", name)
			}
		}
		w := gzGet(h, "GET", "/ui/static/"+name, "")
		if w.Header().Get("Content-Encoding") != "" || !bytes.Equal(w.Body.Bytes(), raw) {
			t.Errorf("%s without gzip: headers %v", name, w.Header())
		}
	}
	if w := gzGet(h, "GET", "/ui/static/nope.js", "gzip"); w.Code != http.StatusNotFound {
		t.Errorf("a missing asset: status %d", w.Code)
	}
}
