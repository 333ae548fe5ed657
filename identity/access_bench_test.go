package identity

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// benchVerifier is a verifier over a local RS256 key, and a signer.
func benchVerifier(b *testing.B) (*AccessVerifier, func(i int) string) {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	}))
	b.Cleanup(jwks.Close)
	const iss = "https://idp.example.com/"
	v, err := NewAccessVerifier(AccessOptions{Issuers: []AccessIssuer{{Issuer: iss, JWKSURI: jwks.URL}}, CacheSize: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", "k1"))
	sign := func(i int) string {
		c, _ := json.Marshal(claimsFor(iss, map[string]any{"jti": fmt.Sprint(i), "exp": time.Now().Unix() + 3600}))
		jws, _ := signer.Sign(c)
		out, _ := jws.CompactSerialize()
		return out
	}
	return v, sign
}

// BenchmarkVerifyCached: a token seen before (the common case: a host
// sends one token for many requests).
func BenchmarkVerifyCached(b *testing.B) {
	v, sign := benchVerifier(b)
	tok := sign(0)
	ctx := context.Background()
	if _, err := v.Verify(ctx, tok, []string{res}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(ctx, tok, []string{res}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyNew: a token never seen (the signature checked, RS256
// 2048-bit).
func BenchmarkVerifyNew(b *testing.B) {
	v, sign := benchVerifier(b)
	toks := make([]string, 2000)
	for i := range toks {
		toks[i] = sign(i)
	}
	ctx := context.Background()
	v.Verify(ctx, toks[0], []string{res})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		v.cache = newTokenCache(1)
		if _, err := v.Verify(ctx, toks[i%len(toks)], []string{res}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkVerifyLoadoutToken: what the check costs a loadout token on an
// MCP endpoint with mcpAuth set (it is not a JWT).
func BenchmarkVerifyLoadoutToken(b *testing.B) {
	v, _ := benchVerifier(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(ctx, "lo_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG", []string{res}); err != ErrNotAccessToken {
			b.Fatal(err)
		}
	}
}
