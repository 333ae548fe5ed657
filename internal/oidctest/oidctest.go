// Package oidctest starts a real OpenID provider for loadout's identity
// tests: zitadel/oidc's example provider, built from compat/oidcop (a
// module of its own) and run as a process. Only tests import it.
//
// The provider issues JWT access tokens whose audience is the RFC 8707
// resource the client asked for (and the client id), puts a "groups" claim
// in ID and access tokens, lets a test change a user's groups while it
// runs, and signs any claims with its own key for tests of tokens a
// well-behaved provider never issues.
package oidctest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

// Client is a client registered at the provider. Without a secret it is
// public (PKCE, token endpoint auth "none").
type Client struct {
	ID           string   `json:"id"`
	Secret       string   `json:"secret,omitempty"`
	RedirectURIs []string `json:"redirectURIs"`
	// Scopes beyond OpenID's own the client may ask for.
	Scopes []string `json:"scopes,omitempty"`
}

// User is a user who can sign in on the provider's login page.
type User struct {
	ID       string   `json:"id"`
	Username string   `json:"username"`
	Password string   `json:"password"`
	Email    string   `json:"email"`
	Groups   []string `json:"groups,omitempty"`
}

// Config is what the provider knows.
type Config struct {
	Clients []Client `json:"clients"`
	Users   []User   `json:"users"`
}

// Provider is a running provider.
type Provider struct {
	// Issuer is the provider's issuer URL, with its trailing slash
	// (http://127.0.0.1:PORT/).
	Issuer string
}

// Start builds the provider (once per machine, see testutil.GoTool),
// starts it on a free loopback port with cfg, and stops it when the test
// ends. Under -short it skips.
func Start(t testing.TB, cfg Config) *Provider {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no OpenID provider")
	}
	bin := testutil.GoTool(t, "compat/oidcop")
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "oidcop.json")
	testutil.WriteBytes(t, path, b, 0o600)
	cmd := exec.Command(bin, "-config", path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("oidcop stderr:\n%s", stderr.String())
		}
	})
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		if s.Scan() {
			line <- s.Text()
		}
		close(line)
		io.Copy(io.Discard, stdout)
	}()
	select {
	case l, ok := <-line:
		issuer, found := strings.CutPrefix(l, "issuer ")
		if !ok || !found {
			t.Fatalf("oidcop did not start: %q\n%s", l, stderr.String())
		}
		return &Provider{Issuer: issuer}
	case <-testutil.After(t):
		t.Fatalf("oidcop did not print its issuer\n%s", stderr.String())
	}
	return nil
}

// URL is the issuer with path appended ("keys", "auth", ...).
func (p *Provider) URL(path string) string { return p.Issuer + strings.TrimPrefix(path, "/") }

// SetGroups replaces user's groups, as a directory administrator would;
// tokens issued from now on carry them.
func (p *Provider) SetGroups(t testing.TB, user string, groups []string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"user": user, "groups": groups})
	req, _ := http.NewRequest(http.MethodPut, p.URL("test/groups"), bytes.NewReader(b))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("setting the groups of %s: %s", user, resp.Status)
	}
}

// Sign returns a JWT of claims signed by the provider's own key, with its
// key id: a token the provider's JWKS vouches for, whatever it says.
func (p *Provider) Sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(claims)
	resp, err := http.Post(p.URL("test/sign"), "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("signing claims: %s: %s", resp.Status, out)
	}
	return string(out)
}

var idField = regexp.MustCompile(`name="id" value="([^"]*)"`)

// Login does what a person does in the browser after a client sends them
// to authURL (the provider's authorization endpoint with the client's
// parameters): it opens the login page, signs in as username with
// password, and follows the provider's redirects until one leaves the
// provider. It returns that URL: the client's redirect URI with the code
// and state, or with an error. Browser tests do the same in Chromium;
// this is for tests that only need the code.
func (p *Provider) Login(ctx context.Context, authURL, username, password string) (*url.URL, error) {
	jar := &cookieJar{}
	c := &http.Client{
		Timeout:       30 * time.Second,
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	issuer, _ := url.Parse(p.Issuer)
	next, err := url.Parse(authURL)
	if err != nil {
		return nil, err
	}
	var form url.Values // the login form, once seen
	for hop := 0; hop < 20; hop++ {
		if next.Host != issuer.Host {
			return next, nil
		}
		var req *http.Request
		if form != nil && strings.HasSuffix(next.Path, "/login/username") {
			req, _ = http.NewRequestWithContext(ctx, http.MethodPost, next.String(), strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			form = nil
		} else {
			req, _ = http.NewRequestWithContext(ctx, http.MethodGet, next.String(), nil)
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		switch {
		case resp.StatusCode >= 300 && resp.StatusCode < 400:
			loc, err := next.Parse(resp.Header.Get("Location"))
			if err != nil {
				return nil, err
			}
			next = loc
		case resp.StatusCode == http.StatusOK && idField.Match(body):
			if req.Method == http.MethodPost {
				return nil, fmt.Errorf("the provider refused the sign-in of %s", username)
			}
			id := idField.FindSubmatch(body)[1]
			form = url.Values{"id": {string(id)}, "username": {username}, "password": {password}}
			next, _ = next.Parse("/login/username")
		default:
			return nil, fmt.Errorf("%s %s: %s: %.300s", req.Method, next, resp.Status, body)
		}
	}
	return nil, fmt.Errorf("more than 20 redirects from %s", authURL)
}

type cookieJar struct{ cookies []*http.Cookie }

func (j *cookieJar) SetCookies(_ *url.URL, cs []*http.Cookie) { j.cookies = append(j.cookies, cs...) }
func (j *cookieJar) Cookies(*url.URL) []*http.Cookie          { return j.cookies }
