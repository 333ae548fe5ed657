package identity

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
)

// The defaults and bounds of access token validation (AccessOptions).
const (
	// DefaultLeeway is the clock skew allowed on exp, nbf and iat.
	DefaultLeeway = 60 * time.Second
	// MaxLeeway bounds the configured leeway.
	MaxLeeway = 5 * time.Minute
	// DefaultMaxTokenBytes bounds an access token: a JWT from a company's
	// provider is one or two kilobytes; a longer one is refused unread.
	DefaultMaxTokenBytes = 16 << 10
	// DefaultCacheSize bounds the validated tokens kept (each at most
	// MaxTokenBytes of claims, so 16 MiB at worst by default).
	DefaultCacheSize = 1024
	// DefaultCacheTTL is how long a validated token is kept before its
	// signature is checked again (never past its exp).
	DefaultCacheTTL = 5 * time.Minute
	// DefaultJWKSRefresh is the least time between two fetches of a
	// provider's JWKS for tokens whose key id it does not list: a flood of
	// unknown key ids makes one request to the provider per interval.
	DefaultJWKSRefresh = time.Minute
	// JWKSRetry is the least time between two fetches after a failed one
	// (when shorter than the refresh interval).
	JWKSRetry = 10 * time.Second
	// JWKSMaxAge is how long fetched keys are used before they are fetched
	// again on the next token, so a key the provider withdrew stops being
	// trusted within it.
	JWKSMaxAge = time.Hour
	// DefaultAccessTimeout bounds one request to the provider (discovery,
	// JWKS) made while checking a token.
	DefaultAccessTimeout = 5 * time.Second
)

// DefaultAlgorithms are the signature algorithms accepted by default:
// asymmetric only. "none" and the HMAC algorithms (HS256…) are never
// accepted, whatever the configuration says: a resource server holds no
// shared secret with the provider, and accepting HMAC would let anyone who
// has the provider's public key sign tokens (key confusion).
var DefaultAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// AccessIssuer is an authorization server whose access tokens are accepted.
type AccessIssuer struct {
	// Issuer is its issuer identifier, exactly as its tokens' iss claim
	// and its metadata's issuer say it.
	Issuer string
	// JWKSURI is where its keys are; empty: read from its OpenID
	// Connect discovery document (ISSUER/.well-known/openid-configuration).
	JWKSURI string
	// Name prefixes its subjects in loadout (receipts, sessions, audit):
	// NAME:SUB. Default "oauth".
	Name string
}

