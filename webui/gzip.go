package webui

import (
	"bytes"
	"compress/gzip"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/loadout/loadout/internal/httpbody"
)

// Compression: the UI's pages and JSON go out gzip-compressed to clients
// that accept it (compressResponses), and its static assets (the editor
// bundle above all) are compressed once, at the best level, when first
// asked for (precompressed), so every page stays within its transfer
// budget without costing CPU per request. The negotiation and the
// threshold are internal/httpbody's, shared with the API's cached bodies.

// crossSite says whether another site's page caused the request (the
// browser's Sec-Fetch-Site header). Such responses go out uncompressed:
// compressing a page that holds a secret (the CSRF token) next to text
// the requester chose (a filter in the query) would let that site guess
// the secret from the compressed sizes (the BREACH attack). The UI's own
// requests (same-origin) and typed or bookmarked addresses (none) are
// compressed.
func crossSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return false
	}
	return true
}

var gzipPool = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression) // a valid level: no error
	return w
}}

// compressResponses gzips the text responses of next for clients that
// accept gzip: HTML pages, fragments, JSON, CSS and JS that are not
// compressed already (a response with a Content-Encoding passes as is).
func compressResponses(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Accept-Encoding")
		if r.Method == http.MethodHead || !httpbody.AcceptsGzip(r) || crossSite(r) {
			next.ServeHTTP(w, r)
			return
		}
		gw := &gzipWriter{ResponseWriter: w, status: http.StatusOK}
		defer gw.finish()
		next.ServeHTTP(gw, r)
	})
}

// gzipWriter holds back the first httpbody.MinCompress bytes of a compressible
// response to decide whether to compress it, then streams.
type gzipWriter struct {
	http.ResponseWriter
	status  int
	decided bool // the headers have gone out
	buf     []byte
	gz      *gzip.Writer
}

func (g *gzipWriter) WriteHeader(code int) {
	if g.decided {
		return
	}
	g.status = code
	if code < 200 || code == http.StatusNoContent || code == http.StatusNotModified || code == http.StatusPartialContent {
		g.start(false) // no body, or a range of bytes: never compressed
	}
}

func (g *gzipWriter) Write(p []byte) (int, error) {
	if !g.decided {
		h := g.Header()
		if h.Get("Content-Encoding") != "" || !httpbody.Compressible(h.Get("Content-Type")) {
			if h.Get("Content-Type") == "" && len(p) > 0 {
				h.Set("Content-Type", http.DetectContentType(p))
				if httpbody.Compressible(h.Get("Content-Type")) {
					return g.Write(p)
				}
			}
			g.start(false)
		} else {
			g.buf = append(g.buf, p...)
			if len(g.buf) < httpbody.MinCompress {
				return len(p), nil
			}
			g.start(true)
			return len(p), nil
		}
	}
	if g.gz != nil {
		return g.gz.Write(p)
	}
	return g.ResponseWriter.Write(p)
}

// start sends the headers, compressed or not, and what was held back.
func (g *gzipWriter) start(compress bool) {
	g.decided = true
	h := g.Header()
	if compress {
		h.Set("Content-Encoding", "gzip")
		h.Del("Content-Length")
		g.gz = gzipPool.Get().(*gzip.Writer)
		g.gz.Reset(g.ResponseWriter)
	}
	g.ResponseWriter.WriteHeader(g.status)
	if len(g.buf) > 0 {
		if g.gz != nil {
			g.gz.Write(g.buf)
		} else {
			g.ResponseWriter.Write(g.buf)
		}
		g.buf = nil
	}
}

// Flush sends what is held back (compressed when it is compressible) and
// flushes, so streamed responses keep working.
func (g *gzipWriter) Flush() {
	if !g.decided {
		g.start(len(g.buf) > 0 && g.Header().Get("Content-Encoding") == "" && httpbody.Compressible(g.Header().Get("Content-Type")))
	}
	if g.gz != nil {
		g.gz.Flush()
	}
	http.NewResponseController(g.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (g *gzipWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }

func (g *gzipWriter) finish() {
	if !g.decided {
		g.start(false) // short: sent as is
	}
	if g.gz != nil {
		g.gz.Close()
		g.gz.Reset(nil)
		gzipPool.Put(g.gz)
		g.gz = nil
	}
}

// gzAsset is one static asset compressed once.
type gzAsset struct {
	data        []byte
	contentType string
}

// precompressed serves the gzip form of the compressible static assets in
// fsys (made once, at the best level, on first request) to clients that
// accept it, and passes every other request to next.
func precompressed(fsys fs.FS, next http.Handler) http.Handler {
	var mu sync.Mutex
	cache := map[string]*gzAsset{} // nil value: not worth compressing
	get := func(name string) *gzAsset {
		mu.Lock()
		defer mu.Unlock()
		if a, ok := cache[name]; ok {
			return a
		}
		var a *gzAsset
		ct := mime.TypeByExtension(path.Ext(name))
		if raw, err := fs.ReadFile(fsys, name); err == nil && len(raw) >= httpbody.MinCompress && httpbody.Compressible(ct) {
			var b bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression) // a valid level: no error
			zw.Write(raw)
			zw.Close()
			if b.Len() < len(raw) {
				a = &gzAsset{data: b.Bytes(), contentType: ct}
			}
		}
		cache[name] = a // the assets are embedded: they never change
		return a
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/")
		if httpbody.AcceptsGzip(r) && r.Header.Get("Range") == "" && fs.ValidPath(name) {
			if a := get(name); a != nil {
				h := w.Header()
				h.Set("Content-Type", a.contentType)
				h.Set("Content-Encoding", "gzip")
				h.Set("Content-Length", strconv.Itoa(len(a.data)))
				h.Set("Cache-Control", "public, max-age=300")
				if r.Method != http.MethodHead {
					w.Write(a.data)
				}
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
