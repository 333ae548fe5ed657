package identity_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadout/loadout/identity"
	"github.com/loadout/loadout/internal/oidctest"
	"github.com/loadout/loadout/internal/testutil"
)

const redirect = "http://127.0.0.1:1/ui/oidc/callback"

type env struct {
	p  *oidctest.Provider
	si *identity.SignIn
}

func roles() identity.RoleMap {
	return identity.RoleMap{
		Groups:       map[string][]string{"skills-admins": {"admin"}, "data": {"author:team-data-*", "viewer"}},
		EmailDomains: map[string][]string{"example.com": {"viewer"}},
	}
}

func newEnv(t *testing.T, cfg func(*identity.SignInConfig)) *env {
	t.Helper()
	p := oidctest.Start(t, oidctest.Config{
		Clients: []oidctest.Client{{ID: "loadout", Secret: "s3cret", RedirectURIs: []string{redirect}, Scopes: []string{"groups"}}},
		Users: []oidctest.User{
			{ID: "u1", Username: "alice", Password: "pw", Email: "alice@corp.test", Groups: []string{"skills-admins"}},
			{ID: "u2", Username: "bob", Password: "pw", Email: "bob@corp.test", Groups: []string{"elsewhere"}},
		},
	})
	c := identity.SignInConfig{Issuer: p.Issuer, ClientID: "loadout", ClientSecret: "s3cret", RedirectURL: redirect,
		Scopes: []string{"email", "profile", "offline_access"}, Roles: roles(), HTTP: identity.Client(5*time.Second, 0)}
	if cfg != nil {
		cfg(&c)
	}
	si, err := identity.NewSignIn(c)
	if err != nil {
		t.Fatal(err)
	}
	return &env{p: p, si: si}
}

// signIn starts a sign-in, logs in at the provider, and returns the
// callback's query and the state (the browser's cookie).
func (e *env) login(t *testing.T, user string) (url.Values, string) {
	t.Helper()
	ctx := testutil.Context(t)
	authURL, state, err := e.si.Start(ctx, "/ui/skills/x")
	if err != nil {
		t.Fatal(err)
	}
	au, _ := url.Parse(authURL)
	q := au.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("nonce") == "" || q.Get("state") != state {
		t.Fatalf("the authorization URL lacks PKCE S256, a nonce or the state: %s", authURL)
	}
	back, err := e.p.Login(ctx, authURL, user, "pw")
	if err != nil {
		t.Fatal(err)
	}
	return back.Query(), state
}

func code(err error) string { return identity.CodeOf(err) }

// The whole flow against the real provider: the admin group maps to
// admin; the session's claims are fetched again with the refresh token,
// and once the user leaves the group the mapping grants nothing.
func TestSignInFlowAndRecheck(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testutil.Context(t)
	q, state := e.login(t, "alice")
	u, err := e.si.Finish(ctx, q, state)
	if err != nil {
		t.Fatal(err)
	}
	if u.Subject != "u1" || u.Email != "alice@corp.test" || !u.EmailVerified || !slices.Equal(u.Scopes, []string{"admin"}) || u.Next != "/ui/skills/x" || u.RefreshToken == "" {
		t.Fatalf("user = %+v", u)
	}
	if !slices.Equal(u.Matched, []string{"group skills-admins"}) {
		t.Errorf("matched = %v", u.Matched)
	}
	// The state is spent: the same callback again is refused.
	if _, err := e.si.Finish(ctx, q, state); code(err) != identity.CodeStateUnknown {
		t.Errorf("the same callback twice: %v, want %s", err, identity.CodeStateUnknown)
	}

	r, err := e.si.Refresh(ctx, u.RefreshToken, u.Subject)
	if err != nil || !slices.Equal(r.Scopes, []string{"admin"}) {
		t.Fatalf("refresh while in the group: %+v, %v", r, err)
	}
	e.p.SetGroups(t, "u1", []string{"data"})
	r, err = e.si.Refresh(ctx, r.RefreshToken, u.Subject)
	if err != nil || !slices.Equal(r.Scopes, []string{"author:team-data-*", "viewer"}) {
		t.Fatalf("refresh after moving to data: %+v, %v", r, err)
	}
	e.p.SetGroups(t, "u1", nil)
	_, err = e.si.Refresh(ctx, r.RefreshToken, u.Subject)
	if code(err) != identity.CodeNoRole {
		t.Fatalf("refresh after leaving every group: %v, want %s", err, identity.CodeNoRole)
	}
	// Another subject's refresh token is not this user's.
	if _, err := e.si.Refresh(ctx, r.RefreshToken, "u2"); err == nil {
		t.Error("a refresh for another subject was accepted")
	}
}