// AccessOptions configure an AccessVerifier; zero values are the defaults.
type AccessOptions struct {
	Issuers       []AccessIssuer
	Algorithms    []string      // default DefaultAlgorithms; none and HS* refused
	Leeway        time.Duration // default DefaultLeeway
	MaxTokenBytes int           // default DefaultMaxTokenBytes
	CacheSize     int           // default DefaultCacheSize
	CacheTTL      time.Duration // default DefaultCacheTTL
	JWKSRefresh   time.Duration // default DefaultJWKSRefresh
	Timeout       time.Duration // default DefaultAccessTimeout
	MaxBody       int64         // default DefaultMaxBody
	// GroupsClaim is the claim holding the user's groups (default
	// "groups"); its values are kept in AccessToken.Groups.
	GroupsClaim string
	// Client makes the requests to the providers; default
	// Client(Timeout, MaxBody).
	Client *http.Client
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// AccessToken is a validated access token: what loadout reads of it.
type AccessToken struct {
	// IssuerName is the Name of the issuer that signed it.
	IssuerName string
	Issuer     string
	Subject    string
	Audience   []string
	// Scopes are the scope claim's space-separated values (or the scp
	// array some providers use).
	Scopes []string
	// Groups are the values of the groups claim (AccessOptions.GroupsClaim).
	Groups   []string
	ClientID string
	Expiry   time.Time
}

// AccessError is why an access token was refused. Reason is a stable
// word: too_large, malformed, algorithm, signature, unknown_key,
// keys_unavailable, issuer, expired, not_yet_valid, issued_in_future,
// no_expiry, no_subject, audience.
type AccessError struct {
	Reason string
	Msg    string
}

func (e *AccessError) Error() string { return e.Msg }

func accessErr(reason, format string, args ...any) *AccessError {
	return &AccessError{Reason: reason, Msg: fmt.Sprintf(format, args...)}
}

// ErrNotAccessToken is Verify's error for a bearer that is not a JWT of a
// configured issuer: the caller checks it some other way (loadout's own
// tokens).
var ErrNotAccessToken = errors.New("not an access token of a configured issuer")

// AccessVerifier validates JWT access tokens (RFC 9068) of configured
// authorization servers: the signature by the issuer's JWKS (fetched
// through the bounded Client, refetched for an unknown key id at most once
// per JWKSRefresh), the algorithm (asymmetric only), the issuer, exp, nbf
// and iat within a small leeway, and the audience. Validated tokens are
// kept in a cache of at most CacheSize entries, keyed by the token's
// SHA-256, each until its exp or CacheTTL, whichever comes first.
type AccessVerifier struct {
	opt     AccessOptions
	algs    []jose.SignatureAlgorithm
	issuers map[string]*issuerState
	cache   *tokenCache
}

type issuerState struct {
	conf     AccessIssuer
	keys     *keySet
	verifier *oidc.IDTokenVerifier
}

// NewAccessVerifier checks opt and returns a verifier. No request is made
// until a token arrives (or Prefetch).
func NewAccessVerifier(opt AccessOptions) (*AccessVerifier, error) {
	if len(opt.Issuers) == 0 {
		return nil, errors.New("no issuer: name at least one authorization server")
	}
	if opt.Leeway == 0 {
		opt.Leeway = DefaultLeeway
	}
	if opt.Leeway < 0 || opt.Leeway > MaxLeeway {
		return nil, fmt.Errorf("leeway %s: give at most %s", opt.Leeway, MaxLeeway)
	}
	if opt.MaxTokenBytes <= 0 {
		opt.MaxTokenBytes = DefaultMaxTokenBytes
	}
	if opt.CacheSize <= 0 {
		opt.CacheSize = DefaultCacheSize
	}
	if opt.CacheTTL <= 0 {
		opt.CacheTTL = DefaultCacheTTL
	}
	if opt.JWKSRefresh <= 0 {
		opt.JWKSRefresh = DefaultJWKSRefresh
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultAccessTimeout
	}
	if opt.GroupsClaim == "" {
		opt.GroupsClaim = "groups"
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Client == nil {
		opt.Client = Client(opt.Timeout, opt.MaxBody)
	}
	if len(opt.Algorithms) == 0 {
		opt.Algorithms = DefaultAlgorithms
	}
	v := &AccessVerifier{opt: opt, issuers: map[string]*issuerState{}, cache: newTokenCache(opt.CacheSize)}
	for _, a := range opt.Algorithms {
		if !slices.Contains(DefaultAlgorithms, a) {
			return nil, fmt.Errorf("algorithm %q: accepted are %s (never none or HMAC)", a, strings.Join(DefaultAlgorithms, ", "))
		}
		v.algs = append(v.algs, jose.SignatureAlgorithm(a))
	}
	for _, is := range opt.Issuers {
		if is.Issuer == "" {
			return nil, errors.New("an issuer with no issuer URL")
		}
		if is.Name == "" {
			is.Name = "oauth"
		}
		if _, dup := v.issuers[is.Issuer]; dup {
			return nil, fmt.Errorf("issuer %q is named twice", is.Issuer)
		}
		ks := &keySet{issuer: is.Issuer, jwksURI: is.JWKSURI, client: opt.Client, algs: v.algs,
			refresh: opt.JWKSRefresh, timeout: opt.Timeout, now: opt.Now}
		v.issuers[is.Issuer] = &issuerState{conf: is, keys: ks, verifier: oidc.NewVerifier(is.Issuer, ks, &oidc.Config{
			SkipClientIDCheck:    true, // the audience is checked against the resource, below
			SkipExpiryCheck:      true, // exp, nbf and iat are checked below, with the configured leeway
			SupportedSigningAlgs: opt.Algorithms,
		})}
	}
	return v, nil
}

// Prefetch fetches every issuer's keys now, in the background, so that the
// first token does not wait for them.
func (v *AccessVerifier) Prefetch(ctx context.Context) {
	for _, is := range v.issuers {
		go is.keys.refreshNow(ctx)
	}
}

// JWKSFetches is the number of JWKS fetches (and discoveries) started so
// far, over every issuer: what a flood of unknown key ids costs the
// provider.
func (v *AccessVerifier) JWKSFetches() int64 {
	var n int64
	for _, is := range v.issuers {
		n += is.keys.fetches.Load()
	}
	return n
}

// CacheLen is the number of validated tokens held.
func (v *AccessVerifier) CacheLen() int { return v.cache.len() }

// CacheSize is the most validated tokens held.
func (v *AccessVerifier) CacheSize() int { return v.opt.CacheSize }

// CacheEvictions is the number of tokens evicted to make room so far.
func (v *AccessVerifier) CacheEvictions() int64 { return v.cache.evicted.Load() }

// Peek reports whether raw is (by its unverified iss claim) a JWT of a
// configured issuer, and so one for Verify rather than for loadout's own
// token check. It costs a base64 decode and a small JSON read.
func (v *AccessVerifier) Peek(raw string) bool {
	_, ok := v.peekIssuer(raw)
	return ok
}

func (v *AccessVerifier) peekIssuer(raw string) (*issuerState, bool) {
	if strings.Count(raw, ".") != 2 {
		return nil, false
	}
	payload := raw[strings.IndexByte(raw, '.')+1 : strings.LastIndexByte(raw, '.')]
	if len(payload) > base64.RawURLEncoding.EncodedLen(v.opt.MaxTokenBytes) {
		// Too large to read: it names no issuer we know of, so it is
		// refused by whichever check comes next (Verify's size bound when
		// it is called).
		return nil, false
	}
	b, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return nil, false
	}
	var c struct {
		Iss string `json:"iss"`
	}
	if json.Unmarshal(b, &c) != nil {
		return nil, false
	}
	is, ok := v.issuers[c.Iss]
	return is, ok
}

// Verify validates raw and checks that its audience holds one of
// audiences (the resource's canonical URI, and any extra audience the
// operator accepts). It returns ErrNotAccessToken when raw is not a JWT of
// a configured issuer, and an *AccessError when it is one but is not valid.
func (v *AccessVerifier) Verify(ctx context.Context, raw string, audiences []string) (*AccessToken, error) {
	if strings.Count(raw, ".") != 2 {
		return nil, ErrNotAccessToken // not a JWT (a loadout token): at once
	}
	if len(raw) > v.opt.MaxTokenBytes {
		return nil, accessErr("too_large", "the access token is %d bytes, over the %d this server reads (mcpAuth.maxTokenBytes)", len(raw), v.opt.MaxTokenBytes)
	}
	key := sha256.Sum256([]byte(raw))
	now := v.opt.Now()
	tok, hit := v.cache.get(key, now)
	if !hit {
		is, ok := v.peekIssuer(raw)
		if !ok {
			return nil, ErrNotAccessToken
		}
		var err error
		if tok, err = v.verify(ctx, is, raw, now); err != nil {
			return nil, err
		}
		until := now.Add(v.opt.CacheTTL)
		if tok.Expiry.Before(until) {
			until = tok.Expiry
		}
		v.cache.put(key, tok, until)
	}
	// exp, for a cached token as for a new one (nbf and iat were checked
	// when it was new: time only moves past them).
	if now.After(tok.Expiry.Add(v.opt.Leeway)) {
		return nil, accessErr("expired", "the access token expired at %s", tok.Expiry.UTC().Format(time.RFC3339))
	}
	for _, a := range tok.Audience {
		if slices.Contains(audiences, a) {
			return tok, nil
		}
	}
	return nil, accessErr("audience", "the access token is for %s, not for this resource (%s): ask the authorization server for a token with resource=%s (RFC 8707)", quoteList(tok.Audience), strings.Join(audiences, ", "), audiences[0])
}

func quoteList(l []string) string {
	if len(l) == 0 {
		return "no audience"
	}
	q := make([]string, len(l))
	for i, s := range l {
		if len(s) > 200 {
			s = s[:200] + "…"
		}
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// maxClaimValues bounds the scopes, groups and audiences kept of a token.
const maxClaimValues = 256

func (v *AccessVerifier) verify(ctx context.Context, is *issuerState, raw string, now time.Time) (*AccessToken, error) {
	// The algorithm first, so that a token of another algorithm is told
	// apart from a bad signature.
	jws, err := jose.ParseSigned(raw, v.algs)
	if err != nil {
		if strings.Contains(err.Error(), "unexpected signature algorithm") {
			return nil, accessErr("algorithm", "the access token's signature algorithm is not accepted (accepted: %s; never none or HMAC)", strings.Join(v.opt.Algorithms, ", "))
		}
		return nil, accessErr("malformed", "the access token is not a signed JWT: %v", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, accessErr("malformed", "the access token has %d signatures, not one", len(jws.Signatures))
	}
	var slot keyErr
	idt, err := is.verifier.Verify(context.WithValue(ctx, keyErrKey{}, &slot), raw)
	if err != nil {
		if slot.err != nil {
			return nil, slot.err // the key set's reason (go-oidc keeps only its text)
		}
		if strings.Contains(err.Error(), "issued by a different provider") {
			return nil, accessErr("issuer", "the access token's issuer is not %s", is.conf.Issuer)
		}
		return nil, accessErr("signature", "the access token's signature does not verify with the keys of %s", is.conf.Issuer)
	}
	var c struct {
		Exp      *float64        `json:"exp"`
		Nbf      *float64        `json:"nbf"`
		Iat      *float64        `json:"iat"`
		Scope    json.RawMessage `json:"scope"`
		Scp      []string        `json:"scp"`
		ClientID string          `json:"client_id"`
		Azp      string          `json:"azp"`
	}
	if err := idt.Claims(&c); err != nil {
		return nil, accessErr("malformed", "the access token's claims do not read: %v", err)
	}
	at := func(f float64) time.Time { return time.Unix(0, 0).Add(time.Duration(f * float64(time.Second))) }
	lee := v.opt.Leeway
	switch {
	case c.Exp == nil:
		return nil, accessErr("no_expiry", "the access token has no exp claim: access tokens must expire")
	case c.Nbf != nil && at(*c.Nbf).After(now.Add(lee)):
		return nil, accessErr("not_yet_valid", "the access token is not valid before %s (nbf)", at(*c.Nbf).UTC().Format(time.RFC3339))
	case c.Iat != nil && at(*c.Iat).After(now.Add(lee)):
		return nil, accessErr("issued_in_future", "the access token was issued in the future (iat %s): check the clocks", at(*c.Iat).UTC().Format(time.RFC3339))
	case idt.Subject == "":
		return nil, accessErr("no_subject", "the access token has no sub claim")
	}
	tok := &AccessToken{IssuerName: is.conf.Name, Issuer: idt.Issuer, Subject: idt.Subject, Audience: capList(idt.Audience), Expiry: at(*c.Exp), ClientID: c.ClientID}
	if tok.ClientID == "" {
		tok.ClientID = c.Azp
	}
	var scope string
	if json.Unmarshal(c.Scope, &scope) == nil {
		tok.Scopes = capList(strings.Fields(scope))
	} else {
		var list []string
		if json.Unmarshal(c.Scope, &list) == nil {
			tok.Scopes = capList(list)
		}
	}
	if len(tok.Scopes) == 0 {
		tok.Scopes = capList(c.Scp)
	}
	var all map[string]json.RawMessage
	if idt.Claims(&all) == nil {
		if g, ok := all[v.opt.GroupsClaim]; ok {
			var list []string
			var one string
			if json.Unmarshal(g, &list) == nil {
				tok.Groups = capList(list)
			} else if json.Unmarshal(g, &one) == nil {
				tok.Groups = capList(strings.Fields(one))
			}
		}
	}
	return tok, nil
}

func capList(l []string) []string {
	if len(l) > maxClaimValues {
		l = l[:maxClaimValues]
	}
	return slices.Clone(l)
}

// --- the key set: a JWKS fetched at a bounded rate ---

// keySet is the keys of one issuer, an oidc.KeySet. It fetches the JWKS
// (after discovery when no JWKS URI is configured) through the bounded
// client: at first use, for a key id it does not hold at most once per
// refresh interval (JWKSRetry after a failure), and when its keys are
// older than JWKSMaxAge. One fetch at a time; the requests that need it
// wait for it, each at most until its own context ends.
type keySet struct {
	issuer  string
	jwksURI string
	client  *http.Client
	algs    []jose.SignatureAlgorithm
	refresh time.Duration
	timeout time.Duration
	now     func() time.Time

	fetches atomic.Int64

	mu        sync.Mutex
	keys      []jose.JSONWebKey
	fetchedAt time.Time // of the keys held
	tried     time.Time // last fetch started
	failed    bool      // the last fetch failed
	lastErr   error
	inflight  chan struct{}
}

// keyErrKey is the context key of a *keyErr: where VerifySignature puts
// its *AccessError for verify, since go-oidc's verifier passes on only the
// error's text.
type keyErrKey struct{}

type keyErr struct{ err *AccessError }

func (k *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	p, err := k.verifySignature(ctx, raw)
	if err != nil {
		if slot, ok := ctx.Value(keyErrKey{}).(*keyErr); ok {
			slot.err = err
		}
		return nil, err
	}
	return p, nil
}

func (k *keySet) verifySignature(ctx context.Context, raw string) ([]byte, *AccessError) {
	jws, err := jose.ParseSigned(raw, k.algs)
	if err != nil {
		return nil, accessErr("malformed", "the access token is not a signed JWT: %v", err)
	}
	kid := jws.Signatures[0].Header.KeyID
	keys, fresh := k.current()
	if p, found, ok := verifyWith(jws, keys, kid); ok {
		if !fresh {
			k.startRefresh() // withdrawn keys stop working within JWKSMaxAge
		}
		return p, nil
	} else if found {
		return nil, accessErr("signature", "the access token's signature does not verify with key %q of %s", kid, k.issuer)
	}
	if err := k.refetch(ctx); err != nil {
		return nil, err
	}
	keys, _ = k.current()
	if p, found, ok := verifyWith(jws, keys, kid); ok {
		return p, nil
	} else if found {
		return nil, accessErr("signature", "the access token's signature does not verify with key %q of %s", kid, k.issuer)
	}
	return nil, accessErr("unknown_key", "the access token's key id %q is not in the JWKS of %s", kid, k.issuer)
}

// verifyWith tries the keys of id kid (every key when kid is empty):
// found says a key of that id was there.
func verifyWith(jws *jose.JSONWebSignature, keys []jose.JSONWebKey, kid string) (payload []byte, found, ok bool) {
	for i := range keys {
		if kid != "" && keys[i].KeyID != kid {
			continue
		}
		found = true
		if p, err := jws.Verify(&keys[i]); err == nil {
			return p, true, true
		}
	}
	return nil, found, false
}

func (k *keySet) current() ([]jose.JSONWebKey, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.keys, k.now().Sub(k.fetchedAt) < JWKSMaxAge
}

// refetch fetches the keys again if the rate allows, and waits for the
// fetch (its own or one under way).
func (k *keySet) refetch(ctx context.Context) *AccessError {
	k.mu.Lock()
	ch := k.inflight
	if ch == nil {
		wait := k.refresh
		if k.failed && JWKSRetry < wait {
			wait = JWKSRetry
		}
		if !k.tried.IsZero() && k.now().Sub(k.tried) < wait {
			err := k.lastErr
			k.mu.Unlock()
			if err != nil {
				return accessErr("keys_unavailable", "the keys of %s could not be fetched (%v); the next try is within %s", k.issuer, err, wait)
			}
			return nil // the keys are as fresh as the rate allows
		}
		ch = k.start()
	}
	k.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		return accessErr("keys_unavailable", "the keys of %s did not arrive in time", k.issuer)
	}
	k.mu.Lock()
	err := k.lastErr
	k.mu.Unlock()
	if err != nil {
		return accessErr("keys_unavailable", "the keys of %s could not be fetched: %v", k.issuer, err)
	}
	return nil
}

// refreshNow fetches the keys and waits for them, unless a fetch is
// under way or one started within the refresh interval.
func (k *keySet) refreshNow(context.Context) {
	if ch := k.startRefresh(); ch != nil {
		<-ch
	}
}

// startRefresh starts a fetch unless one is under way or one started
// within the refresh interval; it returns the fetch's channel, or nil.
func (k *keySet) startRefresh() chan struct{} {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.inflight != nil || !k.tried.IsZero() && k.now().Sub(k.tried) < k.refresh {
		return nil
	}
	return k.start()
}

// start begins a fetch; k.mu is held.
func (k *keySet) start() chan struct{} {
	ch := make(chan struct{})
	k.inflight = ch
	k.tried = k.now()
	k.fetches.Add(1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), k.timeout)
		defer cancel()
		keys, err := k.fetch(ctx)
		k.mu.Lock()
		if err == nil {
			k.keys, k.fetchedAt = keys, k.now()
		}
		k.failed, k.lastErr = err != nil, err
		k.inflight = nil
		k.mu.Unlock()
		close(ch)
	}()
	return ch
}

// maxKeys bounds the keys kept of a JWKS.
const maxKeys = 100

func (k *keySet) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	uri := k.jwksURI
	if uri == "" {
		p, err := oidc.NewProvider(oidc.ClientContext(ctx, k.client), k.issuer)
		if err != nil {
			return nil, fmt.Errorf("discovery: %w", err)
		}
		var m struct {
			JWKSURI string `json:"jwks_uri"`
		}
		if err := p.Claims(&m); err != nil || m.JWKSURI == "" {
			return nil, fmt.Errorf("discovery: the provider's metadata names no jwks_uri")
		}
		uri = m.JWKSURI
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", uri, resp.Status)
	}
	var raw struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		return nil, fmt.Errorf("GET %s: %w", uri, err)
	}
	var keys []jose.JSONWebKey
	for _, r := range raw.Keys {
		var jwk jose.JSONWebKey
		if json.Unmarshal(r, &jwk) != nil || !jwk.Valid() || !jwk.IsPublic() || jwk.Use != "" && jwk.Use != "sig" {
			continue // a key of a kind go-jose does not know, or not for signatures
		}
		if len(keys) == maxKeys {
			break
		}
		keys = append(keys, jwk)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("GET %s: no public signing key", uri)
	}
	return keys, nil
}

