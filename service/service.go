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
	"time"

	"github.com/loadout/loadout/catalog"
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
}

// Service serves one catalog to many agents over any transport. It is safe
// for concurrent use.
type Service struct {
	cat  *catalog.Catalog
	opt  Options
	log  *slog.Logger
	rcpt *receiptLog

	reloadMu sync.Mutex // one reload at a time
	subMu    sync.Mutex
	subs     map[chan struct{}]struct{}
	gen      uint64 // catalog generation, bumped on every reload
}

// New wraps a catalog.
func New(cat *catalog.Catalog, opt Options) *Service {
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	s := &Service{cat: cat, opt: opt, log: opt.Logger, subs: map[chan struct{}]struct{}{}}
	s.rcpt = newReceiptLog(opt.Server, opt.Logger)
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

// Close flushes pending receipts.
func (s *Service) Close() error { return s.rcpt.close() }

// Catalog returns the catalog being served.
func (s *Service) Catalog() *catalog.Catalog { return s.cat }

// Store returns the store, or nil.
func (s *Service) Store() store.Store { return s.opt.Store }

// Generation counts reloads; caches keyed by it stay correct.
func (s *Service) Generation() uint64 {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	return s.gen
}

// Reload rescans every source and tells subscribers the catalog changed.
func (s *Service) Reload(ctx context.Context, why string) {
	s.reloadMu.Lock()
	start := time.Now()
	s.cat.Reload(ctx)
	s.reloadMu.Unlock()
	s.log.Info("catalog reloaded", "why", why, "took", time.Since(start).Round(time.Microsecond))
	s.notify()
}

// Refresh updates the catalog after the files at paths changed (nil: only
// the store and plugins changed, as after a write or a change by another
// instance), reading only what changed, and tells subscribers.
func (s *Service) Refresh(ctx context.Context, paths []string, why string) {
	s.reloadMu.Lock()
	start := time.Now()
	s.cat.Refresh(ctx, paths)
	s.reloadMu.Unlock()
	s.log.Info("catalog refreshed", "why", why, "paths", len(paths), "took", time.Since(start).Round(time.Microsecond))
	s.notify()
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
}

func (e *Error) Error() string { return e.Message }

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
		return &Error{Code: code, Message: msg, Field: se.Field, Path: se.Path, Current: se.Current, Problems: se.Problems}
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
	return &Error{Code: CodeInternal, Message: err.Error()}
}

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