// No mapping matched: refused, with the claims seen.
func TestSignInNoRole(t *testing.T) {
	e := newEnv(t, nil)
	q, state := e.login(t, "bob")
	_, err := e.si.Finish(testutil.Context(t), q, state)
	var ie *identity.Error
	if code(err) != identity.CodeNoRole || !asErr(err, &ie) || ie.Claims == nil || ie.Claims.Subject != "u2" || !slices.Equal(ie.Claims.Groups, []string{"elsewhere"}) {
		t.Fatalf("bob: %v (%+v), want no_role with his claims", err, ie)
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Error("the refusal shows the client secret")
	}
}

func asErr(err error, target **identity.Error) bool {
	e, ok := err.(*identity.Error)
	if ok {
		*target = e
	}
	return ok
}

// The state: missing, from another browser, spent; and a code used once
// already, presented with a fresh state.
func TestSignInStateAndReplay(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testutil.Context(t)
	q, state := e.login(t, "alice")

	noState := url.Values{"code": {q.Get("code")}}
	if _, err := e.si.Finish(ctx, noState, state); code(err) != identity.CodeStateMissing {
		t.Errorf("no state: %v", err)
	}
	if _, err := e.si.Finish(ctx, q, ""); code(err) != identity.CodeStateMissing {
		t.Errorf("no state cookie: %v", err)
	}
	if _, err := e.si.Finish(ctx, q, state+"x"); code(err) != identity.CodeStateMismatch {
		t.Errorf("another browser's state: %v", err)
	}
	if _, err := e.si.Finish(ctx, q, state); err != nil {
		t.Fatalf("the real callback after the refused ones: %v", err)
	}
	// The code again, under a new sign-in's state: the provider refuses it.
	_, state2, err := e.si.Start(ctx, "/ui/")
	if err != nil {
		t.Fatal(err)
	}
	q2 := url.Values{"code": {q.Get("code")}, "state": {state2}}
	if _, err := e.si.Finish(ctx, q2, state2); code(err) != identity.CodeExchange {
		t.Errorf("a replayed code: %v, want %s", err, identity.CodeExchange)
	}
	// An error sent back by the provider.
	_, state3, _ := e.si.Start(ctx, "/ui/")
	if _, err := e.si.Finish(ctx, url.Values{"state": {state3}, "error": {"access_denied"}}, state3); code(err) != identity.CodeProviderError {
		t.Errorf("a provider error: %v", err)
	}
}

