package attack

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/oauth2"

	"github.com/loadout/loadout/internal/oidctest"
	"github.com/loadout/loadout/internal/testutil"
)

// The MCP authorization attacks (docs/mcp-auth.md): loadout as an OAuth
// resource server in front of a real OpenID provider (internal/oidctest),
// attacked with the access tokens a stolen, mis-issued or forged token
// would be. The provider's test signer makes the tokens a well-behaved
// provider never issues, with its own key; the JWKS faults (a hang, 100
// MB) are the only stand-ins, as a real provider cannot be made to do
// them.

const oauthRedirect = "http://127.0.0.1:1/callback"

type oauthRig struct {
	p        *oidctest.Provider
	s        *Server
	conf     *oauth2.Config
	jwksHits atomic.Int64 // requests to the real JWKS, through the counting proxy
	hangHits atomic.Int64
	hugeHits atomic.Int64
}

// Issuers of the rig beside the real one: tokens naming them are signed by
// the real provider, but their keys are behind a JWKS that hangs, or that
// answers 100 MB.
const (
	hangIssuer = "http://127.0.0.1:9/hang/"
	hugeIssuer = "http://127.0.0.1:9/huge/"
)

func startOAuthRig(t *testing.T) *oauthRig {
	t.Helper()
	rig := &oauthRig{}
	rig.p = oidctest.Start(t, oidctest.Config{
		Clients: []oidctest.Client{{ID: "mcp-host", RedirectURIs: []string{oauthRedirect}, Scopes: []string{"loadout"}}},
		Users: []oidctest.User{
			{ID: "alice-id", Username: "alice", Password: "pw-a", Email: "alice@example.com", Groups: []string{"dev"}},
			{ID: "bob-id", Username: "bob", Password: "pw-b", Email: "bob@example.com", Groups: []string{"ops"}},
			{ID: "carol-id", Username: "carol", Password: "pw-c", Email: "carol@example.com", Groups: []string{"dev"}},
		},
	})
	// The real JWKS, through a proxy that counts the fetches.
	target, _ := url.Parse(rig.p.Issuer)
	proxy := httputil.NewSingleHostReverseProxy(target)
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rig.jwksHits.Add(1)
		r.URL.Path = "/keys"
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(jwks.Close)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rig.hangHits.Add(1)
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	}))
	t.Cleanup(hang.Close)
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rig.hugeHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"keys": [{"kty": "oct", "k": "`)
		chunk := strings.Repeat("A", 1<<20)
		for range 100 {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
		io.WriteString(w, `"}]}`)
	}))
	t.Cleanup(huge.Close)
	cfg := fmt.Sprintf(`{
  "agents": [
    {"agentId": "coder", "skills": [{"root": "skills", "available": ["deploy"]}]},
    {"agentId": "reviewer", "skills": [{"root": "skills", "available": ["lint"]}]}
  ],
  "mcpAuth": {
    "issuers": [
      {"issuer": %q, "jwksUri": %q, "name": "corp"},
      {"issuer": %q, "jwksUri": %q, "name": "hang"},
      {"issuer": %q, "jwksUri": %q, "name": "huge"}
    ],
    "scopes": ["loadout"],
    "grants": [
      {"group": "dev", "grant": "agent:coder"},
      {"group": "ops", "grant": "agent:reviewer"}
    ],
    "leeway": "60s",
    "maxTokenBytes": 8192,
    "cacheSize": 50,
    "jwksRefresh": "10m",
    "timeout": "1s"
  }
}`, rig.p.Issuer, jwks.URL+"/keys", hangIssuer, hang.URL+"/keys", hugeIssuer, huge.URL+"/keys")
	rig.s = Start(t, Options{Config: cfg, Tokens: true})
	rig.conf = &oauth2.Config{ClientID: "mcp-host", RedirectURL: oauthRedirect, Scopes: []string{"openid", "loadout"},
		Endpoint: oauth2.Endpoint{AuthURL: rig.p.URL("auth"), TokenURL: rig.p.URL("oauth/token"), AuthStyle: oauth2.AuthStyleInParams}}
	return rig
}

