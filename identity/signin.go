package identity

import (
	"container/list"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// Sign-in to the web UI with an OpenID provider: the authorization code
// flow with PKCE (S256), a state and a nonce, through go-oidc and
// x/oauth2. SignIn keeps each started sign-in's state, nonce, PKCE
// verifier and return path in memory, at most MaxPending of them for at
// most PendingTTL (the oldest goes first when full), and each is used
// once. The caller binds a sign-in to the browser that started it by a
// cookie holding the state (Finish compares the two).

// Bounds of the sign-ins started and not finished.
const (
	DefaultMaxPending = 10_000
	DefaultPendingTTL = 10 * time.Minute
	// MaxNext bounds the return path a pending sign-in keeps, so that
	// MaxPending of them stay small (about 2.3 KB each at the bounds: 23 MB
	// for 10,000; 0.3 KB with a short path).
	MaxNext = 2048
	// MaxClockSkew is how far in the future an ID token's iat may be.
	MaxClockSkew = time.Minute
)

// Codes of a refused or failed sign-in (Error.Code).
const (
	CodeStateMissing  = "state_missing"  // the callback came without a state, or without the browser's state cookie
	CodeStateMismatch = "state_mismatch" // the state is not the one this browser started
	CodeStateUnknown  = "state_unknown"  // no sign-in with that state is pending (used, expired or evicted)
	CodeProviderError = "provider_error" // the provider sent the browser back with an error
	CodeUnreachable   = "provider_unreachable"
	CodeExchange      = "code_exchange_failed" // the token endpoint refused the code (a replayed or stale code)
	CodeIDToken       = "id_token_invalid"     // the ID token failed a check (signature, issuer, audience, expiry, iat, nonce)
	CodeNoRole        = "no_role"              // the claims map to no role
	CodeClaims        = "claims_invalid"       // a claim the mapping reads is malformed
)

// Error is a refused or failed sign-in: a code, a message for the person
// signing in (never a secret), and the claims seen when they matter.
type Error struct {
	Code    string
	Message string
	// Claims are the claims read, for CodeNoRole.
	Claims *Claims
	Err    error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Code + ": " + e.Message + ": " + e.Err.Error()
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// CodeOf is err's Error code, "" when it has none.
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// SignInConfig configures a SignIn.
type SignInConfig struct {
	Issuer       string
	ClientID     string
	ClientSecret string // "" for a public client (PKCE alone)
	RedirectURL  string
	// Scopes besides "openid" (which is always asked for).
	Scopes []string
	Roles  RoleMap
	// HTTP is the client every request to the provider uses (default
	// Client(0, 0)).
	HTTP *http.Client
	// MaxPending and PendingTTL bound the started sign-ins (defaults
	// DefaultMaxPending, DefaultPendingTTL).
	MaxPending int
	PendingTTL time.Duration
	// Now is the clock (tests move it); default time.Now.
	Now func() time.Time
}

// SignIn runs sign-ins with one provider. Safe for concurrent use.
type SignIn struct {
	cfg SignInConfig

	dmu      sync.Mutex // held by the one discovery running
	provider *oidc.Provider
	verifier *oidc.IDTokenVerifier
	oauth    *oauth2.Config
	endSess  string

	pmu     sync.Mutex
	pending map[string]*list.Element
	order   *list.List // of *pending, oldest first
}

type pending struct {
	state, nonce, verifier, next string
	at                           time.Time
}

// User is a signed-in user: the claims, the scopes they map to, and the
// tokens the session keeps server-side (never sent to the browser).
type User struct {
	Claims
	Scopes []string
	// Matched says which groups or domain granted the scopes.
	Matched      []string
	RefreshToken string
	IDToken      string
	// Next is the UI path the sign-in was started from.
	Next string
}

// NewSignIn checks cfg; it does not contact the provider (the first
// sign-in does, and a failed discovery is retried by the next).
func NewSignIn(cfg SignInConfig) (*SignIn, error) {
	if cfg.Issuer == "" || cfg.ClientID == "" || cfg.RedirectURL == "" {
		return nil, errors.New("identity: a sign-in needs an issuer, a client id and a redirect URL")
	}
	if cfg.HTTP == nil {
		cfg.HTTP = Client(0, 0)
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = DefaultMaxPending
	}
	if cfg.PendingTTL <= 0 {
		cfg.PendingTTL = DefaultPendingTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &SignIn{cfg: cfg, pending: map[string]*list.Element{}, order: list.New()}, nil
}

// RedirectURL is the configured callback URL.
func (s *SignIn) RedirectURL() string { return s.cfg.RedirectURL }

// Issuer is the configured issuer.
func (s *SignIn) Issuer() string { return s.cfg.Issuer }

// discover fetches the provider's discovery document once (through the
// bounded client); a failure is returned and retried by the next call.
func (s *SignIn) discover(ctx context.Context) error {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	if s.provider != nil {
		return nil
	}
	// The key set keeps this context for its later fetches of the JWKS:
	// not the request's (it ends), the bounded client's.
	pctx := oidc.ClientContext(context.Background(), s.cfg.HTTP)
	dctx, cancel := context.WithTimeout(pctx, s.cfg.HTTP.Timeout+time.Second)
	defer cancel()
	p, err := oidc.NewProvider(oidc.ClientContext(dctx, s.cfg.HTTP), s.cfg.Issuer)
	if err != nil {
		return &Error{Code: CodeUnreachable, Message: fmt.Sprintf("the identity provider's discovery document (%s/.well-known/openid-configuration) could not be read", strings.TrimSuffix(s.cfg.Issuer, "/")), Err: err}
	}
	// NewProvider's key set took dctx, which ends here: make the
	// verifier's key set from the long-lived context instead.
	var meta struct {
		JWKS       string   `json:"jwks_uri"`
		EndSession string   `json:"end_session_endpoint"`
		Algs       []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := p.Claims(&meta); err != nil || meta.JWKS == "" {
		return &Error{Code: CodeUnreachable, Message: "the identity provider's discovery document names no jwks_uri", Err: err}
	}
	keys := oidc.NewRemoteKeySet(pctx, meta.JWKS)
	algs := slices.DeleteFunc(slices.Clone(meta.Algs), func(a string) bool { return a == "none" || strings.HasPrefix(a, "HS") })
	if len(algs) == 0 {
		algs = []string{oidc.RS256}
	}
	s.verifier = oidc.NewVerifier(s.cfg.Issuer, keys, &oidc.Config{ClientID: s.cfg.ClientID, SupportedSigningAlgs: algs, Now: s.cfg.Now})
	ep := p.Endpoint()
	if s.cfg.ClientSecret == "" {
		ep.AuthStyle = oauth2.AuthStyleInParams
	}
	s.oauth = &oauth2.Config{
		ClientID: s.cfg.ClientID, ClientSecret: s.cfg.ClientSecret, RedirectURL: s.cfg.RedirectURL,
		Endpoint: ep, Scopes: append([]string{oidc.ScopeOpenID}, slices.DeleteFunc(slices.Clone(s.cfg.Scopes), func(x string) bool { return x == oidc.ScopeOpenID })...),
	}
	s.endSess = meta.EndSession
	s.provider = p
	return nil
}

func random() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("identity: no randomness: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Start begins a sign-in that returns to next (a UI path the caller has
// checked): it returns the provider's authorization URL to send the
// browser to, and the state the caller binds to the browser (a cookie).
func (s *SignIn) Start(ctx context.Context, next string) (authURL, state string, err error) {
	if len(next) > MaxNext {
		return "", "", fmt.Errorf("identity: a return path of %d bytes, over the %d a sign-in keeps", len(next), MaxNext)
	}
	if err := s.discover(ctx); err != nil {
		return "", "", err
	}
	p := &pending{state: random(), nonce: random(), verifier: oauth2.GenerateVerifier(), next: next, at: s.cfg.Now()}
	s.pmu.Lock()
	s.sweepLocked(p.at)
	for s.order.Len() >= s.cfg.MaxPending {
		s.dropLocked(s.order.Front())
	}
	s.pending[p.state] = s.order.PushBack(p)
	s.pmu.Unlock()
	return s.oauth.AuthCodeURL(p.state, oauth2.S256ChallengeOption(p.verifier), oidc.Nonce(p.nonce)), p.state, nil
}

// Pending is how many sign-ins are started and not finished.
func (s *SignIn) Pending() int {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	return s.order.Len()
}

func (s *SignIn) sweepLocked(now time.Time) {
	for e := s.order.Front(); e != nil; e = s.order.Front() {
		if now.Sub(e.Value.(*pending).at) < s.cfg.PendingTTL {
			return
		}
		s.dropLocked(e)
	}
}

func (s *SignIn) dropLocked(e *list.Element) {
	delete(s.pending, e.Value.(*pending).state)
	s.order.Remove(e)
}

// take removes and returns the pending sign-in of state, if it is live.
func (s *SignIn) take(state string) *pending {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	s.sweepLocked(s.cfg.Now())
	e, ok := s.pending[state]
	if !ok {
		return nil
	}
	s.dropLocked(e)
	return e.Value.(*pending)
}

// Finish completes a sign-in from the callback's query and the state the
// browser's cookie holds: the state must be present, equal the cookie's
// and be pending (it is then used up); the code is exchanged with the
// PKCE verifier; the ID token is verified (Verify, with the nonce); its
// claims are mapped to scopes, none being a refusal (CodeNoRole, with the
// claims seen).
func (s *SignIn) Finish(ctx context.Context, query url.Values, cookieState string) (*User, error) {
	state := query.Get("state")
	if state == "" || cookieState == "" {
		return nil, &Error{Code: CodeStateMissing, Message: "the sign-in came back without its state (or this browser holds no sign-in started here): start again from the sign-in page"}
	}
	if subtle.ConstantTimeCompare([]byte(state), []byte(cookieState)) != 1 {
		return nil, &Error{Code: CodeStateMismatch, Message: "the sign-in came back with a state this browser did not start (a link from elsewhere, or another tab's sign-in): start again from the sign-in page"}
	}
	p := s.take(state)
	if p == nil {
		return nil, &Error{Code: CodeStateUnknown, Message: fmt.Sprintf("this sign-in is not pending: it was finished already, or started more than %s ago, or the server restarted: start again from the sign-in page", s.cfg.PendingTTL)}
	}
	if e := query.Get("error"); e != "" {
		return nil, &Error{Code: CodeProviderError, Message: fmt.Sprintf("the identity provider refused the sign-in: %.200s %.300s", e, query.Get("error_description"))}
	}
	code := query.Get("code")
	if code == "" {
		return nil, &Error{Code: CodeExchange, Message: "the identity provider sent no authorization code"}
	}
	if err := s.discover(ctx); err != nil {
		return nil, err
	}
	tok, err := s.oauth.Exchange(oidc.ClientContext(ctx, s.cfg.HTTP), code, oauth2.VerifierOption(p.verifier))
	if err != nil {
		return nil, &Error{Code: CodeExchange, Message: "the identity provider did not exchange the authorization code (used already, expired, or the client's registration differs): start again from the sign-in page", Err: err}
	}
	u, err := s.user(ctx, tok, p.nonce, "")
	if err != nil {
		return nil, err
	}
	u.Next = p.next
	return u, nil
}

// Refresh fetches the user's claims again with a refresh token (the
// recheck of a session): a new ID token, verified as at sign-in (without
// a nonce) and for the same subject, mapped again; when the provider
// sends no ID token on refresh, the claims of its userinfo endpoint
// (with the new access token) instead. The returned User
// carries the refresh token to use next (the provider may rotate it).
// A CodeNoRole error means the mapping no longer grants a role.
func (s *SignIn) Refresh(ctx context.Context, refreshToken, subject string) (*User, error) {
	if err := s.discover(ctx); err != nil {
		return nil, err
	}
	ts := s.oauth.TokenSource(oidc.ClientContext(ctx, s.cfg.HTTP), &oauth2.Token{RefreshToken: refreshToken})
	tok, err := ts.Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return nil, &Error{Code: CodeExchange, Message: "the identity provider refused the refresh token (the user was disabled, signed out at the provider, or the grant was revoked)", Err: err}
		}
		return nil, &Error{Code: CodeUnreachable, Message: "the identity provider's token endpoint did not answer", Err: err}
	}
	var u *User
	if raw, _ := tok.Extra("id_token").(string); raw == "" {
		// Some providers send no new ID token on refresh: the
		// userinfo endpoint, with the new access token, has the claims.
		u, err = s.userInfo(ctx, tok, subject)
	} else {
		u, err = s.user(ctx, tok, "", subject)
	}
	if err != nil {
		return nil, err
	}
	if u.RefreshToken == "" {
		u.RefreshToken = refreshToken
	}
	return u, nil
}

func (s *SignIn) user(ctx context.Context, tok *oauth2.Token, nonce, subject string) (*User, error) {
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, &Error{Code: CodeIDToken, Message: "the identity provider's token answer has no ID token (is \"openid\" among the client's allowed scopes?)"}
	}
	c, err := s.Verify(ctx, raw, nonce)
	if err != nil {
		return nil, err
	}
	if subject != "" && c.Subject != subject {
		return nil, &Error{Code: CodeIDToken, Message: "the refreshed ID token is for another subject"}
	}
	return s.mapped(c, tok, raw)
}

// userInfo reads the claims of a refresh without an ID token from the
// provider's userinfo endpoint (authenticated by the new access token),
// for the same subject, and maps them.
func (s *SignIn) userInfo(ctx context.Context, tok *oauth2.Token, subject string) (*User, error) {
	info, err := s.provider.UserInfo(oidc.ClientContext(ctx, s.cfg.HTTP), oauth2.StaticTokenSource(tok))
	if err != nil {
		return nil, &Error{Code: CodeUnreachable, Message: "the refresh brought no ID token, and the identity provider's userinfo endpoint did not answer", Err: err}
	}
	if info.Subject != subject {
		return nil, &Error{Code: CodeIDToken, Message: "the userinfo endpoint answered for another subject"}
	}
	var raws map[string]any
	if err := info.Claims(&raws); err != nil {
		return nil, &Error{Code: CodeClaims, Message: "the userinfo answer is not a JSON object", Err: err}
	}
	c := Claims{Subject: info.Subject, Email: info.Email, EmailVerified: info.EmailVerified}
	g, err := readGroups(raws, s.cfg.Roles.groupsClaim())
	if err != nil {
		return nil, &Error{Code: CodeClaims, Message: err.Error(), Claims: &c}
	}
	c.Groups = g
	return s.mapped(c, tok, "")
}

// mapped maps claims to scopes: a User, or CodeNoRole with the claims.
func (s *SignIn) mapped(c Claims, tok *oauth2.Token, raw string) (*User, error) {
	scopes, matched := s.cfg.Roles.Scopes(c)
	if len(scopes) == 0 {
		cc := c
		return nil, &Error{Code: CodeNoRole, Claims: &cc, Message: "signed in at the identity provider, but no mapping of oidc.roles matched these claims, so loadout grants no role"}
	}
	return &User{Claims: c, Scopes: scopes, Matched: matched, RefreshToken: tok.RefreshToken, IDToken: raw}, nil
}

// Verify checks a raw ID token and returns its claims. go-oidc checks the
// signature (a key of the provider's JWKS, by kid, with an algorithm the
// provider announces: never "none" nor HMAC), the issuer, the audience
// (the client id), and the expiry. Verify adds what go-oidc leaves to its
// caller: the nonce (when nonce is not ""), an iat no further than
// MaxClockSkew in the future, and, for a token with several audiences, an
// azp that is the client id.
func (s *SignIn) Verify(ctx context.Context, raw, nonce string) (Claims, error) {
	if err := s.discover(ctx); err != nil {
		return Claims{}, err
	}
	idt, err := s.verifier.Verify(oidc.ClientContext(ctx, s.cfg.HTTP), raw)
	if err != nil {
		return Claims{}, &Error{Code: CodeIDToken, Message: "the ID token was refused", Err: err}
	}
	if nonce != "" && subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(nonce)) != 1 {
		return Claims{}, &Error{Code: CodeIDToken, Message: "the ID token's nonce is not the one this sign-in sent (a token from another sign-in)"}
	}
	if idt.IssuedAt.IsZero() {
		return Claims{}, &Error{Code: CodeIDToken, Message: "the ID token has no iat (issued-at) claim"}
	}
	if idt.IssuedAt.After(s.cfg.Now().Add(MaxClockSkew)) {
		return Claims{}, &Error{Code: CodeIDToken, Message: fmt.Sprintf("the ID token's iat (%s) is in the future, more than %s ahead of this server's clock", idt.IssuedAt.UTC().Format(time.RFC3339), MaxClockSkew)}
	}
	var raws map[string]any
	if err := idt.Claims(&raws); err != nil {
		return Claims{}, &Error{Code: CodeIDToken, Message: "the ID token's claims are not a JSON object", Err: err}
	}
	if len(idt.Audience) > 1 {
		if azp, _ := raws["azp"].(string); azp != "" && azp != s.cfg.ClientID {
			return Claims{}, &Error{Code: CodeIDToken, Message: "the ID token was issued to another client (azp)"}
		}
	}
	c := Claims{Subject: idt.Subject}
	c.Email, _ = raws["email"].(string)
	switch v := raws["email_verified"].(type) {
	case bool:
		c.EmailVerified = v
	case string: // some providers send "true"
		c.EmailVerified = v == "true"
	}
	if c.Subject == "" {
		return Claims{}, &Error{Code: CodeIDToken, Message: "the ID token has no subject"}
	}
	g, err := readGroups(raws, s.cfg.Roles.groupsClaim())
	if err != nil {
		return Claims{}, &Error{Code: CodeClaims, Message: err.Error(), Claims: &c}
	}
	c.Groups = g
	return c, nil
}

// EndSessionURL is the provider's end_session_endpoint with the ID token
// hint and the URL to come back to, or "" when the provider has none.
func (s *SignIn) EndSessionURL(idToken, postLogout string) string {
	s.dmu.Lock()
	ep := s.endSess
	s.dmu.Unlock()
	if ep == "" {
		return ""
	}
	u, err := url.Parse(ep)
	if err != nil {
		return ""
	}
	q := u.Query()
	if idToken != "" {
		q.Set("id_token_hint", idToken)
	}
	q.Set("client_id", s.cfg.ClientID)
	if postLogout != "" {
		q.Set("post_logout_redirect_uri", postLogout)
	}
	u.RawQuery = q.Encode()
	return u.String()
}
