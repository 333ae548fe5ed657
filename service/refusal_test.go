package service

import (
	"context"
	"testing"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/store"
)

// TestRefusalCodeKept: a refused read's receipt keeps the refusal's code
// (the path check's), on SQLite and PostgreSQL.
func TestRefusalCodeKept(t *testing.T) {
	for engine, fresh := range engines(t) {
		t.Run(engine, func(t *testing.T) {
			st := fresh(t)(t)
			s := storeService(t, st, Options{})
			ctx := context.Background()
			res, err := s.ReadFile(ctx, admin, "ops", "deploy", "../../etc/passwd", catalog.ReadOptions{}, TransportMCPHTTP)
			if err != nil || res.Status != catalog.StatusRefused {
				t.Fatalf("read: %+v %v", res, err)
			}
			rs, err := s.Receipts(ctx, admin, store.ReceiptQuery{Skill: "deploy"})
			if err != nil || len(rs) != 1 {
				t.Fatalf("receipts: %+v %v", rs, err)
			}
			if r := rs[0]; r.Outcome != "refused" || r.Code != "path-dotdot" || r.Path != "../../etc/passwd" || r.Transport != TransportMCPHTTP {
				t.Errorf("receipt: %+v", r)
			}
		})
	}
}
