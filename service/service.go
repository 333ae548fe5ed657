// Package service is what every transport serves: the HTTP API and the MCP
// server both call it, so authorization, receipts, activation, store writes
// and reloads follow one set of rules whatever the wire. It sits between the
// transports and the catalog; it imports no HTTP or MCP code.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/safety"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

// Options configure a Service.
type Options struct {
	// Store holds stored skills; nil means none (writes are refused).
	Store store.Store
	// Server holds tokens and receipts and reports changes by other
	// instances; usually the same value as Store. Nil: no tokens, receipts
	// are kept only in memory.
	Server store.Server
	// RequireTokens refuses requests without a valid bearer token. It is
	// set when serving on a non-loopback address.
	RequireTokens bool
	Limits        skill.Limits
	Logger        *slog.Logger
	// TokenCache tunes the cache of token lookups (see auth.go).
	TokenCache TokenCacheOptions
	// Receipts bound the receipts the store keeps (see receipts.go);
	// zero fields take the store's defaults.
	Receipts store.Retention
	// Sessions bound the web UI's sign-in sessions (see session.go).
	Sessions SessionOptions
	// Listing tunes the usage ranking of listings (see listing.go).
	Listing ListingOptions
	// Safety is the policy of the safety and quality checks that
	// Diagnostics and CheckPolicy use (nil: the default).
	Safety *safety.Policy
	// Review configures drafts and review (see review.go).
	Review ReviewOptions
	// Publisher pushes stored versions to an OCI registry (publish.go);
	// nil: no push.
	Publisher Publisher
}

// Service serves one catalog to many agents over any transport. It is safe
// for concurrent use.
type Service struct {
	cat  *catalog.Catalog
	opt  Options
	log  *slog.Logger
	rcpt *receiptLog
	auth *tokenCache

	sessOnce sync.Once
	sess     *sessionStore // the UI's sessions (session.go)

	watches tokenWatches // WatchToken (tokenwatch.go)

	remotes remotesHolder // remote sources (remote.go)

	blocksMu sync.Mutex // serializes RefreshBlocks (blocks.go)

	safetyMu sync.RWMutex // guards opt.Safety

	subMu sync.Mutex
	subs  map[chan struct{}]struct{}
	gen   uint64 // bumped on every change to the catalog

	// reloader, when set, is what Reload runs instead of a rescan: the
	// server re-reads its config file first (SetReloader).
	reloadMu sync.RWMutex
	reloader func(ctx context.Context, why string) error

	// The usage counts listings rank by (listing.go): recomputed at start,
	// on Rescan and Reconfigure, and every Listing.Refresh.
	listMu    sync.Mutex // serializes recomputes; guards opt.Listing
	usage     atomic.Pointer[usageSnapshot]
	usageStop chan struct{}
	// The listing plans prompts are kept on (prompt.go).
	basesMu    sync.Mutex
	bases      map[baseKey]*base
	basesBytes int // Basis.Bytes of the plans kept
	usageDone  chan struct{}
	closeOnce  sync.Once

	// onAct is told of every load and read (OnActivation, observe.go).
	onAct atomic.Pointer[func(Activation)]
}

// New wraps a catalog.
func New(cat *catalog.Catalog, opt Options) *Service {
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	s := &Service{cat: cat, opt: opt, log: opt.Logger, subs: map[chan struct{}]struct{}{}}
	s.rcpt = newReceiptLog(opt.Server, opt.Logger, opt.Receipts)
	s.auth = newTokenCache(opt.Server, opt.TokenCache, opt.Logger)
	s.RefreshUsage(context.Background())
	s.usageStop, s.usageDone = make(chan struct{}), make(chan struct{})
	go s.usageLoop(s.usageStop, s.usageDone)
	s.followBlocks(s.usageStop) // the kill switch (blocks.go)
	return s
}

// RequireTokens switches token checking on or off (a server turns it on
// when any token exists).
func (s *Service) RequireTokens(on bool) {
	s.subMu.Lock()
	s.opt.RequireTokens = on
	s.subMu.Unlock()
}

func (s *Service) tokensRequired() bool {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	return s.opt.RequireTokens
}

// Close flushes pending receipts and stops the background work.
func (s *Service) Close() error {
	s.closeOnce.Do(func() {
		close(s.usageStop)
		<-s.usageDone
	})
	s.auth.close()
	return s.rcpt.close()
}

