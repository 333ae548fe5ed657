package service

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

func newService(t *testing.T) (*Service, string) {
	t.Helper()
	dir := t.TempDir()
	for name, desc := range map[string]string{"deploy": "Deploy.", "lint": "Lint."} {
		testutil.Must(t, os.MkdirAll(filepath.Join(dir, name, "references"), 0o755))
		testutil.Write(t, filepath.Join(dir, name, "SKILL.md"), "---\nname: "+name+"\ndescription: "+desc+"\n---\nDo "+name+".\n")
		testutil.Write(t, filepath.Join(dir, name, "references", "r.md"), "ref")
	}
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{
		{AgentID: "ops", Skills: []catalog.SourceSpec{{Root: dir, Available: []string{"deploy"}}}},
		{AgentID: "dev", Skills: []catalog.SourceSpec{{Root: dir}}},
	}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := New(cat, Options{})
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func code(err error) string {
	if err == nil {
		return ""
	}
	return AsError(err).Code
}

func TestScopes(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	opsOnly := Principal{TokenID: "t1", Scopes: []string{"agent:ops"}}
	admin := Principal{TokenID: "t2", Scopes: []string{"admin"}}

	if _, err := s.Load(ctx, opsOnly, "ops", "deploy", TransportHTTP); err != nil {
		t.Errorf("agent token on its agent: %v", err)
	}
	// Outside the scope: forbidden, and the same answer whether or not the
	// agent exists, so nothing is revealed.
	_, e1 := s.Load(ctx, opsOnly, "dev", "deploy", TransportHTTP)
	_, e2 := s.Load(ctx, opsOnly, "nonexistent", "deploy", TransportHTTP)
	if code(e1) != CodeForbidden || code(e2) != CodeForbidden || e1.Error() != e2.Error() {
		t.Errorf("out of scope: %v / %v", e1, e2)
	}
	if _, err := s.Loadout(opsOnly, ""); code(err) != CodeForbidden {
		t.Errorf("agent token on the global catalog: %v", err)
	}
	if _, err := s.Put(ctx, opsOnly, &skill.Bundle{Content: []byte("---\nname: x\ndescription: d\n---\n")}, 0, "api", ""); code(err) != CodeForbidden {
		t.Errorf("agent token writing: %v", err)
	}
	if _, err := s.Loadout(admin, "dev"); err != nil {
		t.Errorf("admin: %v", err)
	}
	if _, err := s.Loadout(admin, "nope"); code(err) != CodeNotFound {
		t.Errorf("admin on an unknown agent: %v", err)
	}
	// No tokens required: a request without one may do everything; with
	// tokens required it may do nothing.
	if p, err := s.Authenticate(ctx, ""); err != nil || !p.Admin() {
		t.Errorf("open: %+v %v", p, err)
	}
	s.RequireTokens(true)
	if _, err := s.Authenticate(ctx, ""); code(err) != CodeUnauthorized {
		t.Errorf("required: %v", err)
	}
	// A token given to a server with no token store is refused, never
	// silently treated as open.
	s.RequireTokens(false)
	if _, err := s.Authenticate(ctx, "lo_guess"); code(err) != CodeUnauthorized {
		t.Errorf("unknown token: %v", err)
	}
	// A zero principal (no auth middleware ran) may do nothing.
	if _, err := s.Loadout(PrincipalFrom(ctx), "ops"); code(err) != CodeForbidden {
		t.Errorf("zero principal: %v", err)
	}
}

func TestReceipts(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	p := Principal{Open: true}
	s.Load(ctx, p, "ops", "deploy", TransportHTTP)
	s.Load(ctx, p, "ops", "nope", TransportMCPHTTP)
	s.ReadFile(ctx, p, "dev", "lint", "references/r.md", catalog.ReadOptions{}, TransportMCPStdio)
	s.ReadFile(ctx, p, "dev", "lint", "../x", catalog.ReadOptions{}, TransportHTTP)
	rs, err := s.Receipts(ctx, p, store.ReceiptQuery{})
	if err != nil || len(rs) != 4 {
		t.Fatalf("receipts: %v %+v", err, rs)
	}
	// Newest first.
	want := []string{"dev/lint read refused http", "dev/lint read ok mcp-stdio", "ops/nope load not_found mcp-http", "ops/deploy load ok http"}
	for i, r := range rs {
		got := r.Agent + "/" + r.Skill + " " + r.Action + " " + r.Outcome + " " + r.Transport
		if got != want[i] {
			t.Errorf("receipt %d = %s, want %s", i, got, want[i])
		}
	}
	if rs[3].Source != "folder" || !strings.HasPrefix(rs[3].Digest, "sha256:") || rs[1].Path != "references/r.md" {
		t.Errorf("receipt fields: %+v", rs[3])
	}
	if _, err := s.Receipts(ctx, Principal{Scopes: []string{"agent:ops"}}, store.ReceiptQuery{}); code(err) != CodeForbidden {
		t.Errorf("agent token listing receipts: %v", err)
	}
	// Many concurrent reads: none is lost.
	done := make(chan bool)
	for g := 0; g < 8; g++ {
		go func() {
			for i := 0; i < 500; i++ {
				s.Load(ctx, p, "ops", "deploy", TransportHTTP)
			}
			done <- true
		}()
	}
	for g := 0; g < 8; g++ {
		<-done
	}
	// Identical receipts of one flush are one row (with their count), so
	// the loads are counted by summing the counts, not the rows.
	rs, _ = s.Receipts(ctx, p, store.ReceiptQuery{Limit: 10000})
	var loads int64
	for _, r := range rs {
		loads += r.Count
	}
	if loads != 4004 || len(rs) > 4004 {
		t.Errorf("receipts after 4,000 loads: %d rows counting %d loads, want 4,004 loads", len(rs), loads)
	}
}

func TestReadOnlyAndRefresh(t *testing.T) {
	s, dir := newService(t)
	ctx := context.Background()
	p := Principal{Open: true}
	if _, err := s.PutFile(ctx, p, "deploy", "x.md", []byte("x"), false, -1); code(err) != CodeNoStore {
		t.Errorf("no store: %v", err)
	}
	ch, stop := s.Subscribe()
	defer stop()
	gen := s.Generation()
	testutil.Write(t, filepath.Join(dir, "deploy", "SKILL.md"), "---\nname: deploy\ndescription: Deploy, edited.\n---\nDo it.\n")
	s.Refresh(ctx, []string{filepath.Join(dir, "deploy", "SKILL.md")}, "test")
	select {
	case <-ch:
	case <-time.After(time.Second):
		t.Fatal("no change notification")
	}
	if s.Generation() != gen+1 {
		t.Errorf("generation %d -> %d", gen, s.Generation())
	}
	res, _ := s.Load(ctx, p, "ops", "deploy", TransportHTTP)
	if !strings.Contains(res.Text, "Do it.") {
		t.Errorf("edit not served:\n%s", res.Text)
	}
}

func TestReadOnlyMessage(t *testing.T) {
	e := readOnly(&skill.Skill{Name: "x", Dir: "/s/x", Location: "/s/x/SKILL.md", Origin: &skill.Origin{Kind: "folder"}})
	if e.Code != CodeReadOnly || !strings.Contains(e.Message, "/s/x") {
		t.Errorf("%+v", e)
	}
	e = readOnly(&skill.Skill{Name: "x", Origin: &skill.Origin{Kind: "plugin", Plugin: "acme", Trust: "saas_locked"}})
	if e.Code != CodeReadOnly || !strings.Contains(e.Message, "plugin acme (saas_locked)") || !strings.Contains(e.Message, "loadout disable plugin:acme/x") {
		t.Errorf("%+v", e)
	}
}

// An unknown name of any length costs a bounded receipt.
func TestReceiptsClipLongNames(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	p := Principal{Open: true}
	long := strings.Repeat("é", 50_000)
	s.Load(ctx, p, "ops", long, TransportHTTP)
	s.ReadFile(ctx, p, "dev", "lint", long, catalog.ReadOptions{}, TransportHTTP)
	rs, err := s.Receipts(ctx, p, store.ReceiptQuery{})
	if err != nil || len(rs) != 2 {
		t.Fatalf("receipts: %v %d", err, len(rs))
	}
	for _, r := range rs {
		if len(r.Skill) > MaxReceiptName || len(r.Path) > MaxReceiptPath || !utf8.ValidString(r.Skill) || !utf8.ValidString(r.Path) {
			t.Errorf("receipt keeps %d bytes of name and %d of path (valid UTF-8: %v %v)", len(r.Skill), len(r.Path), utf8.ValidString(r.Skill), utf8.ValidString(r.Path))
		}
	}
	if !strings.HasSuffix(rs[1].Skill, "…") {
		t.Errorf("a clipped name is not marked: %q", rs[1].Skill[len(rs[1].Skill)-8:])
	}
}
