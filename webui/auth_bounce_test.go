package webui

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/service"
)

// TestBounceEscapes: the page that reloads a link followed from another
// site writes the URL asked for into an attribute and a link; quotes and
// angle brackets in it are escaped there, so a crafted link cannot add
// markup or script to this origin's page.
func TestBounceEscapes(t *testing.T) {
	e := newAuthEnv(t, true)
	c, err := net.Dial("tcp", strings.TrimPrefix(e.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	// Sent raw: a browser's percent-encoding is not relied on.
	target := `/ui/?q="><script>alert(1)</script>&x='y'`
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: localhost\r\nSec-Fetch-Site: cross-site\r\nSec-Fetch-Mode: navigate\r\nConnection: close\r\n\r\n", target)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	bufio.NewReader(res.Body).WriteTo(&b)
	body := b.String()
	if res.StatusCode != 200 || !strings.Contains(body, `http-equiv="refresh"`) {
		t.Fatalf("no bounce page: %d\n%s", res.StatusCode, body)
	}
	if strings.Contains(body, "<script") || strings.Contains(body, "'y'") {
		t.Errorf("the bounce page wrote the URL unescaped:\n%s", body)
	}
	esc := `/ui/?q=&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;x=&#39;y&#39;`
	if strings.Count(body, esc) != 2 {
		t.Errorf("the bounce page does not send the browser back to the same URL, escaped (%s):\n%s", esc, body)
	}
}

// TestSessionCookieSecure: the session cookie is Secure when the request
// came over TLS or a proxy says X-Forwarded-Proto: https (in any case),
// and not otherwise (a plain-HTTP loopback browser would drop it).
func TestSessionCookieSecure(t *testing.T) {
	e := newAuthEnv(t, true)
	admin, _, err := e.svc.CreateToken(context.Background(), service.Principal{Open: true}, "root", []string{"admin"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		proto  string
		secure bool
	}{{"https", true}, {"HTTPS", true}, {"", false}, {"http", false}, {"https, http", false}} {
		cl := e.client(t)
		_, body := send(t, cl, "GET", e.srv.URL+"/ui/login", nil)
		csrf := pageCSRF(t, body)
		var hdr []string
		if c.proto != "" {
			hdr = []string{"X-Forwarded-Proto", c.proto}
		}
		res, _ := send(t, cl, "POST", e.srv.URL+"/ui/login", url.Values{"token": {admin}, "csrf": {csrf}}, hdr...)
		var sess *http.Cookie
		for _, ck := range res.Cookies() {
			if ck.Name == service.SessionCookie {
				sess = ck
			}
		}
		if sess == nil {
			t.Fatalf("X-Forwarded-Proto %q: no session cookie (%d)", c.proto, res.StatusCode)
		}
		if sess.Secure != c.secure {
			t.Errorf("X-Forwarded-Proto %q: Secure=%v, want %v", c.proto, sess.Secure, c.secure)
		}
		// Signing out clears it with the same flags.
		res, _ = send(t, cl, "POST", e.srv.URL+"/ui/logout", url.Values{}, hdr...)
		for _, ck := range res.Cookies() {
			if ck.Name == service.SessionCookie && ck.Secure != c.secure {
				t.Errorf("X-Forwarded-Proto %q: the clearing cookie has Secure=%v", c.proto, ck.Secure)
			}
		}
	}
}
