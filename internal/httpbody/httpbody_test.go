package httpbody

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestAcceptsGzip(t *testing.T) {
	for ae, want := range map[string]bool{
		"": false, "gzip": true, "GZIP": true, "x-gzip": true, "gzip, deflate, br": true, "br;q=1, gzip;q=0.1": true,
		"gzip;q=0": false, "gzip; q=0.0": false, "gzip;q=0.000": false, "identity": false, "br": false, "deflate": false,
		"*": true, "*;q=0": false, "gzip;q=0, *": false, "*, gzip;q=0": false, "identity, *;q=0.5": true, "gzip;level=1;q=0": false,
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if ae != "" {
			r.Header.Set("Accept-Encoding", ae)
		}
		if got := AcceptsGzip(r); got != want {
			t.Errorf("Accept-Encoding %q: %v, want %v", ae, got, want)
		}
	}
}

// The gzip form is made once per Body, and a Body holds at most its bytes
// and one gzip form smaller than them.
func TestBodyGzipOnceAndBounded(t *testing.T) {
	raw := []byte(strings.Repeat(`{"name":"a-skill","description":"does things"},`, 2000))
	b := New(raw, "application/json")
	var first []byte
	for i := 0; i < 5; i++ {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Accept-Encoding", "gzip")
		w := httptest.NewRecorder()
		b.Serve(w, r)
		if w.Header().Get("Content-Encoding") != "gzip" || w.Header().Get("Vary") != "Accept-Encoding" {
			t.Fatalf("headers %v", w.Header())
		}
		got := w.Body.Bytes()
		if i == 0 {
			first = b.Gzipped()
		} else if &b.Gzipped()[0] != &first[0] {
			t.Fatal("compressed again")
		}
		zr, err := gzip.NewReader(bytes.NewReader(got))
		if err != nil {
			t.Fatal(err)
		}
		if plain, _ := io.ReadAll(zr); !bytes.Equal(plain, raw) {
			t.Fatal("gzip form differs")
		}
	}
	if len(b.Bytes())+len(b.Gzipped()) > 2*len(raw) || len(b.Gzipped()) >= len(raw)/10 {
		t.Errorf("%d bytes, gzip %d", len(raw), len(b.Gzipped()))
	}
	// Small or binary bodies are not compressed.
	for _, sb := range []*Body{New([]byte(`{"a":1}`), "application/json"), New(bytes.Repeat([]byte{0}, 4096), "application/octet-stream")} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Accept-Encoding", "gzip")
		w := httptest.NewRecorder()
		sb.Serve(w, r)
		if w.Header().Get("Content-Encoding") != "" || sb.Gzipped() != nil {
			t.Errorf("%q compressed", sb.ctype)
		}
	}
}

func TestBodyNotModified(t *testing.T) {
	b := New([]byte(strings.Repeat("x", 1000)), "text/plain")
	for inm, want := range map[string]int{
		b.ETag(): 304, "W/" + b.ETag(): 304, `"x", ` + b.ETag(): 304, "*": 304, b.gzTag: 304,
		`"x"`: 200, strings.Trim(b.ETag(), `"`): 200,
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("If-None-Match", inm)
		w := httptest.NewRecorder()
		b.Serve(w, r)
		if w.Code != want || (want == 304 && w.Body.Len() != 0) || w.Header().Get("ETag") != b.ETag() {
			t.Errorf("If-None-Match %s: %d, %d bytes, ETag %q", inm, w.Code, w.Body.Len(), w.Header().Get("ETag"))
		}
	}
	r := httptest.NewRequest("HEAD", "/", nil)
	w := httptest.NewRecorder()
	b.Serve(w, r)
	if w.Code != http.StatusOK || w.Body.Len() != 0 || w.Header().Get("Content-Length") != "1000" {
		t.Errorf("HEAD: %d, %d bytes, Content-Length %q", w.Code, w.Body.Len(), w.Header().Get("Content-Length"))
	}
}