// --- the cache of validated tokens ---

// tokenCache holds at most max validated tokens; a new one past it evicts
// the oldest inserted (a ring of keys), and an expired one is dropped
// when it is looked up.
type tokenCache struct {
	mu      sync.Mutex
	max     int
	m       map[[32]byte]cacheEntry
	ring    [][32]byte
	next    int
	evicted atomic.Int64
}

type cacheEntry struct {
	tok   *AccessToken
	until time.Time
}

func newTokenCache(max int) *tokenCache {
	return &tokenCache{max: max, m: make(map[[32]byte]cacheEntry), ring: make([][32]byte, 0, min(max, 1024))}
}

func (c *tokenCache) get(k [32]byte, now time.Time) (*AccessToken, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok {
		return nil, false
	}
	if now.After(e.until) {
		delete(c.m, k)
		return nil, false
	}
	return e.tok, true
}

func (c *tokenCache) put(k [32]byte, t *AccessToken, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; ok {
		c.m[k] = cacheEntry{t, until}
		return
	}
	if len(c.ring) < c.max {
		c.ring = append(c.ring, k)
	} else {
		old := c.ring[c.next]
		if _, ok := c.m[old]; ok {
			delete(c.m, old)
			c.evicted.Add(1)
		}
		c.ring[c.next] = k
		c.next = (c.next + 1) % c.max
	}
	c.m[k] = cacheEntry{t, until}
}

func (c *tokenCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
