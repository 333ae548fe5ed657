package oidctest_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/loadout/loadout/internal/oidctest"
	"github.com/loadout/loadout/internal/testutil"
)

func claims(t *testing.T, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", jwt)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func audience(m map[string]any) []string {
	switch a := m["aud"].(type) {
	case string:
		return []string{a}
	case []any:
		var out []string
		for _, x := range a {
			s, _ := x.(string)
			out = append(out, s)
		}
		return out
	}
	return nil
}

// TestCodeFlowWithResource runs the authorization code flow with PKCE and
// a resource indicator against the provider, signs in on its login page,
// and checks the tokens: the access token is a JWT for the resource and
// the client, with the user's groups (changed while it runs) and the
// scope; a wrong password is refused.
func TestCodeFlowWithResource(t *testing.T) {
	const redirect = "http://127.0.0.1:1/callback"
	p := oidctest.Start(t, oidctest.Config{
		Clients: []oidctest.Client{{ID: "app", RedirectURIs: []string{redirect}, Scopes: []string{"loadout"}}},
		Users:   []oidctest.User{{ID: "u1", Username: "alice", Password: "pw", Email: "alice@example.com", Groups: []string{"g1"}}},
	})
	conf := &oauth2.Config{ClientID: "app", RedirectURL: redirect, Scopes: []string{"openid", "email", "loadout"},
		Endpoint: oauth2.Endpoint{AuthURL: p.URL("auth"), TokenURL: p.URL("oauth/token"), AuthStyle: oauth2.AuthStyleInParams}}
	ctx := testutil.Context(t)
	const resource = "http://127.0.0.1:7777/mcp"

	if _, err := p.Login(ctx, conf.AuthCodeURL("st", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), "alice", "wrong"); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("a wrong password: %v, want a refusal", err)
	}

	p.SetGroups(t, "u1", []string{"g2", "g3"})
	verifier := oauth2.GenerateVerifier()
	back, err := p.Login(ctx, conf.AuthCodeURL("st-1", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resource)), "alice", "pw")
	if err != nil {
		t.Fatal(err)
	}
	if back.Query().Get("state") != "st-1" || back.Query().Get("code") == "" {
		t.Fatalf("redirect back = %s, want a code and state st-1", back)
	}
	tok, err := conf.Exchange(ctx, back.Query().Get("code"), oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	if err != nil {
		t.Fatal(err)
	}
	at := claims(t, tok.AccessToken)
	if aud := audience(at); !slices.Contains(aud, resource) || !slices.Contains(aud, "app") {
		t.Errorf("access token audience = %v, want %s and app", aud, resource)
	}
	if at["iss"] != p.Issuer {
		t.Errorf("iss = %v, want %s", at["iss"], p.Issuer)
	}
	if g, _ := json.Marshal(at["groups"]); string(g) != `["g2","g3"]` {
		t.Errorf("groups = %s, want the changed groups", g)
	}
	if sc, _ := at["scope"].(string); !strings.Contains(sc, "loadout") {
		t.Errorf("scope = %v, want loadout in it", at["scope"])
	}
	idt, _ := tok.Extra("id_token").(string)
	if id := claims(t, idt); !slices.Contains(audience(id), "app") || id["email"] != "alice@example.com" {
		t.Errorf("ID token claims = %v, want audience app and the email", id)
	}

	// The code is single-use.
	if _, err := conf.Exchange(ctx, back.Query().Get("code"), oauth2.VerifierOption(verifier)); err == nil {
		t.Error("a replayed code was exchanged again")
	}

	// The test signer signs what it is given with the key the JWKS lists.
	signed := p.Sign(t, map[string]any{"iss": "http://elsewhere/", "sub": "x"})
	if c := claims(t, signed); c["iss"] != "http://elsewhere/" {
		t.Errorf("signed claims = %v", c)
	}
	resp, err := http.Get(p.URL("keys"))
	if err != nil {
		t.Fatal(err)
	}
	var jwks struct{ Keys []struct{ Kid string } }
	json.NewDecoder(resp.Body).Decode(&jwks)
	resp.Body.Close()
	hdr, _ := base64.RawURLEncoding.DecodeString(strings.Split(signed, ".")[0])
	var h struct{ Kid string }
	json.Unmarshal(hdr, &h)
	if len(jwks.Keys) == 0 || jwks.Keys[0].Kid != h.Kid {
		t.Errorf("signed kid %q, JWKS %v", h.Kid, jwks.Keys)
	}
}
