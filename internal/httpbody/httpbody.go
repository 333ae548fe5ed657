// Package httpbody serves response bodies that are built once and sent
// many times (the skill list's pages, the prompt, the well-known index,
// the OpenAPI document, the diagnostics): each goes out with a strong
// ETag, answers a matching If-None-Match with 304, and goes out gzip
// compressed to a client that accepts gzip, from bytes compressed once
// per body rather than per request. It also holds the gzip negotiation
// the web UI's compression shares (AcceptsGzip, Compressible).
package httpbody

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// MinCompress is the smallest body worth compressing: below it, gzip's
// header and trailer (18 bytes) and a round of CPU outweigh the saving.
const MinCompress = 512

// Compressible says whether a response of this Content-Type is text that
// gzip shrinks. Event streams are left alone: they must reach the client
// event by event.
func Compressible(contentType string) bool {
	ct, _, _ := strings.Cut(contentType, ";")
	ct = strings.TrimSpace(strings.ToLower(ct))
	switch ct {
	case "text/html", "text/css", "text/plain", "text/markdown", "text/javascript",
		"application/javascript", "application/json", "application/problem+json", "image/svg+xml":
		return true
	}
	return false
}

// AcceptsGzip says whether the request's Accept-Encoding allows gzip
// (RFC 9110 12.5.3): "gzip" or "x-gzip" with a q above 0, or "*" with a
// q above 0 when gzip is not named. "gzip;q=0" refuses it, and so does a
// header that names only identity or nothing.
func AcceptsGzip(r *http.Request) bool {
	star := false
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			name = strings.TrimSpace(name)
			ok := qAbove0(params)
			switch {
			case strings.EqualFold(name, "gzip"), strings.EqualFold(name, "x-gzip"):
				return ok
			case name == "*":
				star = ok
			}
		}
	}
	return star
}

// qAbove0 reads the q parameter of one Accept-Encoding element (1 when
// absent) and says whether it is above 0.
func qAbove0(params string) bool {
	for _, p := range strings.Split(params, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return err != nil || q > 0 // an unreadable q counts as present
	}
	return true
}

// Body is one response body kept for many requests: its bytes, Content-
// Type, strong ETag (a digest of the bytes) and, made on the first
// request that accepts gzip, its gzip form. A Body never changes: a new
// answer is a new Body. It holds at most its bytes plus their gzip form
// (smaller than the bytes, or not kept).
type Body struct {
	raw   []byte
	ctype []string
	etag  string
	gzTag string
	// The header values, made once rather than per request.
	rawHdr, gzHdr headerValues

	once sync.Once
	gz   []byte // nil: not worth compressing
}

type headerValues struct{ etag, length []string }

// New keeps raw (which the caller must not change afterwards) as a Body
// of the given Content-Type.
func New(raw []byte, contentType string) *Body {
	sum := sha256.Sum256(raw)
	tag := hex.EncodeToString(sum[:12])
	b := &Body{raw: raw, ctype: []string{contentType}, etag: `"` + tag + `"`, gzTag: `"` + tag + `-gz"`}
	b.rawHdr = headerValues{[]string{b.etag}, []string{strconv.Itoa(len(raw))}}
	return b
}

// Bytes is the body as built (uncompressed).
func (b *Body) Bytes() []byte { return b.raw }

// ETag is the strong ETag of the uncompressed bytes; the gzip form has
// its own ("…-gz"), as RFC 9110 asks of different representations.
func (b *Body) ETag() string { return b.etag }

// Gzipped is the body compressed with gzip (made once, on first call),
// or nil when the body is too small or not text, or gzip does not make
// it smaller.
func (b *Body) Gzipped() []byte {
	b.once.Do(func() {
		if len(b.raw) < MinCompress || !Compressible(b.ctype[0]) {
			return
		}
		var buf bytes.Buffer
		buf.Grow(len(b.raw) / 4)
		zw := gzipPool.Get().(*gzip.Writer)
		zw.Reset(&buf)
		zw.Write(b.raw) // a bytes.Buffer: no error
		zw.Close()
		zw.Reset(nil)
		gzipPool.Put(zw)
		if buf.Len() < len(b.raw) {
			b.gz = bytes.Clone(buf.Bytes()) // exact size: the Grow guess may be over
			b.gzHdr = headerValues{[]string{b.gzTag}, []string{strconv.Itoa(len(b.gz))}}
		}
	})
	return b.gz
}

var gzipPool = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression) // a valid level: no error
	return w
}}

var (
	varyAE  = []string{"Accept-Encoding"}
	nosniff = []string{"nosniff"}
	gzipCE  = []string{"gzip"}
)

// Serve answers r with the body and status 200: 304 when If-None-Match
// names this body (either form's ETag, or *), the gzip form when the
// client accepts gzip and there is one, the bytes otherwise; no body for
// HEAD. It always sets Vary: Accept-Encoding, since the bytes depend on
// it. Headers the caller set (Cache-Control, …) are kept.
func (b *Body) Serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h["Vary"] = varyAE
	data, hv := b.raw, &b.rawHdr
	if AcceptsGzip(r) {
		if gz := b.Gzipped(); gz != nil {
			data, hv = gz, &b.gzHdr
			h["Content-Encoding"] = gzipCE
		}
	}
	h["Etag"] = hv.etag
	if inm := r.Header.Get("If-None-Match"); inm != "" && b.matches(inm) {
		delete(h, "Content-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h["Content-Type"] = b.ctype
	h["X-Content-Type-Options"] = nosniff
	h["Content-Length"] = hv.length
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(data)
	}
}

// matches says whether an If-None-Match value names this body: "*", or
// either form's ETag, compared weakly as RFC 9110 13.1.2 asks (a W/
// prefix is ignored).
func (b *Body) matches(inm string) bool {
	for _, t := range strings.Split(inm, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == b.etag || t == b.gzTag {
			return true
		}
	}
	return false
}
