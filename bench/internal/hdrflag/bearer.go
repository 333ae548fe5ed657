package hdrflag

import "net/http"

// Bearer is next with "Authorization: Bearer token" on every request
// (writeload's and mcpload's clients).
func Bearer(token string, next http.RoundTripper) http.RoundTripper {
	return bearer{token, next}
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
