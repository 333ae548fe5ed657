package service

import (
	"context"

	"github.com/loadout/loadout/store"
)

// audit appends one record for a write to the store's audit trail, when
// the store keeps one. The actor comes from the principal.
func (s *Service) audit(ctx context.Context, p Principal, r store.AuditRecord) error {
	a, ok := s.opt.Server.(store.Auditor)
	if !ok || a == nil {
		return nil
	}
	if r.ActorToken == "" {
		r.ActorToken = p.TokenID
	}
	if r.Actor == "" {
		r.Actor = p.Name
	}
	_, err := a.AppendAudit(ctx, r)
	return err
}
