package service

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/store"
)

// The kill switch. Blocks live in the store (store.Blocker), so that every
// instance sharing it applies them: each follows the store's block feed
// (PostgreSQL NOTIFY; SQLite polled every 200 ms) and hands the whole set
// to the catalog (catalog.SetBlocks), which leaves the blocked skills out
// of every loadout. Every transport reads skills through loadouts, so
// none can forget a block.

// CodeBlocked (403): the skill is blocked by the kill switch.
const CodeBlocked = "blocked"

// blocker is the store's kill switch, or nil.
func (s *Service) blocker() store.Blocker {
	b, _ := s.opt.Server.(store.Blocker)
	if b == nil {
		b, _ = s.opt.Store.(store.Blocker)
	}
	return b
}

// Blocks lists the blocks in force (admin only).
func (s *Service) Blocks(ctx context.Context, p Principal) ([]store.Block, error) {
	if err := s.requireAdmin(p); err != nil {
		return nil, err
	}
	b := s.blocker()
	if b == nil {
		return []store.Block{}, nil
	}
	bs, err := b.Blocks(ctx)
	if err != nil {
		return nil, AsError(err)
	}
	if bs == nil {
		bs = []store.Block{}
	}
	return bs, nil
}

// Block adds a block (admin only), audited as "block", and applies it
// here at once; the other instances apply it from the store's feed.
func (s *Service) Block(ctx context.Context, p Principal, b store.Block, transport string) (store.Block, error) {
	if err := s.requireAdmin(p); err != nil {
		return store.Block{}, err
	}
	bl := s.blocker()
	if bl == nil {
		return store.Block{}, errorf(CodeNoStore, "blocks are kept in the store: serve with a store (\"store\" in the config, --db or LOADOUT_DB)")
	}
	b.ID, b.CreatedAt = "", time.Time{}
	b.Actor = p.Name
	if b.Actor == "" && p.Open {
		b.Actor = "(open)"
	}
	got, err := bl.AddBlock(ctx, b)
	if err != nil {
		return store.Block{}, AsError(err)
	}
	s.auditBlock(ctx, p, "block", got, transport)
	s.RefreshBlocks(ctx)
	return got, nil
}

// Unblock removes a block by its id, or every block of a skill by the
// skill's name (admin only), audited as "unblock" each, and applies it
// here at once. It returns the blocks removed: none for a skill no block
// names (it is not blocked, as asked); an unknown block id is not_found.
func (s *Service) Unblock(ctx context.Context, p Principal, idOrSkill, transport string) ([]store.Block, error) {
	if err := s.requireAdmin(p); err != nil {
		return nil, err
	}
	bl := s.blocker()
	if bl == nil {
		return nil, errorf(CodeNoStore, "blocks are kept in the store: serve with a store (\"store\" in the config, --db or LOADOUT_DB)")
	}
	all, err := bl.Blocks(ctx)
	if err != nil {
		return nil, AsError(err)
	}
	var ids []string
	for _, b := range all {
		if b.ID == idOrSkill {
			ids = []string{b.ID}
			break
		}
		if b.Skill == idOrSkill {
			ids = append(ids, b.ID)
		}
	}
	if len(ids) == 0 && !IsBlockID(idOrSkill) {
		return []store.Block{}, nil // no block names that skill: it is not blocked
	}
	if len(ids) == 0 {
		return nil, &Error{Code: CodeNotFound, Field: "id", Message: fmt.Sprintf("no block has the id %q, and no block names a skill %q: list them with GET /v1/blocks or loadout blocks", idOrSkill, idOrSkill)}
	}
	var out []store.Block
	for _, id := range ids {
		got, err := bl.RemoveBlock(ctx, id)
		if store.ErrorCode(err) == store.NotFound && len(ids) > 1 {
			continue // removed meanwhile by someone else
		}
		if err != nil {
			s.RefreshBlocks(ctx)
			return out, AsError(err)
		}
		s.auditBlock(ctx, p, "unblock", got, transport)
		out = append(out, got)
	}
	s.RefreshBlocks(ctx)
	return out, nil
}

