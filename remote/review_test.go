package remote

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
)

func reviewFixture(t *testing.T) *fixture {
	fx := newFixture(t)
	fx.opt.Review = true
	return fx
}

// TestReviewQueuesEveryMove: under review no sync moves a pin, the first
// one included; approving moves it to exactly what was reviewed.
func TestReviewQueuesEveryMove(t *testing.T) {
	ctx := context.Background()
	fx := reviewFixture(t)
	fx.revision("aaa111", map[string]string{"pdf": "v1"})
	m := fx.manager()
	id := m.Specs()[0].ID

	ch := m.Sync(ctx)[0]
	if ch.Err != nil || ch.Moved || !ch.Pending || !slices.Equal(ch.Added, []string{"pdf"}) {
		t.Fatalf("first sync under review: %+v", ch)
	}
	if !strings.Contains(ch.Summary(), "awaits review") || codes(ch.Diagnostics())[0] != CodePending {
		t.Errorf("summary %q, diagnostics %v", ch.Summary(), ch.Diagnostics())
	}
	if m.Pin(id) != nil {
		t.Fatal("a pin was written under review")
	}
	if sk, _ := m.Skills(id); len(sk) != 0 {
		t.Fatalf("served before approval: %v", names(sk))
	}
	// Syncing again finds the same change: queued once, as recorded.
	l1, _ := os.ReadFile(fx.opt.LockPath)
	if ch := m.Sync(ctx)[0]; !ch.Pending || ch.Err != nil {
		t.Fatalf("second sync: %+v", ch)
	}
	if l2, _ := os.ReadFile(fx.opt.LockPath); string(l1) != string(l2) {
		t.Errorf("the same change was queued again:\n%s\n%s", l1, l2)
	}

	if ch := m.Approve(ctx, id, "zzz999"); ch.Err == nil || CodeOf(ch.Err) != CodeConflict {
		t.Fatalf("approving another revision than the pending one: %+v", ch)
	}
	ch = m.Approve(ctx, id, "aaa111")
	if ch.Err != nil || !ch.Moved || ch.To != "aaa111" {
		t.Fatalf("approve: %+v", ch)
	}
	if p := m.Pin(id); p == nil || p.Revision != "aaa111" {
		t.Fatalf("pin after approval: %+v", p)
	}
	if sk, _ := m.Skills(id); !slices.Equal(names(sk), []string{"pdf"}) {
		t.Fatalf("served after approval: %v", names(sk))
	}
	if l, _ := ReadLock(fx.opt.LockPath); len(l.Pending) != 0 {
		t.Errorf("pending left after approval: %+v", l.Pending)
	}
	if ch := m.Approve(ctx, id, ""); CodeOf(ch.Err) != CodeNoPending {
		t.Errorf("approving with nothing pending: %+v", ch)
	}

	// The branch moves: the old snapshot is served until approval; Check
	// reports the change as pending; the proposed folder is kept.
	fx.revision("bbb222", map[string]string{"pdf": "v2", "deploy": "v1"})
	if ch := m.Sync(ctx)[0]; !ch.Pending || !slices.Equal(ch.Changed, []string{"pdf"}) || !slices.Equal(ch.Added, []string{"deploy"}) {
		t.Fatalf("move under review: %+v", ch)
	}
	if sk, _ := m.Skills(id); !slices.Equal(names(sk), []string{"pdf"}) {
		t.Fatalf("served while pending: %v", names(sk))
	}
	if ch := m.Check(ctx)[0]; !ch.Pending || ch.Moved {
		t.Errorf("check while pending: %+v", ch)
	}
	pcs, err := m.PendingChanges(ctx)
	if err != nil || len(pcs) != 1 {
		t.Fatalf("pending: %v %+v", err, pcs)
	}
	pc := pcs[0]
	if pc.Base != "aaa111" || pc.To.Revision != "bbb222" || pc.Proposed["deploy"] == nil || pc.Served["pdf"] == nil || pc.Served["deploy"] != nil {
		t.Fatalf("pending change: %+v", pc)
	}
	if b, err := pc.Proposed["pdf"].Bundle(); err != nil || !strings.Contains(string(b.Content), "v2") {
		t.Errorf("proposed pdf: %v", err)
	}
	if b, err := pc.Served["pdf"].Bundle(); err != nil || !strings.Contains(string(b.Content), "v1") {
		t.Errorf("served pdf: %v", err)
	}
	if ch := m.Approve(ctx, id, "bbb222"); ch.Err != nil || !ch.Moved || ch.Digests["deploy"] == "" {
		t.Fatalf("second approval: %+v", ch)
	}
	if sk, _ := m.Skills(id); !slices.Equal(names(sk), []string{"deploy", "pdf"}) {
		t.Fatalf("served after the second approval: %v", names(sk))
	}
}

