package httpapi_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loadout/loadout/httpapi"
)

// TestGuardAllowedHostSyntax: an allowed host that cannot be a Host value
// (a URL, a path, a query, a fragment, a user, a space) is refused when
// the guard is made, each character on its own; names, addresses and
// host:port pass.
func TestGuardAllowedHostSyntax(t *testing.T) {
	ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, h := range []string{"https://x", "http://x:80", "x/", "x/y", "x?y", "x#y", "u@x", "x y", "x\ty", "", "  "} {
		if _, err := httpapi.Guard(httpapi.GuardOptions{AllowedHosts: []string{h}}, ok); err == nil {
			t.Errorf("Guard took %q as an allowed host", h)
		}
	}
	for _, h := range []string{"x", "skills.example.com", "x:8443", "10.0.0.5", "10.0.0.5:7777", "[::1]:80", "fe80::1"} {
		if _, err := httpapi.Guard(httpapi.GuardOptions{AllowedHosts: []string{h}}, ok); err != nil {
			t.Errorf("Guard refused %q: %v", h, err)
		}
	}
}

// TestGuardUnspecifiedListen: listening on 0.0.0.0 (or ::), an IP literal
// in Host passes only when it is the address the request's connection
// arrived on (what a client typing this machine's address sends); any
// other address is refused, as is any address when the server listens on
// one address only and the Host is not it.
func TestGuardUnspecifiedListen(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	code := func(listen, local, host string) int {
		t.Helper()
		g, err := httpapi.Guard(httpapi.GuardOptions{Listen: listen}, ok)
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest("GET", "/v1/agents", nil)
		r.Host = host
		la, err := net.ResolveTCPAddr("tcp", local)
		if err != nil {
			t.Fatal(err)
		}
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, la))
		w := httptest.NewRecorder()
		g.ServeHTTP(w, r)
		if w.Code != 200 && !strings.Contains(w.Body.String(), httpapi.CodeHostNotAllowed) {
			t.Fatalf("Host %s: %d %s", host, w.Code, w.Body)
		}
		return w.Code
	}
	for _, c := range []struct {
		listen, local, host string
		want                int
	}{
		{"0.0.0.0:7777", "10.1.2.3:7777", "10.1.2.3:7777", 200},
		{"0.0.0.0:7777", "10.1.2.3:7777", "10.1.2.3", 200},
		{"0.0.0.0:7777", "10.1.2.3:7777", "10.1.2.4:7777", 403},
		{"0.0.0.0:7777", "10.1.2.3:7777", "192.168.0.1", 403},
		{"0.0.0.0:7777", "10.1.2.3:7777", "[fe80::1]:7777", 403},
		{"[::]:7777", "[::ffff:10.1.2.3]:7777", "10.1.2.3:7777", 200},
		{"[::]:7777", "[2001:db8::1]:7777", "[2001:db8::1]:7777", 200},
		{"[::]:7777", "[2001:db8::1]:7777", "[2001:db8::2]:7777", 403},
		// One address: only it (and loopback), whatever the connection.
		{"10.1.2.3:7777", "10.1.2.4:7777", "10.1.2.4:7777", 403},
		{"10.1.2.3:7777", "10.1.2.3:7777", "10.1.2.3:7777", 200},
		{"0.0.0.0:7777", "10.1.2.3:7777", "127.0.0.1:7777", 200},
		// A name is never the connection's address.
		{"0.0.0.0:7777", "10.1.2.3:7777", "evil.example", 403},
	} {
		if got := code(c.listen, c.local, c.host); got != c.want {
			t.Errorf("listening on %s, connection to %s, Host %s: %d, want %d", c.listen, c.local, c.host, got, c.want)
		}
	}
}