func (s *Service) auditBlock(ctx context.Context, p Principal, action string, b store.Block, transport string) {
	if err := s.audit(ctx, p, store.AuditRecord{Action: action, Target: b.Target(), Detail: b.Reason, Transport: transport, Role: p.Role()}); err != nil {
		s.log.Error("audit record not kept", "action", action, "target", b.Target(), "err", err)
	}
}

// RefreshBlocks reads the blocks from the store and applies them to the
// catalog; subscribers are told when a listing changed. A failed read
// keeps the blocks in force.
func (s *Service) RefreshBlocks(ctx context.Context) {
	bl := s.blocker()
	if bl == nil {
		return
	}
	// One at a time, each reading and applying: a refresh that read the
	// blocks before a change can never apply them after one that read
	// them since.
	s.blocksMu.Lock()
	defer s.blocksMu.Unlock()
	bs, err := bl.Blocks(ctx)
	if err != nil {
		s.log.Error("cannot read the blocks; the ones in force are kept", "err", err)
		return
	}
	cb := make([]catalog.Block, len(bs))
	for i, b := range bs {
		cb[i] = catalog.Block{ID: b.ID, Skill: b.Skill, Version: b.Version, Digest: b.Digest, Source: b.Source, Reason: b.Reason}
	}
	changed := false
	s.change("blocks changed", 0, func() { changed = s.cat.SetBlocks(ctx, cb) })
	if changed {
		// A kept listing plan would keep a blocked skill's text in the
		// prompt's prefix (a removal is told at its end): plan afresh, so
		// that the skill leaves every listing, and an unblock brings back
		// the listing as a fresh plan made it.
		s.basesMu.Lock()
		s.bases, s.basesBytes = nil, 0
		s.basesMu.Unlock()
	}
}

// followBlocks applies the blocks at start, then after every change to
// them by any instance, until stop closes.
func (s *Service) followBlocks(stop <-chan struct{}) {
	bl := s.blocker()
	if bl == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := bl.BlockChanges(ctx)
	if err != nil {
		s.log.Warn("blocks made by other instances take effect here only at restart", "err", err)
	}
	// Subscribed first: a block made while they are read is not missed.
	s.RefreshBlocks(ctx)
	go func() {
		defer cancel()
		for {
			select {
			case <-stop:
				return
			case _, ok := <-ch:
				if !ok {
					return
				}
				s.RefreshBlocks(ctx)
			}
		}
	}()
}

// BlockedError is the error of a transport that refuses a blocked skill
// it serves outside load and read (an export, a well-known archive).
func BlockedError(name string, b catalog.Block) *Error {
	return &Error{Code: CodeBlocked, Field: "name", Message: strings.TrimSuffix(catalog.BlockedText(name, b), " Do not use it; tell the user.")}
}

// Blocked returns the block that stops the skill called name in the
// loadout l: the one it serves (version 0), or a stored version of it
// (version, with that version's digest), for the routes that read stored
// versions beside the loadout (an export).
func (s *Service) Blocked(l *catalog.Loadout, name string, version int, digest string) (catalog.Block, bool) {
	if version == 0 {
		b, ok := l.BlockedName(name)
		return b.Block, ok
	}
	for _, b := range s.cat.Blocks() {
		switch {
		case b.Source == "store",
			b.Skill == name && (b.Version == 0 && b.Digest == "" || b.Version == version || b.Digest != "" && b.Digest == digest):
			return b, true
		}
	}
	return catalog.Block{}, false
}

// MayBlock reports whether any block could stop a stored version of the
// skill called name (one names it, or the store).
func (s *Service) MayBlock(name string) bool {
	for _, b := range s.cat.Blocks() {
		if b.Skill == name || b.Source == "store" {
			return true
		}
	}
	return false
}

// IsBlockID reports whether s has the form of a block's id ("b" and 11
// lower-case hex digits), which no block-less skill name is taken for.
func IsBlockID(s string) bool {
	if len(s) != 12 || s[0] != 'b' {
		return false
	}
	for _, c := range s[1:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
