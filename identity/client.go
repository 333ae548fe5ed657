package identity

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// The bounds of every request to the identity provider (discovery, JWKS,
// token endpoint).
const (
	// DefaultTimeout bounds one request, start to last byte.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxBody bounds one response body: a discovery document or a
	// JWKS is a few kilobytes; a provider that answers more is refused.
	DefaultMaxBody = 1 << 20
)

// ErrBodyTooLarge is the error of reading a response past its bound.
var ErrBodyTooLarge = errors.New("response body too large")

// Client returns the HTTP client for requests to the identity provider:
// each request ends within timeout (DefaultTimeout when 0), and reading a
// response body past maxBody bytes (DefaultMaxBody when 0) fails with
// ErrBodyTooLarge instead of filling memory. Redirects are not followed:
// a provider's endpoints are named by its discovery document.
func Client(timeout time.Duration, maxBody int64) *http.Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if maxBody <= 0 {
		maxBody = DefaultMaxBody
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.ResponseHeaderTimeout = timeout
	base.MaxResponseHeaderBytes = 64 << 10
	return &http.Client{
		Timeout:       timeout,
		Transport:     &boundedTransport{base: base, max: maxBody},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

type boundedTransport struct {
	base http.RoundTripper
	max  int64
}

func (b *boundedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > b.max {
		resp.Body.Close()
		return nil, fmt.Errorf("%s %s: %w: %d bytes announced, at most %d", r.Method, r.URL.Redacted(), ErrBodyTooLarge, resp.ContentLength, b.max)
	}
	resp.Body = &boundedBody{rc: resp.Body, left: b.max, what: r.Method + " " + r.URL.Redacted()}
	return resp, nil
}

type boundedBody struct {
	rc   io.ReadCloser
	left int64
	what string
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One more byte tells a body of exactly the bound from a longer one.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, fmt.Errorf("%s: %w", b.what, ErrBodyTooLarge)
		}
		return b.rc.Read(p)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error { return b.rc.Close() }