// Catalog returns the catalog being served.
func (s *Service) Catalog() *catalog.Catalog { return s.cat }

// Store returns the store, or nil.
func (s *Service) Store() store.Store { return s.opt.Store }

// Diagnostics are every source's diagnostics and the safety and quality
// checks' findings over the current catalog: Report's. The slice is
// shared; do not change it.
func (s *Service) Diagnostics(ctx context.Context) []skill.Diagnostic {
	return s.Report(ctx).Diagnostics
}

// Report is every diagnostic of the catalog with the safety policy, each
// skill's counted (catalog.Report, made once per catalog generation):
// the one count of problems the API, the UI and check show.
func (s *Service) Report(ctx context.Context) *catalog.Report {
	return s.cat.Report(ctx, s.SafetyPolicy())
}

// ReportReady is Report when it is made already (catalog.ReportReady):
// it never waits for the safety checks.
func (s *Service) ReportReady() (*catalog.Report, bool) {
	return s.cat.ReportReady(s.SafetyPolicy())
}

// Limits are the limits writes are held to (Options.Limits; zero fields
// are skill's defaults): the transports size their import limits by them
// (portable.LimitsFor), so the UI and the API refuse at the same sizes.
func (s *Service) Limits() skill.Limits { return s.opt.Limits }

// SafetyPolicy is the safety checks' policy (nil: the default).
func (s *Service) SafetyPolicy() *safety.Policy {
	s.safetyMu.RLock()
	defer s.safetyMu.RUnlock()
	return s.opt.Safety
}

// SetSafety replaces the safety checks' policy (a reloaded config).
func (s *Service) SetSafety(p *safety.Policy) {
	s.safetyMu.Lock()
	s.opt.Safety = p
	s.safetyMu.Unlock()
}

// Generation counts the changes to the catalog; caches keyed by it stay
// correct.
func (s *Service) Generation() uint64 {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	return s.gen
}

// Reload rescans every source and tells subscribers the catalog changed.
// With a reloader set (SetReloader), it runs that instead: a server
// serving from a config file re-reads it, then rescans; its error (a
// config that does not load, so the running one is kept) is returned.
func (s *Service) Reload(ctx context.Context, why string) error {
	s.reloadMu.RLock()
	r := s.reloader
	s.reloadMu.RUnlock()
	var err error
	if r != nil {
		err = r(ctx, why)
	} else {
		s.Rescan(ctx, why)
	}
	if err == nil {
		// The principal of the request that asked, if any: a reload the
		// server made on its own (a config file watched) has none.
		s.audit(ctx, PrincipalFrom(ctx), store.AuditRecord{Action: "config.reload", Target: "config", Detail: why})
	}
	return err
}

// Rescan rescans every source and tells subscribers the catalog changed,
// whatever reloader is set.
func (s *Service) Rescan(ctx context.Context, why string) {
	s.change(why, 0, func() { s.cat.Reload(ctx) })
	s.RefreshUsage(ctx)
}

// SetReloader makes Reload (POST /v1/reload, say) run r instead of a
// rescan. r is expected to call Rescan or Reconfigure.
func (s *Service) SetReloader(r func(ctx context.Context, why string) error) {
	s.reloadMu.Lock()
	s.reloader = r
	s.reloadMu.Unlock()
}

// Reconfigure replaces the catalog's agents and options (a reloaded config
// file) and rebuilds it (catalog.Reconfigure); subscribers are told when
// anything changed. On an error nothing changes.
func (s *Service) Reconfigure(ctx context.Context, why string, agents []catalog.AgentSpec, opt catalog.Options) error {
	var err error
	s.change(why, 0, func() { err = s.cat.Reconfigure(ctx, agents, opt) })
	if err == nil {
		s.RefreshUsage(ctx)
	}
	return err
}

// Refresh updates the catalog after the files at paths changed, reading
// only what changed, or, with no paths, after the store or the plugins
// changed in ways not known (a change by another instance): then the
// store and the plugins are read again and compared, and only the loadouts
// of the skills that changed are touched. Subscribers are told when
// anything changed.
func (s *Service) Refresh(ctx context.Context, paths []string, why string) {
	s.change(why, len(paths), func() { s.cat.Refresh(ctx, paths) })
}

// RefreshStored updates the catalog after the stored skills of these
// names changed: only they are read again (catalog.RefreshStored).
func (s *Service) RefreshStored(ctx context.Context, why string, names ...string) {
	s.change(why, 0, func() { s.cat.RefreshStored(ctx, names...) })
}

