package identity

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/loadout/loadout/internal/oidctest"
)

const res = "https://skills.example.com/agents/coder/mcp"

func claimsFor(iss string, change map[string]any) map[string]any {
	now := time.Now().Unix()
	c := map[string]any{"iss": iss, "sub": "u1", "aud": []string{res, "app"}, "iat": now, "nbf": now, "exp": now + 300,
		"scope": "openid loadout skills:coder", "groups": []string{"dev", "ops"}, "client_id": "app"}
	for k, v := range change {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func reason(err error) string {
	r, _ := IsAccessError(err)
	return r
}

// TestVerifyClaims checks what Verify reads of a token the real provider
// signed, and each refusal's reason.
func TestVerifyClaims(t *testing.T) {
	p := oidctest.Start(t, oidctest.Config{})
	v, err := NewAccessVerifier(AccessOptions{Issuers: []AccessIssuer{{Issuer: p.Issuer, Name: "corp"}}, Leeway: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tok, err := v.Verify(ctx, p.Sign(t, claimsFor(p.Issuer, nil)), []string{res})
	if err != nil {
		t.Fatal(err)
	}
	if tok.IssuerName != "corp" || tok.Subject != "u1" || strings.Join(tok.Scopes, " ") != "openid loadout skills:coder" || strings.Join(tok.Groups, ",") != "dev,ops" || tok.ClientID != "app" {
		t.Errorf("token = %+v", tok)
	}
	// scp as an array, groups as one string.
	tok, err = v.Verify(ctx, p.Sign(t, claimsFor(p.Issuer, map[string]any{"scope": nil, "scp": []string{"a", "b"}, "groups": "x y"})), []string{res})
	if err != nil || strings.Join(tok.Scopes, ",") != "a,b" || strings.Join(tok.Groups, ",") != "x,y" {
		t.Errorf("scp and a groups string: %+v, %v", tok, err)
	}
	now := time.Now().Unix()
	for _, c := range []struct {
		name   string
		change map[string]any
		want   string
	}{
		{"other audience", map[string]any{"aud": "https://skills.example.com/mcp"}, "audience"},
		{"no audience", map[string]any{"aud": nil}, "audience"},
		{"expired past leeway", map[string]any{"exp": now - 40}, "expired"},
		{"no exp", map[string]any{"exp": nil}, "no_expiry"},
		{"nbf past leeway", map[string]any{"nbf": now + 40}, "not_yet_valid"},
		{"iat past leeway", map[string]any{"iat": now + 40}, "issued_in_future"},
		{"no sub", map[string]any{"sub": nil}, "no_subject"},
	} {
		if _, err := v.Verify(ctx, p.Sign(t, claimsFor(p.Issuer, c.change)), []string{res}); reason(err) != c.want {
			t.Errorf("%s: %v, want reason %s", c.name, err, c.want)
		}
	}
	for _, c := range []struct {
		name   string
		change map[string]any
	}{
		{"expired within leeway", map[string]any{"exp": now - 20}},
		{"nbf within leeway", map[string]any{"nbf": now + 20}},
		{"iat within leeway", map[string]any{"iat": now + 20}},
		{"an extra audience", map[string]any{"aud": "api://loadout"}},
	} {
		if _, err := v.Verify(ctx, p.Sign(t, claimsFor(p.Issuer, c.change)), []string{res, "api://loadout"}); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// Not ours: another issuer, not a JWT.
	for _, raw := range []string{p.Sign(t, claimsFor("https://other.example.com/", nil)), "lo_abc", "a.b.c", ""} {
		if _, err := v.Verify(ctx, raw, []string{res}); !errors.Is(err, ErrNotAccessToken) {
			t.Errorf("Verify(%.30q) = %v, want ErrNotAccessToken", raw, err)
		}
	}
	if _, err := NewAccessVerifier(AccessOptions{Issuers: []AccessIssuer{{Issuer: p.Issuer}}, Algorithms: []string{"HS256"}}); err == nil {
		t.Error("HS256 was accepted as an algorithm")
	}
	if _, err := NewAccessVerifier(AccessOptions{Issuers: []AccessIssuer{{Issuer: p.Issuer}}, Algorithms: []string{"none"}}); err == nil {
		t.Error("none was accepted as an algorithm")
	}
}

// TestTokenCacheBound: distinct valid tokens past the cache's size evict
// the oldest; it never holds more than its size.
func TestTokenCacheBound(t *testing.T) {
	c := newTokenCache(3)
	now := time.Now()
	keys := make([][32]byte, 5)
	for i := range keys {
		keys[i][0] = byte(i + 1)
		c.put(keys[i], &AccessToken{Subject: fmt.Sprint(i)}, now.Add(time.Minute))
		if n := c.len(); n > 3 {
			t.Fatalf("after %d puts the cache holds %d, over its 3", i+1, n)
		}
	}
	if c.len() != 3 || c.evicted.Load() != 2 {
		t.Errorf("len %d, evicted %d; want 3 and 2", c.len(), c.evicted.Load())
	}
	for i, k := range keys {
		_, ok := c.get(k, now)
		if ok != (i >= 2) {
			t.Errorf("key %d cached = %v", i, ok)
		}
	}
	// An expired entry is dropped when looked up.
	if _, ok := c.get(keys[4], now.Add(2*time.Minute)); ok || c.len() != 2 {
		t.Errorf("an expired entry: found %v, len %d", ok, c.len())
	}
	// A token put again is not held twice.
	c.put(keys[3], &AccessToken{}, now.Add(time.Minute))
	if c.len() != 2 {
		t.Errorf("a token put again: len %d, want 2", c.len())
	}
}

// TestKeySetRate: a flood of unknown key ids fetches the JWKS once per
// refresh interval, a failed fetch is tried again after JWKSRetry, and
// keys older than JWKSMaxAge are fetched again.
func TestKeySetRate(t *testing.T) {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	var fetches atomic.Int64
	var fail atomic.Bool
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		if fail.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	}))
	defer jwks.Close()
	var mu sync.Mutex
	clock := time.Now()
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	const iss = "https://idp.example.com/"
	v, err := NewAccessVerifier(AccessOptions{Issuers: []AccessIssuer{{Issuer: iss, JWKSURI: jwks.URL}}, JWKSRefresh: time.Minute, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	sign := func(kid string) string {
		s, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", kid))
		c := claimsFor(iss, map[string]any{"iat": now().Unix(), "nbf": now().Unix(), "exp": now().Unix() + 3*3600, "jti": fmt.Sprint(time.Now().UnixNano())})
		b, _ := json.Marshal(c)
		jws, _ := s.Sign(b)
		out, _ := jws.CompactSerialize()
		return out
	}
	ctx := context.Background()
	if _, err := v.Verify(ctx, sign("k1"), []string{res}); err != nil {
		t.Fatal(err)
	}
	if n := fetches.Load(); n != 1 {
		t.Fatalf("first token: %d fetches, want 1", n)
	}
	for i := range 50 {
		if _, err := v.Verify(ctx, sign(fmt.Sprintf("unknown-%d", i)), []string{res}); reason(err) != "unknown_key" {
			t.Fatalf("unknown kid: %v", err)
		}
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("50 unknown kids within the refresh interval: %d fetches, want 1", n)
	}
	advance(time.Minute + time.Second)
	v.Verify(ctx, sign("unknown-x"), []string{res})
	v.Verify(ctx, sign("unknown-y"), []string{res})
	if n := fetches.Load(); n != 2 {
		t.Errorf("unknown kids past the interval: %d fetches, want 2", n)
	}
	// A failed fetch: tried again after JWKSRetry (10 s), not before.
	fail.Store(true)
	advance(time.Minute + time.Second)
	if _, err := v.Verify(ctx, sign("unknown-z"), []string{res}); reason(err) != "keys_unavailable" {
		t.Errorf("a failed fetch: %v", err)
	}
	v.Verify(ctx, sign("unknown-z2"), []string{res})
	if n := fetches.Load(); n != 3 {
		t.Errorf("after a failure, within JWKSRetry: %d fetches, want 3", n)
	}
	advance(JWKSRetry + time.Second)
	fail.Store(false)
	v.Verify(ctx, sign("unknown-w"), []string{res})
	if n := fetches.Load(); n != 4 {
		t.Errorf("past JWKSRetry: %d fetches, want 4", n)
	}
	// Many at once past the interval: one fetch, which they share.
	advance(time.Minute + time.Second)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v.Verify(ctx, sign(fmt.Sprintf("concurrent-%d", i)), []string{res})
		}()
	}
	wg.Wait()
	if n := fetches.Load(); n != 5 {
		t.Errorf("20 concurrent unknown kids: %d fetches, want 5", n)
	}
	// Keys older than JWKSMaxAge are fetched again in the background.
	advance(JWKSMaxAge + time.Second)
	if _, err := v.Verify(ctx, sign("k1"), []string{res}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for fetches.Load() != 6 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := fetches.Load(); n != 6 {
		t.Errorf("keys past their max age: %d fetches, want 6", n)
	}
	if v.JWKSFetches() != 6 {
		t.Errorf("JWKSFetches = %d", v.JWKSFetches())
	}
}

// TestResourceServer checks the metadata, the challenges and the grants.
func TestResourceServer(t *testing.T) {
	p := oidctest.Start(t, oidctest.Config{})
	rs, err := NewResourceServer(ResourceOptions{
		AccessOptions: AccessOptions{Issuers: []AccessIssuer{{Issuer: p.Issuer}}},
		PublicURL:     "https://skills.example.com/",
		Scopes:        []string{"loadout"},
		Grants: []Grant{{Scope: "skills:coder", Grant: "agent:coder"}, {Group: "ops", Grant: "agent:reviewer"},
			{Group: "dev", Grant: "agent:coder"}, {Scope: "skills:admin", Grant: "admin"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "http://internal:7777/agents/coder/mcp", nil)
	var m struct {
		Resource string   `json:"resource"`
		Servers  []string `json:"authorization_servers"`
		Scopes   []string `json:"scopes_supported"`
	}
	json.Unmarshal(rs.Metadata(r, "/agents/coder/mcp", "agent:coder", "admin"), &m)
	if m.Resource != res || len(m.Servers) != 1 || m.Servers[0] != p.Issuer || strings.Join(m.Scopes, " ") != "loadout skills:coder skills:admin" {
		t.Errorf("metadata = %+v", m)
	}
	if c := rs.Challenge(r, "/agents/coder/mcp", "insufficient_scope", `say "no"\`, "agent:coder"); c != `Bearer resource_metadata="https://skills.example.com/.well-known/oauth-protected-resource/agents/coder/mcp", scope="loadout skills:coder", error="insufficient_scope", error_description="say 'no''"` {
		t.Errorf("challenge = %s", c)
	}
	a, err := rs.Authorize(context.Background(), r, p.Sign(t, claimsFor(p.Issuer, nil)), "/agents/coder/mcp")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(a.Grants, ",") != "agent:coder,agent:reviewer" || a.ID() != "oauth:u1" {
		t.Errorf("grants %v, id %s", a.Grants, a.ID())
	}
	// Without PublicURL the request's own host is the base.
	rs2, _ := NewResourceServer(ResourceOptions{AccessOptions: AccessOptions{Issuers: []AccessIssuer{{Issuer: p.Issuer}}}})
	if got := rs2.Resource(r, "/mcp"); got != "http://internal:7777/mcp" {
		t.Errorf("resource without a public URL = %s", got)
	}
	if _, err := NewResourceServer(ResourceOptions{AccessOptions: AccessOptions{Issuers: []AccessIssuer{{Issuer: p.Issuer}}}, Grants: []Grant{{Scope: "a", Group: "b", Grant: "admin"}}}); err == nil {
		t.Error("a grant with a scope and a group was accepted")
	}
}
