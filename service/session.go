package service

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"sync"
	"time"

	"github.com/loadout/loadout/store"
)

// Browser sessions: the web UI signs a person in with a bearer token once
// (StartSession) and from then on sends only a random session id in a
// cookie. A session holds the principal the token resolved to, its CSRF
// token and two times; never the token's secret. Sessions live in this
// process's memory: a restart signs everyone out.
//
// A session works while all of these hold:
//   - it was used within the idle timeout (SessionOptions.Idle) and
//     started within the absolute lifetime (SessionOptions.Lifetime);
//   - it was not ended (EndSession) nor evicted to make room for a newer
//     one of the same token (SessionOptions.PerToken: that token's least
//     recently used goes first). No token's sign-in ends another token's
//     session: at SessionOptions.Max in all, a sign-in is refused
//     (CodeTooManySessions) unless its token has a session to replace;
//   - its token still exists: the ids of the live tokens are re-read from
//     the store at most once per SessionOptions.Recheck, and at once after
//     any token was created or revoked through this service or, by the
//     store's token feed, any other instance (the same signal that clears
//     the token cache). So revoking a token ends its sessions as promptly
//     as it ends its bearer use.
//
// One place decides a browser request: SessionRequest, used by the UI's
// pages and by the API's Auth middleware alike.

// SessionOptions bound the UI's sessions. Zero fields take the defaults.
type SessionOptions struct {
	// Max is the most sessions kept, of every token together; past it a
	// sign-in replaces its own token's least recently used session, or is
	// refused when its token has none (default DefaultSessionMax).
	Max int
	// PerToken is the most sessions one token keeps; past it a sign-in
	// replaces that token's least recently used session (default
	// DefaultSessionPerToken).
	PerToken int
	// Idle ends a session not used for this long (default
	// DefaultSessionIdle).
	Idle time.Duration
	// Lifetime ends a session this long after sign-in, however busy
	// (default DefaultSessionLifetime).
	Lifetime time.Duration
	// Recheck is how long the set of live token ids is trusted before
	// the store is asked again (default DefaultSessionRecheck). Token
	// changes seen by the token feed make it ask at once.
	Recheck time.Duration
}

// Session defaults.
const (
	DefaultSessionMax      = 10_000
	DefaultSessionPerToken = 64
	DefaultSessionIdle     = 8 * time.Hour
	DefaultSessionLifetime = 24 * time.Hour
	DefaultSessionRecheck  = time.Second
)

// Names a browser session travels under.
const (
	// SessionCookie holds the session id (and nothing else).
	SessionCookie = "loadout_session"
	// CSRFHeader carries the session's CSRF token on the pages' API calls;
	// forms send it as the field CSRFField.
	CSRFHeader = "X-CSRF-Token"
	CSRFField  = "csrf"
	// CodeCSRF (403): a state-changing request of a browser session came
	// without its CSRF token, or with another.
	CodeCSRF = "csrf"
	// CodeTooManySessions (503): the server holds its most sessions, and
	// the token has none of its own to replace.
	CodeTooManySessions = "too_many_sessions"
)

// WithDefaults returns o with its zero fields set to the defaults.
func (o SessionOptions) WithDefaults() SessionOptions {
	if o.Max <= 0 {
		o.Max = DefaultSessionMax
	}
	if o.PerToken <= 0 {
		o.PerToken = DefaultSessionPerToken
	}
	if o.Idle <= 0 {
		o.Idle = DefaultSessionIdle
	}
	if o.Lifetime <= 0 {
		o.Lifetime = DefaultSessionLifetime
	}
	if o.Recheck <= 0 {
		o.Recheck = DefaultSessionRecheck
	}
	return o
}

type session struct {
	p             Principal
	csrf          string
	started, used time.Time

	// ext is set for a session signed in through an identity provider
	// (StartExternalSession): it is checked by ext.Check every ext.Every
	// instead of against the live tokens.
	ext     *ExternalSession
	checked time.Time   // last successful check; under sessionStore.mu
	checkMu *sync.Mutex // held by the one check running (external sessions)
}