// token runs the authorization code flow with PKCE for resource as user,
// as an MCP host would, and returns the access token.
func (rig *oauthRig) token(t *testing.T, user, password, resource string) string {
	t.Helper()
	ctx := testutil.Context(t)
	verifier := oauth2.GenerateVerifier()
	back, err := rig.p.Login(ctx, rig.conf.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resource)), user, password)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := rig.conf.Exchange(ctx, back.Query().Get("code"), oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	if err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

// claims are valid claims of the real issuer for resource, as alice;
// change sets or deletes (nil) some.
func (rig *oauthRig) claims(resource string, change map[string]any) map[string]any {
	now := time.Now().Unix()
	c := map[string]any{"iss": rig.p.Issuer, "sub": "alice-id", "aud": []string{resource, "mcp-host"},
		"iat": now, "nbf": now, "exp": now + 300, "scope": "openid loadout", "groups": []string{"dev"}, "client_id": "mcp-host"}
	for k, v := range change {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

var initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"attack","version":"1"}}}`

// mcp posts an initialize to path with token and returns the status and
// the WWW-Authenticate header.
func (rig *oauthRig) mcp(t *testing.T, path, token string) (int, string, string) {
	t.Helper()
	code, h, body := rig.s.Do(t, "POST", path, token, initBody, "Accept", "application/json, text/event-stream")
	return code, h.Get("WWW-Authenticate"), body
}

// refused checks that token is refused at path with status, the
// challenge's error (invalid_token for a 401, insufficient_scope for a 403)
// and the endpoint's resource_metadata, the body's reason word (when
// reason is given) and a message holding msg (when given).
func (rig *oauthRig) refused(t *testing.T, what, path, token string, status int, reason, msg string) {
	t.Helper()
	code, chal, body := rig.mcp(t, path, token)
	if code != status {
		t.Errorf("%s: %d %s, want %d", what, code, body, status)
		return
	}
	want := `error="invalid_token"`
	if status == http.StatusForbidden {
		want = `error="insufficient_scope"`
	}
	if !strings.Contains(chal, want) || !strings.Contains(chal, `resource_metadata="`+rig.s.Base+"/.well-known/oauth-protected-resource"+path+`"`) {
		t.Errorf("%s: WWW-Authenticate %q, want %s and the endpoint's resource_metadata", what, chal, want)
	}
	if reason != "" && !strings.Contains(body, `"reason":"`+reason+`"`) {
		t.Errorf("%s: body %s, want reason %q", what, body, reason)
	}
	if msg != "" && !strings.Contains(body, msg) {
		t.Errorf("%s: body %s, want it to say %q", what, body, msg)
	}
}

func (rig *oauthRig) accepted(t *testing.T, what, path, token string) {
	t.Helper()
	if code, chal, body := rig.mcp(t, path, token); code != http.StatusOK {
		t.Errorf("%s: %d %s %s, want 200", what, code, chal, body)
	}
}

// TestMCPAuthAttacks runs every access token attack against one server.
func TestMCPAuthAttacks(t *testing.T) {
	rig := startOAuthRig(t)
	base := rig.s.Base
	coder, reviewer := base+"/agents/coder/mcp", base+"/agents/reviewer/mcp"

	t.Run("discovery", func(t *testing.T) {
		code, chal, _ := rig.mcp(t, "/agents/coder/mcp", "")
		if code != 401 || chal != `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/agents/coder/mcp", scope="loadout", error_description="this MCP endpoint needs authorization: get an access token from the authorization server named in its protected resource metadata (`+base+`/.well-known/oauth-protected-resource/agents/coder/mcp), for resource `+coder+`, or send a loadout bearer token"` {
			t.Errorf("no token: %d %q", code, chal)
		}
		code, _, body := rig.s.Do(t, "GET", "/.well-known/oauth-protected-resource/agents/coder/mcp", "", "")
		var prm struct {
			Resource string   `json:"resource"`
			Servers  []string `json:"authorization_servers"`
			Scopes   []string `json:"scopes_supported"`
			Bearer   []string `json:"bearer_methods_supported"`
		}
		json.Unmarshal([]byte(body), &prm)
		if code != 200 || prm.Resource != coder || len(prm.Servers) != 3 || prm.Servers[0] != rig.p.Issuer || strings.Join(prm.Scopes, " ") != "loadout" || strings.Join(prm.Bearer, ",") != "header" {
			t.Errorf("metadata: %d %s", code, body)
		}
		for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/agents/nobody/mcp", "/.well-known/oauth-protected-resource/v1/skills"} {
			if code, _, body := rig.s.Do(t, "GET", p, "", ""); code != 404 || !strings.Contains(body, `"not_found"`) || !strings.Contains(body, "no protected resource here") {
				t.Errorf("%s: %d %s, want a JSON 404 naming the per-endpoint paths", p, code, body)
			}
		}
		// The authorization server's paths, and the suffix forms: a JSON 404
		// naming the issuers, not the "bearer tokens only" of a server
		// without OAuth.
		for _, p := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration/agents/coder/mcp", "/register", "/token", "/agents/coder/mcp/.well-known/oauth-protected-resource"} {
			if code, _, body := rig.s.Do(t, "GET", p, "", ""); code != 404 || !strings.Contains(body, "not an authorization server") || !strings.Contains(body, rig.p.Issuer) {
				t.Errorf("%s: %d %s, want a JSON 404 naming the issuer", p, code, body)
			}
		}
		if code, _, body := rig.s.Do(t, "GET", "/.well-known/oauth-protected-resource/mcp", "", ""); code != 200 || !strings.Contains(body, `"resource": "`+base+`/mcp"`) {
			t.Errorf("the global endpoint's metadata: %d %s", code, body)
		}
	})

	alice := rig.token(t, "alice", "pw-a", coder)
	t.Run("valid", func(t *testing.T) {
		rig.accepted(t, "alice's token for coder", "/agents/coder/mcp", alice)
		// The server's own tokens keep working beside OAuth.
		rig.accepted(t, "the admin's loadout token", "/agents/coder/mcp", rig.s.Admin)
		rig.refused(t, "an unknown loadout token", "/agents/coder/mcp", "lo_unknown", 401, "", "")
	})

	t.Run("another resource", func(t *testing.T) {
		// alice's token for reviewer's endpoint, at coder's; her coder token
		// at the global endpoint and at reviewer's.
		forReviewer := rig.token(t, "alice", "pw-a", reviewer)
		rig.refused(t, "a token for reviewer at coder", "/agents/coder/mcp", forReviewer, 401, "audience", "")
		rig.refused(t, "a token for coder at /mcp", "/mcp", alice, 401, "audience", "")
		rig.refused(t, "a token for coder at reviewer", "/agents/reviewer/mcp", alice, 401, "audience", "")
		rig.refused(t, "a token for the server's origin", "/agents/coder/mcp", rig.p.Sign(t, rig.claims(base, map[string]any{"aud": base})), 401, "audience", "")
		rig.refused(t, "a token for the client only", "/agents/coder/mcp", rig.p.Sign(t, rig.claims(coder, map[string]any{"aud": "mcp-host"})), 401, "audience", "")
		rig.accepted(t, "a signed token for coder (the control)", "/agents/coder/mcp", rig.p.Sign(t, rig.claims(coder, nil)))
	})

	t.Run("another agent", func(t *testing.T) {
		// bob is in ops, mapped to reviewer: his token for coder's
		// endpoint is valid, but grants nothing there.
		bob := rig.token(t, "bob", "pw-b", coder)
		rig.refused(t, "bob at coder", "/agents/coder/mcp", bob, 403, "insufficient_scope", "grants no access")
		rig.accepted(t, "bob at reviewer", "/agents/reviewer/mcp", rig.token(t, "bob", "pw-b", reviewer))
		// A user whose groups map to nothing.
		rig.refused(t, "no group", "/agents/coder/mcp", rig.p.Sign(t, rig.claims(coder, map[string]any{"groups": []string{"contractors"}})), 403, "insufficient_scope", "grants no access")
		// A scope the server does not map grants nothing either.
		rig.refused(t, "an unmapped scope", "/agents/coder/mcp", rig.p.Sign(t, rig.claims(coder, map[string]any{"groups": nil, "scope": "admin agent:coder"})), 403, "insufficient_scope", "grants no access")
	})

	t.Run("issuer", func(t *testing.T) {
		rig.refused(t, "another issuer", "/agents/coder/mcp", rig.p.Sign(t, rig.claims(coder, map[string]any{"iss": "http://127.0.0.1:9/other/"})), 401, "", "")
		// The configured issuer's name, another key: the signature fails.
		forged := signWith(t, newRSA(t), jose.RS256, kidOf(t, rig.p.Sign(t, rig.claims(coder, nil))), rig.claims(coder, nil))
		rig.refused(t, "the issuer's kid, another key", "/agents/coder/mcp", forged, 401, "signature", "")
		// Keys the token brings with it: an embedded jwk, and a jku naming
		// the attacker's JWKS. Neither is read.
		key := newRSA(t)
		var jkuHits atomic.Int64
		evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			jkuHits.Add(1)
			json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "evil", Algorithm: "RS256", Use: "sig"}}})
		}))
		defer evil.Close()
		s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{EmbedJWK: true}).WithType("JWT"))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(rig.claims(coder, nil))
		jws, _ := s.Sign(b)
		embedded, _ := jws.CompactSerialize()
		rig.refused(t, "an embedded jwk", "/agents/coder/mcp", embedded, 401, "signature", "")
		s, _ = jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "evil").WithHeader("jku", evil.URL))
		jws, _ = s.Sign(b)
		jku, _ := jws.CompactSerialize()
		rig.refused(t, "a jku to the attacker's keys", "/agents/coder/mcp", jku, 401, "unknown_key", "")
		if n := jkuHits.Load(); n != 0 {
			t.Errorf("the attacker's jku was fetched %d times", n)
		}
	})

	t.Run("times", func(t *testing.T) {
		now := time.Now().Unix()
		rig.refused(t, "expired an hour ago", "/agents/coder/mcp", rig.p.Sign(t, rig.claims(coder, map[string]any{"exp": now - 3600})), 401, "expired", "")
		rig.refused(t, "expired past the leeway", "/agents/coder/mcp", rig.p.Sign(t, rig.claims(coder, map[string]any{"exp": now - 90})), 401, "expired", "")
		rig.accepted(t, "expired within the leeway", "/agents/coder/mcp", rig.p.Sign(t, rig.claims(coder, map[string]any{"exp": now - 20})))
		rig.refused(t, "no exp", "/agents/coder/mcp", rig.p.Sign(t, rig.claims(coder, map[string]any{"exp": nil})), 401, "no_expiry", "")
		rig.refused(t, "nbf in the future", "/agents/coder/mcp", rig.p.Sign(t, rig.claims(coder, map[string]any{"nbf": now + 600})), 401, "not_yet_valid", "")
		rig.accepted(t, "nbf within the leeway", "/agents/coder/mcp", rig.p.Sign(t, rig.claims(coder, map[string]any{"nbf": now + 20})))
		rig.refused(t, "iat in the future", "/agents/coder/mcp", rig.p.Sign(t, rig.claims(coder, map[string]any{"iat": now + 600})), 401, "issued_in_future", "")
		rig.accepted(t, "iat within the leeway", "/agents/coder/mcp", rig.p.Sign(t, rig.claims(coder, map[string]any{"iat": now + 20})))
	})

	t.Run("algorithms", func(t *testing.T) {
		c := rig.claims(coder, nil)
		kid := kidOf(t, rig.p.Sign(t, c))
		rig.refused(t, "alg none", "/agents/coder/mcp", unsigned(t, kid, c), 401, "algorithm", "")
		// HMAC key confusion: HS256 keyed with the provider's public key,
		// which anyone can read from its JWKS.
		pub := jwksBytes(t, rig.p.URL("keys"))
		rig.refused(t, "HS256 with the public JWKS as its key", "/agents/coder/mcp", signWith(t, pub, jose.HS256, kid, c), 401, "algorithm", "")
		var set jose.JSONWebKeySet
		json.Unmarshal(pub, &set)
		if len(set.Keys) > 0 {
			if rk, ok := set.Keys[0].Key.(*rsa.PublicKey); ok {
				der := rk.N.Bytes()
				rig.refused(t, "HS256 with the public modulus as its key", "/agents/coder/mcp", signWith(t, der, jose.HS256, kid, c), 401, "algorithm", "")
			}
		}
	})

	t.Run("unknown kid flood", func(t *testing.T) {
		before := rig.jwksHits.Load()
		key := newRSA(t)
		for i := range 40 {
			tok := signWith(t, key, jose.RS256, fmt.Sprintf("attacker-%d", i), rig.claims(coder, nil))
			rig.refused(t, "an unknown kid", "/agents/coder/mcp", tok, 401, "unknown_key", "")
		}
		// The keys were fetched at start (or for the first token), and at
		// most once more for the first unknown kid; jwksRefresh is 10m.
		if n := rig.jwksHits.Load() - before; n > 1 {
			t.Errorf("40 unknown key ids made %d JWKS fetches, want at most 1", n)
		}
		if n := rig.jwksHits.Load(); n < 1 || n > 2 {
			t.Errorf("%d JWKS fetches in all, want 1 or 2", n)
		}
		rig.accepted(t, "a good token after the flood", "/agents/coder/mcp", rig.p.Sign(t, rig.claims(coder, nil)))
	})

	t.Run("JWKS hangs", func(t *testing.T) {
		start := time.Now()
		for range 5 {
			rig.refused(t, "a token whose keys hang", "/agents/coder/mcp", rig.p.Sign(t, rig.claims(coder, map[string]any{"iss": hangIssuer})), 401, "keys_unavailable", "could not be fetched")
		}
		// The fetch is bounded by mcpAuth.timeout (1s), and not tried
		// again within 10 s: five requests, one wait.
		if d := time.Since(start); d > 8*time.Second {
			t.Errorf("five requests took %v with a hanging JWKS, want them bounded by the 1 s timeout", d)
		}
		if n := rig.hangHits.Load(); n < 1 || n > 2 {
			t.Errorf("the hanging JWKS was asked %d times, want 1 or 2 (the start's fetch, one retry)", n)
		}
		rig.s.Healthy(t)
	})

	t.Run("JWKS of 100 MB", func(t *testing.T) {
		before := rig.s.PeakRSSMB(t)
		for range 3 {
			rig.refused(t, "a token whose JWKS is 100 MB", "/agents/coder/mcp", rig.p.Sign(t, rig.claims(coder, map[string]any{"iss": hugeIssuer})), 401, "keys_unavailable", "too large")
		}
		if grew := rig.s.PeakRSSMB(t) - before; grew > 40 {
			t.Errorf("peak RSS grew %.0f MB over a 100 MB JWKS; the body cap is 1 MiB", grew)
		}
		rig.s.Healthy(t)
	})

	t.Run("token size", func(t *testing.T) {
		// At the bound (8192 bytes) and past it.
		at, over := sizedTokens(t, rig, coder, 8192)
		rig.accepted(t, fmt.Sprintf("a token of %d bytes", len(at)), "/agents/coder/mcp", at)
		rig.refused(t, fmt.Sprintf("a token of %d bytes", len(over)), "/agents/coder/mcp", over, 401, "too_large", "over the 8192")
		// 1 MB: the request's header bound refuses it before any check.
		big := "eyJhbGciOiJSUzI1NiJ9." + strings.Repeat("A", 1<<20) + ".sig"
		req, _ := http.NewRequest("POST", base+"/agents/coder/mcp", strings.NewReader(initBody))
		req.Header.Set("Authorization", "Bearer "+big)
		resp, err := (&http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err != nil {
			// The server may close before the client has sent it all.
			t.Logf("a token of 1 MB: %v", err)
		} else {
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
				t.Errorf("a token of 1 MB: %d, want 431", resp.StatusCode)
			}
		}
		rig.s.Healthy(t)
	})

	t.Run("session binding", func(t *testing.T) {
		// A session alice opened is hers: carol, also mapped to coder,
		// cannot use it with her own valid token.
		code, h, body := rig.s.Do(t, "POST", "/agents/coder/mcp", alice, initBody, "Accept", "application/json, text/event-stream")
		sid := h.Get("Mcp-Session-Id")
		if code != 200 || sid == "" {
			t.Fatalf("initialize: %d %s", code, body)
		}
		carol := rig.token(t, "carol", "pw-c", coder)
		list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
		if code, _, body := rig.s.Do(t, "POST", "/agents/coder/mcp", carol, list, "Accept", "application/json, text/event-stream", "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18"); code != http.StatusForbidden || !strings.Contains(body, "session user mismatch") {
			t.Errorf("carol's token on alice's session: %d %s, want 403 session user mismatch", code, body)
		}
		if code, _, body := rig.s.Do(t, "POST", "/agents/coder/mcp", alice, list, "Accept", "application/json, text/event-stream", "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18"); code != 200 || !strings.Contains(body, "load_skill") {
			t.Errorf("alice's token on her session: %d %s", code, body)
		}
	})

	t.Run("cache flood", func(t *testing.T) {
		// 120 distinct valid tokens through a cache of 50: it stays at
		// 50, and says so in the log.
		for i := range 120 {
			tok := rig.p.Sign(t, rig.claims(coder, map[string]any{"jti": fmt.Sprintf("flood-%d", i)}))
			if code, _, body := rig.s.Do(t, "DELETE", "/agents/coder/mcp", tok, "", "Mcp-Session-Id", "none"); code == 401 || code == 403 {
				t.Fatalf("flood token %d: %d %s", i, code, body)
			}
		}
		if !regexp.MustCompile(`cache of validated access tokens is full.*cache_size=50 cached=50 evicted=\d+`).MatchString(rig.s.Log()) {
			t.Errorf("no log of a full cache of 50:\n%s", tail(rig.s.Log(), 2000))
		}
		rig.s.Healthy(t)
	})

	t.Run("receipts name the subject", func(t *testing.T) {
		call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"load_skill","arguments":{"name":"deploy"}}}`
		code, h, _ := rig.s.Do(t, "POST", "/agents/coder/mcp", alice, initBody, "Accept", "application/json, text/event-stream")
		sid := h.Get("Mcp-Session-Id")
		if code != 200 {
			t.Fatalf("initialize: %d", code)
		}
		hdr := []string{"Accept", "application/json, text/event-stream", "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18"}
		rig.s.Do(t, "POST", "/agents/coder/mcp", alice, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr...)
		if code, _, body := rig.s.Do(t, "POST", "/agents/coder/mcp", alice, call, hdr...); code != 200 || !strings.Contains(body, "Body of deploy") {
			t.Fatalf("load_skill deploy: %d %s", code, body)
		}
		// bob, at reviewer's endpoint, cannot read coder's skill.
		bob := rig.token(t, "bob", "pw-b", reviewer)
		code, h, _ = rig.s.Do(t, "POST", "/agents/reviewer/mcp", bob, initBody, "Accept", "application/json, text/event-stream")
		bsid := h.Get("Mcp-Session-Id")
		bhdr := []string{"Accept", "application/json, text/event-stream", "Mcp-Session-Id", bsid, "Mcp-Protocol-Version", "2025-06-18"}
		rig.s.Do(t, "POST", "/agents/reviewer/mcp", bob, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, bhdr...)
		if code, _, body := rig.s.Do(t, "POST", "/agents/reviewer/mcp", bob, call, bhdr...); code != 200 || strings.Contains(body, "Body of deploy") {
			t.Errorf("bob's load_skill deploy at reviewer: %d %s, want no body of deploy", code, body)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, _, body := rig.s.Do(t, "GET", "/v1/receipts?agent=coder&skill=deploy", rig.s.Admin, "")
			if strings.Contains(body, `"corp:alice-id"`) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no receipt naming corp:alice-id: %s", body)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
}

func newRSA(t *testing.T) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func signWith(t *testing.T, key any, alg jose.SignatureAlgorithm, kid string, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(claims)
	jws, err := s.Sign(b)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := jws.CompactSerialize()
	return out
}

func unsigned(t *testing.T, kid string, claims map[string]any) string {
	h, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT", "kid": kid})
	b, _ := json.Marshal(claims)
	return base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(b) + "."
}

func kidOf(t *testing.T, jwt string) string {
	t.Helper()
	h, err := base64.RawURLEncoding.DecodeString(strings.Split(jwt, ".")[0])
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Kid string }
	json.Unmarshal(h, &v)
	return v.Kid
}

func jwksBytes(t *testing.T, u string) []byte {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return b
}

// sizedTokens returns two valid tokens for resource signed by the
// provider: one of at most max bytes and at least max-3, one of more than
// max bytes and at most max+4 (a base64 length moves by 4).
func sizedTokens(t *testing.T, rig *oauthRig, resource string, max int) (at, over string) {
	t.Helper()
	pad := max / 2
	for range 20 {
		tok := rig.p.Sign(t, rig.claims(resource, map[string]any{"pad": strings.Repeat("p", pad)}))
		switch n := len(tok); {
		case n <= max && n > max-4:
			at = tok
			pad++
		case n > max && n <= max+4:
			over = tok
			pad--
		default:
			pad += (max - n) * 3 / 4
		}
		if at != "" && over != "" {
			return at, over
		}
	}
	t.Fatalf("no tokens of about %d bytes", max)
	return "", ""
}
