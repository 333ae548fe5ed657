package service

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
)

type fakeRemotes struct{ res []SourceSync }

func (f fakeRemotes) Sync(ctx context.Context, ids ...string) []SourceSync { return f.res }
func (f fakeRemotes) Status() []SourceStatus {
	return []SourceStatus{{ID: "team"}, {ID: "broken"}}
}

// Every write of the service leaves one record, with the principal's
// actor and role and the caller's address and transport; a refused or
// failed write leaves none.
func TestEveryWriteAudited(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "loadout.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := WithCaller(context.Background(), Caller{Addr: "203.0.113.9", Transport: "http"})
	cat, err := catalog.New(ctx, []catalog.AgentSpec{{AgentID: "dev", Skills: []catalog.SourceSpec{{Store: true}}}}, catalog.Options{Store: store.NewProvider(st)})
	if err != nil {
		t.Fatal(err)
	}
	s := New(cat, Options{Store: st, Server: st})
	t.Cleanup(func() { s.Close() })
	s.SetRemotes(fakeRemotes{res: []SourceSync{{ID: "team", From: "r1", To: "r2", Moved: true, Summary: "1 changed"}, {ID: "broken", Error: "fetch failed"}}})

	open := Principal{Open: true}
	secret, tok, err := s.CreateToken(ctx, open, "ops", []string{"admin"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	agent := Principal{TokenID: "x", Name: "bot", Scopes: []string{"agent:dev"}}
	name := benchName(1)

	steps := []struct {
		action string
		do     func() error
	}{
		{"skill.save", func() error { _, err := s.Put(ctx, p, benchBundle(1, 0), 0, "api", "test"); return err }},
		{"", func() error { _, err := s.Put(ctx, p, benchBundle(1, 0), 0, "api", "test"); return err }},     // exists: refused
		{"", func() error { _, err := s.Put(ctx, agent, benchBundle(2, 0), 0, "api", "test"); return err }}, // not an admin
		{"skill.save", func() error { _, err := s.Put(ctx, p, benchBundle(1, 1), 1, "api", "test"); return err }},
		{"skill.file.put", func() error { _, err := s.PutFile(ctx, p, name, "references/x.md", []byte("x"), false, 2); return err }},
		{"", func() error { _, err := s.PutFile(ctx, p, name, "references/y.md", []byte("y"), false, 2); return err }}, // stale
		{"skill.file.delete", func() error { _, err := s.DeleteFile(ctx, p, name, "references/x.md", 3); return err }},
		{"skill.restore", func() error { _, err := s.Restore(ctx, p, name, 1, 4); return err }},
		{"import", func() error {
			_, err := s.Import(ctx, p, []store.ImportItem{{Bundle: benchBundle(3, 0)}}, ImportOptions{})
			return err
		}},
		{"skill.delete", func() error { return s.Delete(ctx, p, name, -1) }},
		{"", func() error { return s.Delete(ctx, p, name, -1) }}, // gone
		{"source.sync", func() error { _, err := s.SyncSources(ctx, p, "team", "broken"); return err }},
		{"config.reload", func() error { return s.Reload(WithPrincipal(ctx, p), "test") }},
		{"signin", func() error { _, _, err := s.StartSession(ctx, secret); return err }},
		{"", func() error { _, _, err := s.StartSession(ctx, "lo_wrong"); return err }},
		{"token.revoke", func() error { return s.RevokeToken(ctx, open, tok.ID) }},
		{"", func() error { return s.RevokeToken(ctx, open, "nope") }},
	}
	want := []string{"token.create"}
	for i, step := range steps {
		err := step.do()
		if (step.action == "") != (err != nil) {
			t.Fatalf("step %d (%s): %v", i, step.action, err)
		}
		if step.action != "" {
			want = append(want, step.action)
		}
	}
	rs, err := s.Audit(ctx, open, store.AuditQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := len(rs) - 1; i >= 0; i-- {
		got = append(got, rs[i].Action)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("actions:\n got %v\nwant %v", got, want)
	}
	for _, r := range rs {
		if r.Client != "203.0.113.9" || r.Transport != "http" || r.Role != RoleAdmin {
			t.Errorf("%s: client, transport or role: %+v", r.Action, r)
		}
		switch r.Action {
		case "token.create", "token.revoke":
			if r.Actor != "(no token)" || r.ActorToken != "" || r.Target != "token:"+tok.ID {
				t.Errorf("%s: %+v", r.Action, r)
			}
		default:
			if r.Actor != "ops" || r.ActorToken != tok.ID {
				t.Errorf("%s: the actor: %+v", r.Action, r)
			}
		}
	}
	byAction := map[string]store.AuditRecord{}
	for _, r := range rs {
		if _, ok := byAction[r.Action]; !ok {
			byAction[r.Action] = r // the newest of each
		}
	}
	if r := byAction["source.sync"]; r.Target != "source:team" || r.Before != "r1" || r.After != "r2" {
		t.Errorf("the sync's record (only the source that synced): %+v", r)
	}
	if r := byAction["skill.restore"]; r.Detail != "version 1" || r.Before == "" || r.After == "" || r.Before == r.After {
		t.Errorf("the restore's record: %+v", r)
	}
	if r := byAction["import"]; r.Detail != "1 skill: "+benchName(3) {
		t.Errorf("the import's record: %+v", r)
	}
	if v, err := s.VerifyAudit(ctx, open); err != nil || !v.OK {
		t.Fatalf("verify: %+v %v", v, err)
	}
	// Not for agents.
	if _, err := s.Audit(ctx, agent, store.AuditQuery{}); AsError(err).Code != CodeForbidden {
		t.Errorf("an agent listed the trail: %v", err)
	}
}

// An actor's name is kept escaped and bounded.
func TestAuditRecordText(t *testing.T) {
	r := auditRecord(context.Background(), Principal{Name: "a\x1b[31m\u202eb\x00" + strings.Repeat("x", 400), Scopes: []string{"admin"}},
		store.AuditRecord{Action: "x", Detail: strings.Repeat("d", 5000)})
	if strings.ContainsAny(r.Actor, "\x1b\u202e\x00") || !strings.HasPrefix(r.Actor, `a\x1b[31m\u202eb\x00x`) || len(r.Actor) > MaxAuditName {
		t.Errorf("actor %q", r.Actor)
	}
	if len(r.Detail) > MaxAuditDetail || !strings.HasSuffix(r.Detail, "…") {
		t.Errorf("detail of %d bytes", len(r.Detail))
	}
	if r.Transport != "server" || r.Role != RoleAdmin {
		t.Errorf("%+v", r)
	}
}