type sessionStore struct {
	opt SessionOptions
	now func() time.Time // tests move the clock

	mu sync.Mutex
	m  map[string]*session

	// The live token ids, as of liveAt and the token cache's generation
	// liveGen; refreshMu is held by the one refresh running.
	refreshMu sync.Mutex
	live      map[string]bool
	liveAt    time.Time
	liveGen   uint64
	liveOK    bool
}

func newSessionStore(opt SessionOptions) *sessionStore {
	return &sessionStore{opt: opt.WithDefaults(), now: time.Now, m: map[string]*session{}}
}

// sessions returns the service's session store, made on first use.
func (s *Service) sessions() *sessionStore {
	s.sessOnce.Do(func() { s.sess = newSessionStore(s.opt.Sessions) })
	return s.sess
}

// randomToken returns 32 random bytes, base64url.
func randomToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("service: no randomness: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// StartSession signs a browser in: it authenticates bearer (a token's
// secret) as Authenticate does and returns a new session's id and CSRF
// token. The secret itself is not kept. A link token, an unknown or
// revoked one, or none at all is refused (unauthorized).
func (s *Service) StartSession(ctx context.Context, bearer string) (id, csrf string, err error) {
	p, id, csrf, err := s.startSession(ctx, bearer)
	if err == nil {
		// After the session lock is let go: the record is a database write.
		s.audit(ctx, p, store.AuditRecord{Action: "signin", Target: "session"})
	}
	return id, csrf, err
}

func (s *Service) startSession(ctx context.Context, bearer string) (p Principal, id, csrf string, err error) {
	if bearer == "" {
		return p, "", "", errorf(CodeUnauthorized, "paste a token to sign in: create one with 'loadout token create --scope admin' (or --scope agent:ID)")
	}
	p, err = s.Authenticate(ctx, bearer)
	if err != nil {
		return p, "", "", err
	}
	if p.TokenID == "" {
		return p, "", "", errorf(CodeUnauthorized, "this token cannot sign in")
	}
	id, csrf, err = s.sessions().add(p, nil)
	return p, id, csrf, err
}

// add keeps a new session of p (ext for an external one): at most PerToken
// of one principal (TokenID), replacing its least recently used, and at
// most Max in all, refused when p has none to replace.
func (st *sessionStore) add(p Principal, ext *ExternalSession) (id, csrf string, err error) {
	id, csrf = randomToken(), randomToken()
	now := st.now()
	st.mu.Lock()
	defer st.mu.Unlock()
	st.sweep(now)
	own := 0
	for _, ss := range st.m {
		if ss.p.TokenID == p.TokenID {
			own++
		}
	}
	switch {
	case own >= st.opt.PerToken:
		st.evictOldest(p.TokenID)
	case len(st.m) >= st.opt.Max:
		// Never another token's session: only this token's own.
		if own == 0 {
			return "", "", errorf(CodeTooManySessions, "the server holds its most UI sessions (%d), none of them this token's: try again later, or ask the operator to restart the server or revoke unused tokens", st.opt.Max)
		}
		st.evictOldest(p.TokenID)
	}
	ss := &session{p: p, csrf: csrf, started: now, used: now, ext: ext, checked: now}
	if ext != nil {
		ss.checkMu = new(sync.Mutex)
	}
	st.m[id] = ss
	return id, csrf, nil
}

// ExternalSession describes a session signed in through an identity
// provider rather than with a token (the web UI's OpenID Connect
// sign-in): its principal is the person (TokenID "oidc:SUBJECT", a name
// such as their email) with the scopes their claims map to.
//
// Such a session obeys the same cookie, CSRF, idle and lifetime limits,
// caps (PerToken counts the person's sessions) and sign-out as a token's;
// instead of the live tokens, Check is asked again once Every has passed
// since its last answer, on the session's next request.
type ExternalSession struct {
	Principal Principal
	// Check returns the scopes the person holds now. ok false: they hold
	// none any more (removed from the mapped groups, disabled at the
	// provider): the session ends. err: the provider could not tell: the
	// request is refused, the session kept, and the next request asks
	// again. Nil: never checked again.
	Check func(ctx context.Context) (scopes []string, ok bool, err error)
	Every time.Duration
	// Method names the sign-in for the audit trail ("oidc").
	Method string
}

// StartExternalSession signs a browser in as es.Principal (whose TokenID
// must start with "oidc:" or another prefix no token id has) and returns
// the session's id and CSRF token.
func (s *Service) StartExternalSession(ctx context.Context, es ExternalSession) (id, csrf string, err error) {
	p := es.Principal
	if p.TokenID == "" || len(p.Scopes) == 0 || p.Open {
		return "", "", errorf(CodeUnauthorized, "an external sign-in needs a subject and at least one scope")
	}
	ext := es
	id, csrf, err = s.sessions().add(p, &ext)
	if err == nil {
		s.audit(ctx, p, store.AuditRecord{Action: "signin", Target: "session", Detail: es.Method})
	}
	return id, csrf, err
}

// RecordSignInRefused appends an audit record of a refused sign-in
// through an identity provider: actor is who the provider said signed in
// (their subject, or "" when unknown), detail why.
func (s *Service) RecordSignInRefused(ctx context.Context, actorID, actor, detail string) {
	s.audit(ctx, Principal{TokenID: actorID, Name: actor}, store.AuditRecord{Action: "signin.refuse", Target: "session", Actor: cmp.Or(actor, "(unknown)"), Detail: detail})
}

// sweep drops expired sessions; mu is held.
func (st *sessionStore) sweep(now time.Time) {
	for id, ss := range st.m {
		if st.expired(ss, now) {
			delete(st.m, id)
		}
	}
}

// evictOldest drops the token's least recently used session; mu is held.
func (st *sessionStore) evictOldest(tokenID string) {
	var oldest string
	var at time.Time
	for id, ss := range st.m {
		if ss.p.TokenID != tokenID {
			continue
		}
		if oldest == "" || ss.used.Before(at) {
			oldest, at = id, ss.used
		}
	}
	delete(st.m, oldest)
}

func (st *sessionStore) expired(ss *session, now time.Time) bool {
	return now.Sub(ss.used) >= st.opt.Idle || now.Sub(ss.started) >= st.opt.Lifetime
}

// Session returns the principal and CSRF token of a live session, and
// marks it used; ok is false for an unknown, ended, expired or evicted
// session, and for one whose token was revoked (the session is then
// dropped). Should the store not answer which tokens are live, the
// session is refused (and kept): it works again once the store answers.
func (s *Service) Session(ctx context.Context, id string) (p Principal, csrf string, ok bool) {
	if id == "" {
		return Principal{}, "", false
	}
	st := s.sessions()
	now := st.now()
	st.mu.Lock()
	ss := st.m[id]
	if ss != nil && st.expired(ss, now) {
		delete(st.m, id)
		ss = nil
	}
	if ss == nil {
		st.mu.Unlock()
		return Principal{}, "", false
	}
	p, csrf = ss.p, ss.csrf
	st.mu.Unlock()

	if ss.ext != nil {
		p, ok = s.checkExternal(ctx, id, ss)
		return p, csrf, ok
	}
	live, known := s.tokenLive(ctx, p.TokenID)
	if !known {
		return Principal{}, "", false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if !live {
		delete(st.m, id)
		return Principal{}, "", false
	}
	if cur := st.m[id]; cur != nil {
		cur.used = now
	}
	return p, csrf, true
}

// checkExternal decides an external session's request: its principal as
// of its last check, checked again (one check at a time per session)
// once ext.Every has passed. A check that says the person holds no role
// any more ends the session (audited); one that cannot tell refuses the
// request and keeps the session.
func (s *Service) checkExternal(ctx context.Context, id string, ss *session) (Principal, bool) {
	st := s.sessions()
	ss.checkMu.Lock()
	defer ss.checkMu.Unlock()
	st.mu.Lock()
	p, due := ss.p, ss.ext.Check != nil && st.now().Sub(ss.checked) >= ss.ext.Every
	st.mu.Unlock()
	if due {
		scopes, ok, err := ss.ext.Check(ctx)
		switch {
		case err != nil:
			s.log.Warn("UI sessions: the identity provider could not re-check a signed-in user; their requests are refused until it answers", "user", p.Name, "err", err)
			return Principal{}, false
		case !ok || len(scopes) == 0:
			st.mu.Lock()
			delete(st.m, id)
			st.mu.Unlock()
			s.log.Info("UI sessions: a signed-in user's claims no longer map to a role; their session ended", "user", p.Name)
			s.audit(ctx, p, store.AuditRecord{Action: "signout", Target: "session", Detail: ss.ext.Method + ": the claims no longer map to a role"})
			return Principal{}, false
		}
		p.Scopes = scopes
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	cur := st.m[id]
	if cur == nil {
		return Principal{}, false // ended meanwhile
	}
	if due {
		cur.p.Scopes, cur.checked = p.Scopes, st.now()
	}
	cur.used = st.now()
	return p, true
}

// tokenLive reports whether the token id is live, from the set of live
// ids (re-read when stale); known is false when the store could not say.
func (s *Service) tokenLive(ctx context.Context, tokenID string) (live, known bool) {
	if s.opt.Server == nil {
		return false, true
	}
	st := s.sessions()
	gen := s.auth.generation()
	fresh := func() bool {
		return st.liveOK && st.liveGen == gen && st.now().Sub(st.liveAt) < st.opt.Recheck
	}
	st.refreshMu.Lock()
	defer st.refreshMu.Unlock()
	if !fresh() {
		at := st.now()
		toks, err := s.opt.Server.Tokens(ctx)
		if err != nil {
			s.log.Warn("UI sessions: cannot read the live tokens; sessions are refused until the store answers", "err", err)
			st.liveOK = false
			return false, false
		}
		live := make(map[string]bool, len(toks))
		for _, t := range toks {
			live[t.ID] = true
		}
		st.live, st.liveAt, st.liveGen, st.liveOK = live, at, gen, true
	}
	return st.live[tokenID], true
}

// EndSession signs a session out; an unknown id is ignored.
func (s *Service) EndSession(id string) {
	st := s.sessions()
	st.mu.Lock()
	delete(st.m, id)
	st.mu.Unlock()
}

// SignOut ends the session id, signed in as p, and records the sign-out
// in the audit trail; an unknown id is ignored.
func (s *Service) SignOut(ctx context.Context, p Principal, id string) {
	st := s.sessions()
	st.mu.Lock()
	ss, ok := st.m[id]
	delete(st.m, id)
	st.mu.Unlock()
	if ok {
		detail := ""
		if ss.ext != nil {
			detail = ss.ext.Method
		}
		s.audit(ctx, p, store.AuditRecord{Action: "signout", Target: "session", Detail: detail})
	}
}

// SafeMethod reports whether an HTTP method changes nothing (GET, HEAD,
// OPTIONS), so that it needs no CSRF token.
func SafeMethod(method string) bool {
	return method == "GET" || method == "HEAD" || method == "OPTIONS"
}

// CheckCSRF compares the CSRF token a request sent with the one expected,
// in constant time: nil when they match, else a CodeCSRF error saying
// what to do. An empty expected token matches nothing.
func CheckCSRF(want, sent string) error {
	if want == "" || sent == "" {
		return errorf(CodeCSRF, "this request changes something but came without the page's CSRF token: reload the page and try again (scripts send it as the %s header, forms as the field %q)", CSRFHeader, CSRFField)
	}
	if subtle.ConstantTimeCompare([]byte(want), []byte(sent)) != 1 {
		return errorf(CodeCSRF, "the CSRF token does not match this session (the page may be from an earlier sign-in): reload the page and try again")
	}
	return nil
}

// SessionRequest decides a browser request that carries a session
// cookie: the session's principal and CSRF token, or an error.
// Unauthorized: the session is unknown, ended, expired or its token
// revoked. CodeCSRF: the method changes something (not SafeMethod) and
// sent is not the session's CSRF token. The UI's pages and the API's
// Auth middleware both decide through it.
func (s *Service) SessionRequest(ctx context.Context, id, method, sent string) (Principal, string, error) {
	p, csrf, ok := s.Session(ctx, id)
	if !ok {
		return Principal{}, "", errorf(CodeUnauthorized, "your UI session has ended (signed out, expired, or its token was revoked): sign in again at /ui/login")
	}
	if !SafeMethod(method) {
		if err := CheckCSRF(csrf, sent); err != nil {
			return Principal{}, "", err
		}
	}
	return p, csrf, nil
}

// generation is the cache's invalidation count: it moves whenever a token
// is created or revoked (here, or elsewhere as the token feed reports).
func (c *tokenCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}