// TestReviewReject: a rejected change keeps the pin, is not queued again
// for the same snapshot, and a newer upstream is.
func TestReviewReject(t *testing.T) {
	ctx := context.Background()
	fx := reviewFixture(t)
	fx.opt.Review = false
	fx.revision("aaa111", map[string]string{"pdf": "v1"})
	m := fx.manager()
	id := m.Specs()[0].ID
	if ch := m.Sync(ctx)[0]; ch.Err != nil || !ch.Moved {
		t.Fatalf("first sync without review: %+v", ch)
	}
	fx.opt.Review = true
	m = fx.manager()
	m.Open(ctx, false)
	fx.revision("bbb222", map[string]string{"pdf": "v2"})
	if ch := m.Sync(ctx)[0]; !ch.Pending {
		t.Fatalf("sync: %+v", ch)
	}
	if err := m.Reject(ctx, id, "ccc", "no"); CodeOf(err) != CodeConflict {
		t.Errorf("rejecting another revision: %v", err)
	}
	if err := m.Reject(ctx, id, "bbb222", "breaks the release flow"); err != nil {
		t.Fatal(err)
	}
	if err := m.Reject(ctx, id, "", "again"); CodeOf(err) != CodeNoPending {
		t.Errorf("rejecting twice: %v", err)
	}
	if ch := m.Approve(ctx, id, ""); CodeOf(ch.Err) != CodeNoPending {
		t.Errorf("approving a rejected change: %+v", ch)
	}
	if p := m.Pin(id); p.Revision != "aaa111" {
		t.Fatalf("pin moved on reject: %+v", p)
	}
	ch := m.Sync(ctx)[0]
	if ch.Pending || !ch.Rejected || ch.Moved || !strings.Contains(ch.Summary(), "rejected") {
		t.Fatalf("the rejected snapshot synced again: %+v (%s)", ch, ch.Summary())
	}
	l, _ := ReadLock(fx.opt.LockPath)
	if p := l.PendingFor(id); p == nil || p.Rejected == nil || p.Note != "breaks the release flow" {
		t.Fatalf("rejection not kept: %+v", p)
	}
	// A rejected change's folder is not kept.
	if c := m.candidates(id, "bbb222"); len(c) != 0 {
		t.Errorf("the rejected snapshot's folders are kept: %v", c)
	}
	fx.revision("ccc333", map[string]string{"pdf": "v3"})
	if ch := m.Sync(ctx)[0]; !ch.Pending || ch.To != "ccc333" {
		t.Fatalf("a newer upstream after a rejection: %+v", ch)
	}
}

// TestReviewStaleBase: approving a change made from a pin that has moved
// since (another process synced without review, say) is refused, and the
// change dropped; so is one whose snapshot no longer has the reviewed
// digest.
func TestReviewStaleBase(t *testing.T) {
	ctx := context.Background()
	fx := reviewFixture(t)
	fx.opt.Review = false
	fx.revision("aaa111", map[string]string{"pdf": "v1"})
	plain := fx.manager()
	id := plain.Specs()[0].ID
	plain.Sync(ctx)
	fx.opt.Review = true
	m := fx.manager()
	m.Open(ctx, false)
	fx.revision("bbb222", map[string]string{"pdf": "v2"})
	if ch := m.Sync(ctx)[0]; !ch.Pending {
		t.Fatalf("sync: %+v", ch)
	}
	fx.revision("ccc333", map[string]string{"pdf": "v3"})
	if ch := plain.Sync(ctx)[0]; !ch.Moved {
		t.Fatalf("the plain sync: %+v", ch)
	}
	ch := m.Approve(ctx, id, "bbb222")
	if CodeOf(ch.Err) != CodeConflict || !strings.Contains(ch.Err.Error(), "pin moved") {
		t.Fatalf("approving over a moved pin: %+v", ch)
	}
	if l, _ := ReadLock(fx.opt.LockPath); len(l.Pending) != 0 || l.Get(id).Revision != "ccc333" {
		t.Fatalf("after the refusal: %+v", l)
	}

	// The reviewed revision's content changes upstream and its cached
	// folder is gone: approving fetches it again and refuses it.
	fx.revision("ddd444", map[string]string{"pdf": "v4"})
	if ch := m.Sync(ctx)[0]; !ch.Pending {
		t.Fatalf("sync: %+v", ch)
	}
	for _, c := range m.candidates(id, "ddd444") {
		testutil.Must(t, os.RemoveAll(filepath.Join(m.sourceDir(id), c)))
	}
	fx.revision("ddd444", map[string]string{"pdf": "v4, rewritten"})
	ch = m.Approve(ctx, id, "ddd444")
	if CodeOf(ch.Err) != CodeConflict || !strings.Contains(ch.Err.Error(), "not the reviewed") {
		t.Fatalf("approving content that changed: %+v", ch)
	}
	if p := m.Pin(id); p.Revision != "ccc333" {
		t.Errorf("pin after a refused approval: %+v", p)
	}
}

// TestReviewLockRefusesTwoPending: a hand-edited lock with two pending
// changes of one source is refused, naming the entry.
func TestReviewLockRefusesTwoPending(t *testing.T) {
	path := filepath.Join(t.TempDir(), LockName)
	one := `{"to": {"id": "a", "kind": "git", "url": "u", "revision": "r", "digest": "d", "skills": {}, "synced": "2026-01-01T00:00:00Z"}, "recorded": "2026-01-01T00:00:00Z"}`
	write := func(pending string) error {
		if err := os.WriteFile(path, []byte(`{"lockVersion": 1, "sources": [], "pending": [`+pending+`]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadLock(path)
		return err
	}
	if err := write(one); err != nil {
		t.Fatalf("one pending change: %v", err)
	}
	if err := write(one + "," + one); err == nil || !strings.Contains(err.Error(), "pending[1]") {
		t.Fatalf("two pending changes of one source: %v", err)
	}
}
