package identity

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestClientBounds(t *testing.T) {
	const max = 100
	body := map[string]string{"/exact": strings.Repeat("a", max), "/over": strings.Repeat("a", max+1)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hang":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		case "/redirect":
			http.Redirect(w, r, "/exact", http.StatusFound)
			return
		case "/chunked-over":
			w.(http.Flusher).Flush() // no Content-Length: chunked
			io.WriteString(w, strings.Repeat("b", max+1))
			return
		}
		io.WriteString(w, body[r.URL.Path])
	}))
	defer srv.Close()
	c := Client(200*time.Millisecond, max)
	get := func(path string) (string, int, error) {
		resp, err := c.Get(srv.URL + path)
		if err != nil {
			return "", 0, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), resp.StatusCode, err
	}
	if b, _, err := get("/exact"); err != nil || len(b) != max {
		t.Errorf("a body of exactly %d bytes: %d bytes, %v", max, len(b), err)
	}
	if _, _, err := get("/over"); !errors.Is(err, ErrBodyTooLarge) {
		t.Errorf("a body one byte over (announced): %v, want ErrBodyTooLarge", err)
	}
	if _, _, err := get("/chunked-over"); !errors.Is(err, ErrBodyTooLarge) {
		t.Errorf("a body one byte over (chunked): %v, want ErrBodyTooLarge", err)
	}
	start := time.Now()
	if _, _, err := get("/hang"); err == nil {
		t.Error("a hanging server: no error")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("a hanging server held the request %v", d)
	}
	if _, code, err := get("/redirect"); err != nil || code != http.StatusFound {
		t.Errorf("a redirect: %d, %v; want it returned, not followed", code, err)
	}
}
