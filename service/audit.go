package service

import (
	"context"
	"strings"
	"time"

	"github.com/loadout/loadout/store"
)

// Caller is where a request came from, for the audit trail: the client's
// address and the transport (http, ui, mcp-http, mcp-stdio, cli). A
// transport answers ctx.Value(CallerKey{}) with a Caller (WithCaller, or
// its own context, as httpapi's request state does).
type Caller struct {
	Addr      string
	Transport string
}

// CallerKey is the context key of the request's Caller.
type CallerKey struct{}

// WithCaller returns ctx carrying c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, CallerKey{}, c)
}

// CallerFrom returns the Caller in ctx; without one the zero Caller, and
// the audit trail records transport "server" (a write the server made on
// its own: a scheduled sync, a prune).
func CallerFrom(ctx context.Context) Caller {
	switch c := ctx.Value(CallerKey{}).(type) {
	case Caller:
		return c
	case *Caller:
		if c != nil {
			return *c
		}
	}
	return Caller{}
}

// The bounds of an audit record's texts (AuditText).
const (
	MaxAuditName   = 256
	MaxAuditDetail = 2048
)

// AuditText is ReceiptText for audit records: every text of a record goes
// through it before the record is hashed and kept, so a name with control
// or bidirectional characters is stored escaped and shown escaped
// everywhere, and fits its bound.
func AuditText(s string, max int) string { return ReceiptText(s, max) }

// auditRecord completes r for p and ctx: the actor, the role, the client
// and transport, every text escaped and bounded.
func auditRecord(ctx context.Context, p Principal, r store.AuditRecord) store.AuditRecord {
	if r.ActorToken == "" {
		r.ActorToken = p.TokenID
	}
	if r.Actor == "" {
		r.Actor = p.Name
		if r.Actor == "" && p.Open {
			r.Actor = "(no token)"
		} else if r.Actor == "" && p.TokenID == "" {
			// No principal: the server acting on its own (a reload on a
			// config file change or SIGHUP).
			r.Actor = "loadout"
		}
	}
	if r.Role == "" {
		r.Role = p.Role()
	}
	c := CallerFrom(ctx)
	if r.Client == "" {
		r.Client = c.Addr
	}
	if r.Transport == "" {
		r.Transport = c.Transport
		if r.Transport == "" {
			r.Transport = "server"
		}
	}
	n := MaxAuditName
	r.ActorToken, r.Actor, r.Role = AuditText(r.ActorToken, n), AuditText(r.Actor, n), AuditText(r.Role, n)
	r.Action, r.Target = AuditText(r.Action, n), AuditText(r.Target, MaxReceiptPath)
	r.Before, r.After = AuditText(r.Before, n), AuditText(r.After, n)
	r.Client, r.Transport = AuditText(r.Client, n), AuditText(r.Transport, n)
	r.Detail = AuditText(r.Detail, MaxAuditDetail)
	return r
}

// audit appends one record for a write to the store's audit trail, when
// the store keeps one. The actor comes from the principal, the client and
// transport from ctx (Caller). It is for writes that are not one store
// transaction (tokens, syncs, reloads, sign-ins): it runs after the write
// succeeded. A failed append is logged and returned; the write stands.
func (s *Service) audit(ctx context.Context, p Principal, r store.AuditRecord) error {
	a, ok := s.opt.Server.(store.Auditor)
	if !ok || a == nil {
		return nil
	}
	if _, err := a.AppendAudit(ctx, auditRecord(ctx, p, r)); err != nil {
		s.log.Error("audit: a record could not be appended", "action", r.Action, "target", r.Target, "err", err)
		return AsError(err)
	}
	return nil
}

// audited returns ctx carrying r (store.WithAudit), so the store writes
// the record in the same transaction as the write; done, called with the
// write's error, appends it afterwards if the store did not (a store
// without a trail, a write that made no transaction). A failed write
// records nothing.
func (s *Service) audited(ctx context.Context, p Principal, r store.AuditRecord) (context.Context, func(error)) {
	if _, ok := s.opt.Server.(store.Auditor); !ok {
		return ctx, func(error) {}
	}
	slot := &store.AuditSlot{Record: auditRecord(ctx, p, r)}
	return store.WithAudit(ctx, slot), func(err error) {
		if err == nil && !slot.Written {
			s.audit(ctx, p, slot.Record)
		}
	}
}

func (s *Service) auditLog(p Principal) (store.AuditLog, error) {
	if err := s.requireAdmin(p); err != nil {
		return nil, err
	}
	a, ok := s.opt.Server.(store.AuditLog)
	if !ok || a == nil {
		return nil, errorf(CodeNoStore, "this server keeps no audit trail: it needs a database (--db or \"store\" in the config)")
	}
	return a, nil
}

// Audit lists audit records, newest first (admin only).
func (s *Service) Audit(ctx context.Context, p Principal, q store.AuditQuery) ([]store.AuditRecord, error) {
	a, err := s.auditLog(p)
	if err != nil {
		return nil, err
	}
	rs, err := a.ListAudit(ctx, q)
	return rs, AsErrorOrNil(err)
}

// VerifyAudit checks the whole chain (admin only).
func (s *Service) VerifyAudit(ctx context.Context, p Principal) (store.AuditVerify, error) {
	a, err := s.auditLog(p)
	if err != nil {
		return store.AuditVerify{}, err
	}
	v, err := a.VerifyAudit(ctx)
	return v, AsErrorOrNil(err)
}

// ExportAudit calls fn with every record in seq order (admin only).
func (s *Service) ExportAudit(ctx context.Context, p Principal, fn func(store.AuditRecord) error) error {
	a, err := s.auditLog(p)
	if err != nil {
		return err
	}
	return AsErrorOrNil(a.ExportAudit(ctx, fn))
}

// PruneAudit deletes the records older than keepDays days (admin only;
// keepDays <= 0 keeps everything). The store appends a record naming the
// pruned range and its last hash, so the chain still verifies.
func (s *Service) PruneAudit(ctx context.Context, p Principal, keepDays int) (store.AuditPrune, error) {
	if keepDays <= 0 {
		return store.AuditPrune{}, nil
	}
	a, err := s.auditLog(p)
	if err != nil {
		return store.AuditPrune{}, err
	}
	res, err := a.PruneAudit(ctx, time.Now().Add(-time.Duration(keepDays)*24*time.Hour))
	return res, AsErrorOrNil(err)
}

// skillTarget is the audit target of a skill.
func skillTarget(name string) string { return "skill:" + name }

// listText joins names for a record's detail.
func listText(names []string) string { return strings.Join(names, ", ") }

// plural is one or many, by n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