// A million sign-in starts keep at most MaxPending, the newest; an
// evicted one is refused, the newest one still finishes.
func TestPendingBounded(t *testing.T) {
	const max = 1000
	e := newEnv(t, func(c *identity.SignInConfig) { c.MaxPending = max })
	ctx := testutil.Context(t)
	_, first, err := e.si.Start(ctx, "/ui/")
	if err != nil {
		t.Fatal(err)
	}
	n := 1_000_000
	if testing.Short() {
		n = 10_000
	}
	for i := 0; i < n; i++ {
		if _, _, err := e.si.Start(ctx, "/ui/"); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := e.si.Start(ctx, "/ui/"+strings.Repeat("a", identity.MaxNext-4)); err != nil {
		t.Errorf("a return path of MaxNext bytes: %v", err)
	}
	if _, _, err := e.si.Start(ctx, "/ui/"+strings.Repeat("a", identity.MaxNext-3)); err == nil {
		t.Error("a return path one byte over MaxNext was kept")
	}
	if got := e.si.Pending(); got != max {
		t.Fatalf("after %d starts %d are pending, want the bound %d", n, got, max)
	}
	if _, err := e.si.Finish(ctx, url.Values{"state": {first}, "code": {"x"}}, first); code(err) != identity.CodeStateUnknown {
		t.Errorf("an evicted sign-in: %v, want %s", err, identity.CodeStateUnknown)
	}
	q, state := e.login(t, "alice")
	if _, err := e.si.Finish(ctx, q, state); err != nil {
		t.Errorf("a sign-in after the flood: %v", err)
	}
}

// Pending sign-ins expire after PendingTTL.
func TestPendingExpires(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	e := newEnv(t, func(c *identity.SignInConfig) {
		c.PendingTTL = time.Minute
		c.Now = func() time.Time { return time.Unix(0, now.Load()) }
	})
	ctx := testutil.Context(t)
	_, state, err := e.si.Start(ctx, "/ui/")
	if err != nil {
		t.Fatal(err)
	}
	now.Add(int64(time.Minute))
	if _, err := e.si.Finish(ctx, url.Values{"state": {state}, "code": {"x"}}, state); code(err) != identity.CodeStateUnknown {
		t.Errorf("a sign-in one TTL old: %v, want %s", err, identity.CodeStateUnknown)
	}
	if e.si.Pending() != 0 {
		t.Errorf("%d pending after expiry", e.si.Pending())
	}
}

// claims are a valid ID token's claims for the env's client.
func validClaims(p *oidctest.Provider, nonce string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": p.Issuer, "aud": "loadout", "sub": "u1", "exp": now.Add(time.Hour).Unix(), "iat": now.Unix(),
		"nonce": nonce, "email": "alice@corp.test", "email_verified": true, "groups": []string{"skills-admins"}}
}

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
		} else {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func jwt(header, claims map[string]any, sign func(string) []byte) string {
	h, _ := json.Marshal(header)
	c, _ := json.Marshal(claims)
	in := b64(h) + "." + b64(c)
	return in + "." + b64(sign(in))
}

// providerKey is the provider's public key, from its JWKS.
func providerKey(t *testing.T, p *oidctest.Provider) (kid string, pub *rsa.PublicKey) {
	t.Helper()
	resp, err := http.Get(p.URL("keys"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var jwks struct{ Keys []struct{ Kid, N, E string } }
	json.NewDecoder(resp.Body).Decode(&jwks)
	if len(jwks.Keys) == 0 {
		t.Fatal("the provider's JWKS is empty")
	}
	k := jwks.Keys[0]
	n, _ := base64.RawURLEncoding.DecodeString(k.N)
	e, _ := base64.RawURLEncoding.DecodeString(k.E)
	return k.Kid, &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
}

// ForgedIDTokens: every ID token a provider's key did not vouch for, or
// that is not for this client, this sign-in and now, is refused; a valid
// one passes (so each refusal is the check's, not a broken setup's).
func TestVerifyRefusesForgedIDTokens(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testutil.Context(t)
	const nonce = "n-1"
	good := validClaims(e.p, nonce)
	if c, err := e.si.Verify(ctx, e.p.Sign(t, good), nonce); err != nil || c.Subject != "u1" || !slices.Equal(c.Groups, []string{"skills-admins"}) {
		t.Fatalf("a valid token: %+v, %v", c, err)
	}
	kid, pub := providerKey(t, e.p)
	der, _ := x509.MarshalPKIXPublicKey(pub)
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	hs := func(key []byte) func(string) []byte {
		return func(in string) []byte { m := hmac.New(sha256.New, key); m.Write([]byte(in)); return m.Sum(nil) }
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	rs := func(in string) []byte {
		d := sha256.Sum256([]byte(in))
		s, _ := rsa.SignPKCS1v15(rand.Reader, other, crypto.SHA256, d[:])
		return s
	}
	now := time.Now()
	cases := []struct {
		name, token, want string
	}{
		{"wrong issuer", e.p.Sign(t, with(good, "iss", "http://evil.example/")), "issued by a different provider"},
		{"wrong audience", e.p.Sign(t, with(good, "aud", "another-client")), "audience"},
		{"expired", e.p.Sign(t, with(good, "exp", now.Add(-time.Minute).Unix(), "iat", now.Add(-time.Hour).Unix())), "expired"},
		{"iat in the future", e.p.Sign(t, with(good, "iat", now.Add(time.Hour).Unix(), "exp", now.Add(2*time.Hour).Unix())), "future"},
		{"no iat", e.p.Sign(t, with(good, "iat", nil)), "iat"},
		{"wrong nonce", e.p.Sign(t, with(good, "nonce", "n-2")), "nonce"},
		{"no nonce", e.p.Sign(t, with(good, "nonce", nil)), "nonce"},
		{"azp of another client", e.p.Sign(t, with(good, "aud", []string{"loadout", "other"}, "azp", "other")), "azp"},
		{"alg none", jwt(map[string]any{"alg": "none", "typ": "JWT", "kid": kid}, good, func(string) []byte { return nil }), "none"},
		{"HS256 keyed with the public key (PEM)", jwt(map[string]any{"alg": "HS256", "typ": "JWT", "kid": kid}, good, hs(pemBytes)), "HS256"},
		{"HS256 keyed with the public key (DER)", jwt(map[string]any{"alg": "HS256", "typ": "JWT", "kid": kid}, good, hs(der)), "HS256"},
		{"a kid not in the JWKS", jwt(map[string]any{"alg": "RS256", "typ": "JWT", "kid": "not-in-jwks"}, good, rs), "verify"},
		{"the provider's kid, another key", jwt(map[string]any{"alg": "RS256", "typ": "JWT", "kid": kid}, good, rs), "verify"},
		{"groups not a list", e.p.Sign(t, with(good, "groups", 42)), "groups"},
	}
	for _, c := range cases {
		_, err := e.si.Verify(ctx, c.token, nonce)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if k := code(err); k != identity.CodeIDToken && k != identity.CodeClaims {
			t.Errorf("%s: code %q, want %s", c.name, k, identity.CodeIDToken)
		}
		if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(c.want)) {
			t.Errorf("%s: %v, want it to say %q", c.name, err, c.want)
		}
	}
	// A groups claim past MaxGroups is refused, one at it is read.
	many := make([]string, identity.MaxGroups+1)
	for i := range many {
		many[i] = fmt.Sprintf("g%d", i)
	}
	if _, err := e.si.Verify(ctx, e.p.Sign(t, with(good, "groups", many[:identity.MaxGroups])), nonce); err != nil {
		t.Errorf("%d groups: %v", identity.MaxGroups, err)
	}
	if _, err := e.si.Verify(ctx, e.p.Sign(t, with(good, "groups", many)), nonce); code(err) != identity.CodeClaims {
		t.Errorf("%d groups: %v, want %s", len(many), err, identity.CodeClaims)
	}
}

// The email domain maps only a verified email; the domain matches
// exactly (no suffix match), case aside.
func TestRoleMapEmail(t *testing.T) {
	m := roles()
	for _, c := range []struct {
		email    string
		verified bool
		want     []string
	}{
		{"a@example.com", true, []string{"viewer"}},
		{"a@EXAMPLE.com", true, []string{"viewer"}},
		{"a@example.com", false, nil},
		{"a@evil-example.com", true, nil},
		{"a@sub.example.com", true, nil},
		{"a@example.com.evil.test", true, nil},
		{"example.com", true, nil},
		{"a@", true, nil},
	} {
		got, _ := m.Scopes(identity.Claims{Subject: "s", Email: c.email, EmailVerified: c.verified})
		if !slices.Equal(got, c.want) {
			t.Errorf("%q verified=%v: %v, want %v", c.email, c.verified, got, c.want)
		}
	}
	got, matched := m.Scopes(identity.Claims{Subject: "s", Groups: []string{"data", "skills-admins", "Data"}, Email: "x@example.com", EmailVerified: true})
	if !slices.Equal(got, []string{"admin", "author:team-data-*", "viewer"}) || len(matched) != 3 {
		t.Errorf("several groups and a domain: %v %v", got, matched)
	}
	if got, _ := m.Scopes(identity.Claims{Subject: "s", Groups: []string{"Skills-Admins"}}); got != nil {
		t.Errorf("group names match case-sensitively: %v", got)
	}
}

// A provider whose discovery document or JWKS hangs, or answers 100 MB:
// the sign-in fails with provider_unreachable or an invalid token, within
// the client's timeout, having read at most the body cap.
func TestProviderFaultsBounded(t *testing.T) {
	var served atomic.Int64
	const hundredMB = 100 << 20
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		big := func() {
			chunk := make([]byte, 64<<10)
			for i := 0; i < hundredMB/len(chunk); i++ {
				n, err := w.Write(chunk)
				served.Add(int64(n))
				if err != nil {
					return
				}
			}
		}
		hang := func() {
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
		}
		switch {
		case strings.HasPrefix(r.URL.Path, "/hang/.well-known"):
			hang()
		case strings.HasPrefix(r.URL.Path, "/big/.well-known"):
			big()
		case strings.HasSuffix(r.URL.Path, "/.well-known/openid-configuration"):
			iss := srv.URL + strings.TrimSuffix(r.URL.Path, ".well-known/openid-configuration")
			json.NewEncoder(w).Encode(map[string]any{"issuer": iss, "authorization_endpoint": iss + "auth", "token_endpoint": iss + "token", "jwks_uri": iss + "keys", "id_token_signing_alg_values_supported": []string{"RS256"}})
		case r.URL.Path == "/jwkshang/keys":
			hang()
		case r.URL.Path == "/jwksbig/keys":
			big()
		}
	}))
	defer srv.Close()
	mk := func(issuer string) *identity.SignIn {
		si, err := identity.NewSignIn(identity.SignInConfig{Issuer: issuer, ClientID: "loadout", RedirectURL: redirect, Roles: roles(), HTTP: identity.Client(500*time.Millisecond, 1<<20)})
		if err != nil {
			t.Fatal(err)
		}
		return si
	}
	ctx := context.Background()
	for _, c := range []struct{ name, issuer, want string }{
		{"discovery hangs", srv.URL + "/hang/", "(?i)timeout|deadline"},
		{"discovery is 100 MB", srv.URL + "/big/", "too large"},
	} {
		served.Store(0)
		start := time.Now()
		_, _, err := mk(c.issuer).Start(ctx, "/ui/")
		if code(err) != identity.CodeUnreachable || !regexp.MustCompile(c.want).MatchString(err.Error()) {
			t.Errorf("%s: %v, want %s saying %q", c.name, err, identity.CodeUnreachable, c.want)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: took %v", c.name, d)
		}
		if n := served.Load(); n > 16<<20 {
			t.Errorf("%s: %d bytes were taken from the server", c.name, n)
		}
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	for _, c := range []struct{ name, issuer, want string }{
		{"JWKS hangs", srv.URL + "/jwkshang/", "(?i)timeout|deadline"},
		{"JWKS is 100 MB", srv.URL + "/jwksbig/", "too large"},
	} {
		served.Store(0)
		si := mk(c.issuer)
		claims := map[string]any{"iss": c.issuer, "aud": "loadout", "sub": "u", "exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()}
		tok := jwt(map[string]any{"alg": "RS256", "kid": "k"}, claims, func(in string) []byte {
			d := sha256.Sum256([]byte(in))
			s, _ := rsa.SignPKCS1v15(rand.Reader, other, crypto.SHA256, d[:])
			return s
		})
		start := time.Now()
		_, err := si.Verify(ctx, tok, "")
		if code(err) != identity.CodeIDToken || !regexp.MustCompile(c.want).MatchString(err.Error()) {
			t.Errorf("%s: %v, want %s saying %q", c.name, err, identity.CodeIDToken, c.want)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: took %v", c.name, d)
		}
		if n := served.Load(); n > 16<<20 {
			t.Errorf("%s: %d bytes were taken from the server", c.name, n)
		}
	}
}

// noIDTokenOnRefresh is a transport that drops the id_token of the token
// endpoint's answers to refresh grants: a provider that sends none then
// (the fault this test needs; the rest is the real provider).
type noIDTokenOnRefresh struct{ base http.RoundTripper }

func (n noIDTokenOnRefresh) RoundTrip(r *http.Request) (*http.Response, error) {
	refresh := false
	if r.Body != nil && strings.HasSuffix(r.URL.Path, "/token") {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		refresh = strings.Contains(string(b), "grant_type=refresh_token")
	}
	resp, err := n.base.RoundTrip(r)
	if err != nil || !refresh {
		return resp, err
	}
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	resp.Body.Close()
	delete(m, "id_token")
	b, _ := json.Marshal(m)
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// A provider without an ID token on refresh: the re-check reads the
// userinfo endpoint, and still sees the group change.
func TestRefreshWithoutIDToken(t *testing.T) {
	var dropped atomic.Int64
	e := newEnv(t, func(c *identity.SignInConfig) {
		c.HTTP.Transport = countingDrop{noIDTokenOnRefresh{c.HTTP.Transport}, &dropped}
	})
	ctx := testutil.Context(t)
	q, state := e.login(t, "alice")
	u, err := e.si.Finish(ctx, q, state)
	if err != nil {
		t.Fatal(err)
	}
	e.p.SetGroups(t, "u1", []string{"data"})
	r, err := e.si.Refresh(ctx, u.RefreshToken, u.Subject)
	if err != nil || !slices.Equal(r.Scopes, []string{"author:team-data-*", "viewer"}) || r.Email != "alice@corp.test" {
		t.Fatalf("refresh through userinfo: %+v, %v", r, err)
	}
	if dropped.Load() == 0 {
		t.Fatal("no refresh answer went through the transport")
	}
	e.p.SetGroups(t, "u1", nil)
	if _, err := e.si.Refresh(ctx, r.RefreshToken, u.Subject); code(err) != identity.CodeNoRole {
		t.Errorf("refresh through userinfo after leaving every group: %v", err)
	}
	if _, err := e.si.Refresh(ctx, r.RefreshToken, "u2"); err == nil {
		t.Error("userinfo for another subject was accepted")
	}
}

type countingDrop struct {
	noIDTokenOnRefresh
	n *atomic.Int64
}

func (c countingDrop) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/token") {
		c.n.Add(1)
	}
	return c.noIDTokenOnRefresh.RoundTrip(r)
}

// BenchmarkStart: one sign-in start (state, nonce, PKCE verifier, the
// authorization URL, the bounded pending set), discovery done.
func BenchmarkStart(b *testing.B) {
	p := oidctest.Start(b, oidctest.Config{Clients: []oidctest.Client{{ID: "loadout", RedirectURIs: []string{redirect}}}})
	si, err := identity.NewSignIn(identity.SignInConfig{Issuer: p.Issuer, ClientID: "loadout", RedirectURL: redirect, Roles: roles()})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, _, err := si.Start(ctx, "/ui/"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		si.Start(ctx, "/ui/")
	}
}