// change runs one change to the catalog (the catalog runs them one at a
// time), logs it, and tells subscribers when it changed anything.
func (s *Service) change(why string, paths int, fn func()) {
	start := time.Now()
	gen := s.cat.Generation()
	fn()
	changed := s.cat.Generation() != gen
	s.log.Info("catalog refreshed", "why", why, "paths", paths, "changed", changed, "took", time.Since(start).Round(time.Microsecond))
	if changed {
		s.notify()
	}
}

// Subscribe returns a channel that receives (coalesced) after every reload,
// and a function to stop.
func (s *Service) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	s.subMu.Lock()
	s.subs[ch] = struct{}{}
	s.subMu.Unlock()
	return ch, func() {
		s.subMu.Lock()
		delete(s.subs, ch)
		s.subMu.Unlock()
	}
}

func (s *Service) notify() {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	s.gen++
	for ch := range s.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Error is what the service refuses with. Code is stable; transports map
// it to HTTP statuses and MCP errors.
type Error struct {
	Code     string             `json:"code"`
	Message  string             `json:"message"`
	Field    string             `json:"field,omitempty"`
	Path     string             `json:"path,omitempty"`
	Current  int                `json:"currentVersion,omitempty"`
	Problems []skill.Diagnostic `json:"problems,omitempty"`
	// Err is the cause of an internal error (a database's "disk is
	// full", say), for the log: Error includes it, Message and the JSON
	// never do.
	Err error `json:"-"`
}

// Error is Message, and the cause of an internal error after a colon: what
// a log line should show. Clients are shown Message.
func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Error codes.
const (
	CodeUnauthorized = "unauthorized" // no or unknown token
	CodeForbidden    = "forbidden"    // the token's scopes do not allow it
	CodeNotFound     = "not_found"
	CodeConflict     = "conflict" // a stale version
	CodeInvalid      = "invalid"
	CodeReadOnly     = "read_only" // folder and plugin skills
	CodeRefused      = "refused"   // a path refused by the path check
	CodeTooLarge     = "too_large"
	CodeNoStore      = "no_store"
	CodeInternal     = "internal"
)

// AsError turns any error into an *Error (unknown ones are internal).
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var se *store.Error
	if errors.As(err, &se) {
		code := CodeInternal
		switch se.Code {
		case store.NotFound:
			code = CodeNotFound
		case store.Conflict:
			code = CodeConflict
		case store.Invalid:
			code = CodeInvalid
		}
		msg := se.Message
		if msg == "" {
			msg = se.Error()
		}
		var cause error
		if code == CodeInternal {
			// The store's message names what failed ("store: commit"); the
			// cause says why, for the log.
			cause = se.Err
			if msg == "" || se.Message == "" {
				msg = "internal error"
			}
		}
		return &Error{Code: code, Message: msg, Field: se.Field, Path: se.Path, Current: se.Current, Problems: se.Problems, Err: cause}
	}
	var ce *skill.CheckError
	if errors.As(err, &ce) {
		e := &Error{Code: CodeInvalid, Message: ce.Error(), Problems: ce.Problems}
		if len(ce.Problems) > 0 {
			e.Field, e.Path = ce.Problems[0].Field, ce.Problems[0].Path
			if strings.HasPrefix(ce.Problems[0].Code, "path-") {
				e.Code = CodeRefused
			}
			if ce.Problems[0].Code == skill.CodeTooLarge || ce.Problems[0].Code == skill.CodeTooManyFiles {
				e.Code = CodeTooLarge
			}
		}
		return e
	}
	if se, ok := skill.AsServeError(err); ok {
		// A file of a folder skill that is not served: a link out of the
		// skill or a special file (refused), over the size cap
		// (too_large), or changed since the scan (conflict: the catalog's
		// view is stale until the skill is scanned again).
		code := CodeRefused
		switch se.Code {
		case skill.CodeTooLarge:
			code = CodeTooLarge
		case skill.CodeFolderChanged, skill.CodeFileChanged:
			code = CodeConflict
		}
		return &Error{Code: code, Message: se.Error(), Path: se.Path,
			Problems: []skill.Diagnostic{{Severity: skill.Error, Code: se.Code, Message: se.Error(), Path: se.Path}}}
	}
	// Anything else is internal: its text may name files or drivers, so
	// it goes to the log only.
	return &Error{Code: CodeInternal, Message: "internal error", Err: err}
}

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
