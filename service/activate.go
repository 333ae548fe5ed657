package service

import (
	"context"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

// Transports, as receipts name them.
const (
	TransportHTTP     = "http"
	TransportMCPHTTP  = "mcp-http"
	TransportMCPStdio = "mcp-stdio"
)

// Load activates a skill for an agent and records a receipt.
func (s *Service) Load(ctx context.Context, p Principal, agentID, name, transport string) (catalog.LoadResult, error) {
	l, err := s.Loadout(p, agentID)
	if err != nil {
		return catalog.LoadResult{}, err
	}
	res := l.Load(name)
	s.record(p, l, res.Skill, name, "load", "", res.Status, "", transport)
	return res, nil
}

// ReadFile reads a file of a skill for an agent and records a receipt.
func (s *Service) ReadFile(ctx context.Context, p Principal, agentID, name, path string, opt catalog.ReadOptions, transport string) (catalog.FileResult, error) {
	l, err := s.Loadout(p, agentID)
	if err != nil {
		return catalog.FileResult{}, err
	}
	res := l.ReadFile(name, path, opt)
	s.record(p, l, res.Entry, name, "read", res.Path, res.Status, res.Code, transport)
	return res, nil
}

// Search ranks an agent's skills for a query; among skills the query
// matches about as well, the ones the agent used more come first (the
// usage counts the listing ranks by, as of the last recompute).
func (s *Service) Search(ctx context.Context, p Principal, agentID, query string, limit int) ([]catalog.Hit, error) {
	if err := catalog.CheckQuery(query); err != nil {
		return nil, &Error{Code: CodeInvalid, Field: "query", Message: err.Error()}
	}
	l, err := s.Loadout(p, agentID)
	if err != nil {
		return nil, err
	}
	return s.SearchIn(l, query, limit), nil
}

// SearchIn is Search in a loadout the caller has already read (and so
// checked the principal's access to) and a query it has checked: a
// transport that keeps answers by loadout reads the loadout first.
func (s *Service) SearchIn(l *catalog.Loadout, query string, limit int) []catalog.Hit {
	return l.SearchWith(query, limit, catalog.SearchOptions{Usage: s.UsageCounts(l.Spec.AgentID)})
}

// RecordRefusal keeps the receipt of a load or read that a transport
// refused before asking the service (MCP refuses a hidden skill to the
// model's tools, for one), with outcome "refused" and the refusal's code,
// so the receipts show every refusal whoever made it.
func (s *Service) RecordRefusal(p Principal, l *catalog.Loadout, sk *skill.Skill, name, action, path, code, transport string) {
	s.record(p, l, sk, name, action, path, catalog.StatusRefused, code, transport)
}

// record keeps a receipt of a load or read; code is the refusal's code
// (FileResult.Code) when it was refused or failed. The receipt log makes
// its text safe (see ReceiptText).
func (s *Service) record(p Principal, l *catalog.Loadout, sk *skill.Skill, name, action, path, outcome, code, transport string) {
	r := store.Receipt{Time: time.Now().UTC(), Agent: l.Spec.AgentID, Skill: name, Action: action, Path: path,
		Transport: transport, Outcome: outcome, Token: p.TokenID, Code: code}
	if sk != nil {
		o := sk.OriginValue()
		r.Source, r.Plugin, r.Trust = o.Kind, o.Plugin, o.Trust
		r.Origin = originText(o)
		r.Digest = sk.ContentDigest()
	}
	s.rcpt.add(r)
	if f := s.onAct.Load(); f != nil {
		(*f)(Activation{Agent: r.Agent, Skill: name, Action: action, Outcome: outcome, Found: sk != nil})
	}
}

// originText is a receipt's Origin: a remote skill's source, ref,
// revision and folder, or a plugin's provenance; "" for folder and stored
// skills.
func originText(o skill.Origin) string {
	if o.Kind == "plugin" {
		return o.Provenance
	}
	return o.RemoteText()
}

// Receipts lists recent receipts (an unlimited viewer or higher). Receipts not yet written
// are flushed first, so a receipt is visible as soon as its request ends.
// The store keeps raw receipts within Options.Receipts; Usage counts
// further back.
func (s *Service) Receipts(ctx context.Context, p Principal, q store.ReceiptQuery) ([]store.Receipt, error) {
	if err := s.RequireRole(ctx, p, RoleViewer, ""); err != nil {
		return nil, err
	}
	// A failed flush is logged and its receipts kept pending: the store
	// may still answer what it holds.
	s.rcpt.flush()
	if s.opt.Server == nil {
		return s.rcpt.memory(q), nil
	}
	rs, err := s.opt.Server.Receipts(ctx, q)
	return rs, AsErrorOrNil(err)
}

// Usage counts receipts per agent, skill, action and outcome (an unlimited viewer
// only), from the store's daily counts, which are kept longer than raw
// receipts (see store.Retention). Receipts not yet written are flushed
// first. Without a store it counts the receipts kept in memory.
func (s *Service) Usage(ctx context.Context, p Principal, q store.UsageQuery) ([]store.Usage, error) {
	if err := s.RequireRole(ctx, p, RoleViewer, ""); err != nil {
		return nil, err
	}
	s.rcpt.flush() // as in Receipts
	if s.opt.Server == nil {
		return s.rcpt.usage(q), nil
	}
	us, err := s.opt.Server.Usage(ctx, q)
	return us, AsErrorOrNil(err)
}

// AsErrorOrNil is AsError that keeps nil as a nil error interface.
func AsErrorOrNil(err error) error {
	if err == nil {
		return nil
	}
	return AsError(err)
}
