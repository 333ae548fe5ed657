package service

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/store/sqlstore"
)

// auditingStore keeps the audit records Service.audit appends.
type auditingStore struct {
	*sqlstore.Store
	mu   sync.Mutex
	recs []store.AuditRecord
}

func (a *auditingStore) AppendAudit(_ context.Context, r store.AuditRecord) (store.AuditRecord, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r.Seq = int64(len(a.recs) + 1)
	a.recs = append(a.recs, r)
	return r, nil
}

// TestBlockService: only an admin blocks and unblocks; each is audited
// with its action, target and reason; a block refuses the skill's load
// (a receipt with outcome blocked) at once on this instance; a version
// block stops that stored version only, so a new version is served; an
// unblock by name removes every block of the skill, and an unknown block
// id is not_found.
func TestBlockService(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "loadout.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	as := &auditingStore{Store: st}
	cat, err := catalog.New(ctx, []catalog.AgentSpec{{AgentID: "dev", Skills: []catalog.SourceSpec{{Store: true}}}},
		catalog.Options{Store: store.NewProvider(st)})
	if err != nil {
		t.Fatal(err)
	}
	s := New(cat, Options{Store: as, Server: as})
	t.Cleanup(func() { s.Close() })
	admin := Principal{TokenID: "t1", Name: "ops-alice", Scopes: []string{"admin"}}
	agent := Principal{TokenID: "t2", Name: "bot", Scopes: []string{"agent:dev"}}
	name := benchName(3)
	if _, err := s.Put(ctx, admin, benchBundle(3, 0), 0, "api", ""); err != nil {
		t.Fatal(err)
	}

	if _, err := s.Block(ctx, agent, store.Block{Skill: name, Reason: "no"}, TransportHTTP); AsError(err).Code != CodeForbidden {
		t.Fatalf("an agent token blocking: %v", err)
	}
	if bs, _ := st.Blocks(ctx); len(bs) != 0 || len(as.recs) != 0 {
		t.Fatalf("a refused block wrote %d blocks, %d audit records", len(bs), len(as.recs))
	}
	if _, err := s.Unblock(ctx, agent, name, TransportHTTP); AsError(err).Code != CodeForbidden {
		t.Fatalf("an agent token unblocking: %v", err)
	}

	b, err := s.Block(ctx, admin, store.Block{Skill: name, Version: 1, Reason: "v1 leaks"}, TransportHTTP)
	if err != nil {
		t.Fatal(err)
	}
	if b.Actor != "ops-alice" {
		t.Errorf("the block's actor is %q, want the token's name", b.Actor)
	}
	res, err := s.Load(ctx, agent, "dev", name, TransportHTTP)
	if err != nil || res.Status != catalog.StatusBlocked || !strings.Contains(res.Text, "v1 leaks") {
		t.Fatalf("a load right after the block: %+v %v", res.Status, err)
	}
	rs, err := s.Receipts(ctx, admin, store.ReceiptQuery{Skill: name})
	if err != nil || len(rs) != 1 || rs[0].Outcome != "blocked" || rs[0].Digest == "" {
		t.Errorf("the blocked load's receipt: %+v %v", rs, err)
	}
	// A new version is not blocked (the patch of the loadout must notice
	// the name was blocked).
	if _, err := s.Put(ctx, admin, benchBundle(3, 1), -1, "api", ""); err != nil {
		t.Fatal(err)
	}
	if res, _ := s.Load(ctx, agent, "dev", name, TransportHTTP); res.Status != catalog.StatusOK {
		t.Errorf("version 2 with version 1 blocked: %s", res.Status)
	}
	if _, err := s.Block(ctx, admin, store.Block{Skill: name, Version: 2, Reason: "v2 too"}, TransportHTTP); err != nil {
		t.Fatal(err)
	}
	if res, _ := s.Load(ctx, agent, "dev", name, TransportHTTP); res.Status != catalog.StatusBlocked {
		t.Errorf("version 2 blocked: %s", res.Status)
	}

	// A save of a skill blocked by name, or not yet existing, stays
	// blocked (the patch of the loadout must see the block).
	if _, err := s.Block(ctx, admin, store.Block{Skill: benchName(5), Reason: "before it exists"}, TransportHTTP); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, admin, benchBundle(5, 0), 0, "api", ""); err != nil {
		t.Fatal(err)
	}
	if res, _ := s.Load(ctx, agent, "dev", benchName(5), TransportHTTP); res.Status != catalog.StatusBlocked {
		t.Errorf("a skill blocked before it was saved: %s", res.Status)
	}
	if _, err := s.Put(ctx, admin, benchBundle(5, 1), -1, "api", ""); err != nil {
		t.Fatal(err)
	}
	if res, _ := s.Load(ctx, agent, "dev", benchName(5), TransportHTTP); res.Status != catalog.StatusBlocked {
		t.Errorf("a blocked skill saved again: %s", res.Status)
	}
	if _, err := s.Unblock(ctx, admin, benchName(5), TransportHTTP); err != nil {
		t.Fatal(err)
	}
	as.mu.Lock()
	as.recs = as.recs[:2] // the records of that block and unblock are not checked below
	as.mu.Unlock()

	if _, err := s.Unblock(ctx, admin, "b0123456789a", TransportHTTP); AsError(err).Code != CodeNotFound {
		t.Errorf("an unknown block id: %v", err)
	}
	if got, err := s.Unblock(ctx, admin, "never-blocked", TransportHTTP); err != nil || len(got) != 0 {
		t.Errorf("a skill no block names: %v %v", got, err)
	}
	got, err := s.Unblock(ctx, admin, name, "ui")
	if err != nil || len(got) != 2 {
		t.Fatalf("unblock by name: %v %v", got, err)
	}
	if res, _ := s.Load(ctx, agent, "dev", name, TransportHTTP); res.Status != catalog.StatusOK {
		t.Errorf("after the unblock: %s", res.Status)
	}

	want := []store.AuditRecord{
		{Action: "block", Target: "skill:" + name + "@v1", Detail: "v1 leaks", Transport: TransportHTTP},
		{Action: "block", Target: "skill:" + name + "@v2", Detail: "v2 too", Transport: TransportHTTP},
		{Action: "unblock", Target: "skill:" + name + "@v1", Detail: "v1 leaks", Transport: "ui"},
		{Action: "unblock", Target: "skill:" + name + "@v2", Detail: "v2 too", Transport: "ui"},
	}
	if len(as.recs) != len(want) {
		t.Fatalf("%d audit records, want %d: %+v", len(as.recs), len(want), as.recs)
	}
	for i, w := range want {
		r := as.recs[i]
		if r.Action != w.Action || r.Target != w.Target || r.Detail != w.Detail || r.Transport != w.Transport || r.Actor != "ops-alice" || r.ActorToken != "t1" {
			t.Errorf("audit record %d: %+v, want %+v by ops-alice (t1)", i, r, w)
		}
	}
}
