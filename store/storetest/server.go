package storetest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout/loadout/store"
)

// RunServer runs the conformance suite of store.Server: tokens, receipts
// and their retention and daily counts, and the change feeds. fresh must make a
// new, empty database and return a function that opens it: each call is
// another instance on that one database (its own connections, as another
// process would have), closed by t.Cleanup. The stores must implement
// store.Server, and DB() *sql.DB for the checks that read tables directly.
func RunServer(t *testing.T, fresh func(t *testing.T) (open func(t *testing.T) store.Store)) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open func(t *testing.T) store.Store)
	}{
		{"Tokens", testTokens},
		{"TokenScopes", testTokenScopes},
		{"TokenLastUsed", testTokenLastUsed},
		{"Receipts", testReceipts},
		{"ReceiptsSharedFields", testReceiptsSharedFields},
		{"ChangesAcrossInstances", testChangesAcrossInstances},
		{"ChangesQuiet", testChangesQuiet},
		{"ChangesClose", testChangesClose},
		{"ChangesByOthers", testChangesByOthers},
		{"Stamps", testStamps},
		{"Walk", testWalk},
		{"TokenChanges", testTokenChanges},
		{"ReceiptRetention", testReceiptRetention},
		{"ReceiptRetentionByAge", testReceiptRetentionByAge},
		{"ReceiptRetentionByBytes", testReceiptRetentionByBytes},
		{"ReceiptRetentionByBytesMidChunk", testReceiptRetentionByBytesMidChunk},
		{"ReceiptValuesRefused", testReceiptValuesRefused},
		{"UsageConcurrentMaintenance", testUsageConcurrentMaintenance},
		{"Blocks", testBlocks},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, fresh(t)) })
	}
}

func server(t *testing.T, s store.Store) store.Server {
	t.Helper()
	srv, ok := s.(store.Server)
	if !ok {
		t.Fatalf("%T does not implement store.Server", s)
	}
	return srv
}

func dbOf(t *testing.T, s store.Store) *sql.DB {
	t.Helper()
	d, ok := s.(interface{ DB() *sql.DB })
	if !ok {
		t.Fatalf("%T has no DB() *sql.DB", s)
	}
	return d.DB()
}

func testTokens(t *testing.T, open func(t *testing.T) store.Store) {
	st := open(t)
	s := server(t, st)
	secret, tok, err := s.CreateToken(ctx, "ci", []string{"admin"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "lo_") || len(secret) != 3+43 || strings.ContainsAny(secret, "+/=") {
		t.Errorf("secret %q: want lo_ and 43 characters of unpadded base64url", secret)
	}
	if tok.ID == "" || tok.Name != "ci" || len(tok.Scopes) != 1 || tok.Scopes[0] != "admin" || tok.CreatedAt.IsZero() || tok.LastUsed != nil {
		t.Errorf("created token: %+v", tok)
	}
	time.Sleep(2 * time.Millisecond) // distinct creation times, for the order
	secret2, tok2, err := s.CreateToken(ctx, "coder's", []string{"agent:coder", "agent:reviewer"})
	if err != nil {
		t.Fatal(err)
	}
	if secret2 == secret || tok2.ID == tok.ID {
		t.Fatal("two tokens share a secret or an id")
	}

	got, err := s.TokenBySecret(ctx, secret2)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != tok2.ID || got.Name != "coder's" || strings.Join(got.Scopes, ",") != "agent:coder,agent:reviewer" || got.LastUsed == nil {
		t.Errorf("TokenBySecret: %+v", got)
	}
	if !got.CreatedAt.Equal(tok2.CreatedAt) {
		t.Errorf("created at %v, then %v", tok2.CreatedAt, got.CreatedAt)
	}
	for _, bad := range []string{"", "lo_", secret + "x", secret[:len(secret)-1], "Bearer " + secret, strings.ToUpper(secret)} {
		_, err := s.TokenBySecret(ctx, bad)
		wantCode(t, err, store.NotFound)
	}

	list, err := s.Tokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != tok2.ID || list[1].ID != tok.ID {
		t.Fatalf("Tokens, newest first: %+v", list)
	}
	if list[0].LastUsed == nil || list[1].LastUsed != nil {
		t.Errorf("last used: %v, %v", list[0].LastUsed, list[1].LastUsed)
	}

	// Only the hash is kept: no column of any row holds the secret, or
	// its random part.
	db := dbOf(t, st)
	rows, err := db.QueryContext(ctx, `SELECT * FROM tokens`)
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	hashes := map[string]bool{}
	n := 0
	for rows.Next() {
		n++
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			var text string
			switch v := v.(type) {
			case []byte:
				text = string(v)
			case string:
				text = v
			default:
				text = fmt.Sprint(v)
			}
			for _, sec := range []string{secret, secret2} {
				if strings.Contains(text, sec) || strings.Contains(text, sec[3:]) {
					t.Errorf("column %s holds a secret", cols[i])
				}
			}
			hashes[text] = true
		}
	}
	rows.Close()
	if n != 2 {
		t.Errorf("tokens has %d rows", n)
	}
	for _, sec := range []string{secret, secret2} {
		sum := sha256.Sum256([]byte(sec))
		if !hashes[hex.EncodeToString(sum[:])] {
			t.Errorf("no column holds the secret's sha256 in hex")
		}
	}

	// Revoking.
	if err := s.RevokeToken(ctx, tok2.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.TokenBySecret(ctx, secret2)
	wantCode(t, err, store.NotFound)
	if _, err := s.TokenBySecret(ctx, secret); err != nil {
		t.Errorf("the other token: %v", err)
	}
	list, _ = s.Tokens(ctx)
	if len(list) != 1 || list[0].ID != tok.ID {
		t.Errorf("after revoking: %+v", list)
	}
	if err := s.RevokeToken(ctx, tok2.ID); err != nil {
		t.Errorf("revoking twice: %v", err)
	}
	wantCode(t, s.RevokeToken(ctx, "nope"), store.NotFound)

	// A second instance authenticates the same secrets.
	other := server(t, open(t))
	if got, err := other.TokenBySecret(ctx, secret); err != nil || got.ID != tok.ID {
		t.Errorf("another instance: %v %v", got, err)
	}
	_, err = other.TokenBySecret(ctx, secret2)
	wantCode(t, err, store.NotFound)
}

func testTokenScopes(t *testing.T, open func(t *testing.T) store.Store) {
	s := server(t, open(t))
	for _, scopes := range [][]string{nil, {}, {""}, {"root"}, {"Admin"}, {"agent:"}, {"agent:a b"}, {"agent:x", "agents:y"}, {"admin", " admin"}} {
		_, _, err := s.CreateToken(ctx, "x", scopes)
		e := wantCode(t, err, store.Invalid)
		for _, sc := range scopes {
			if sc != "admin" && !strings.HasPrefix(sc, "agent:x") && !strings.Contains(e.Message, fmt.Sprintf("%q", sc)) {
				t.Errorf("%q: the message does not name the bad scope: %s", scopes, e.Message)
			}
		}
	}
	if list, _ := s.Tokens(ctx); len(list) != 0 {
		t.Errorf("refused tokens were stored: %+v", list)
	}
	for _, scopes := range [][]string{{"admin"}, {"agent:coder"}, {"agent:team/coder-2.1", "admin"}} {
		if _, tok, err := s.CreateToken(ctx, "", scopes); err != nil || len(tok.Scopes) != len(scopes) {
			t.Errorf("%q: %v %+v", scopes, err, tok)
		}
	}
}

func testTokenLastUsed(t *testing.T, open func(t *testing.T) store.Store) {
	st := open(t)
	s := server(t, st)
	secret, tok, err := s.CreateToken(ctx, "", []string{"agent:a"})
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().Add(-time.Second)
	first, err := s.TokenBySecret(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if first.LastUsed == nil || first.LastUsed.Before(before) || first.LastUsed.After(time.Now().Add(time.Second)) {
		t.Fatalf("first use: %v", first.LastUsed)
	}
	// Within a minute, a use is not written again.
	time.Sleep(5 * time.Millisecond)
	for range 5 {
		again, err := s.TokenBySecret(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		if again.LastUsed == nil || !again.LastUsed.Equal(*first.LastUsed) {
			t.Fatalf("last used moved within the minute: %v, then %v", first.LastUsed, again.LastUsed)
		}
	}
	// A minute later, it is.
	old := time.Now().Add(-2 * time.Minute).UnixMicro()
	if _, err := dbOf(t, st).ExecContext(ctx, `UPDATE tokens SET last_used = $1 WHERE id = $2`, old, tok.ID); err != nil {
		t.Fatal(err)
	}
	later, err := s.TokenBySecret(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if later.LastUsed == nil || later.LastUsed.Before(before) {
		t.Fatalf("after a minute: %v", later.LastUsed)
	}
	list, _ := s.Tokens(ctx)
	if len(list) != 1 || list[0].LastUsed == nil || !list[0].LastUsed.Equal(*later.LastUsed) {
		t.Errorf("Tokens: %+v, want last used %v", list, later.LastUsed)
	}
}

func testReceipts(t *testing.T, open func(t *testing.T) store.Store) {
	s := server(t, open(t))
	if err := s.AddReceipts(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if rs, err := s.Receipts(ctx, store.ReceiptQuery{}); err != nil || len(rs) != 0 {
		t.Fatalf("empty: %v %v", rs, err)
	}
	const n = 20000
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	agents := []string{"coder", "reviewer", "ops", "docs"}
	rs := make([]store.Receipt, n)
	for i := range rs {
		rs[i] = store.Receipt{
			Time: base.Add(time.Duration(i) * time.Second), Agent: agents[i%len(agents)],
			Skill: fmt.Sprintf("skill-%d", i%50), Action: "load", Source: "store", Digest: fmt.Sprintf("sha256:%064x", i),
			Transport: "http", Outcome: "ok", Token: "tok1",
		}
		if i%10 == 0 {
			rs[i].Action, rs[i].Path = "read", "scripts/run.sh"
			rs[i].Source, rs[i].Plugin, rs[i].Trust = "plugin", "acme", "trusted"
			rs[i].Transport, rs[i].Outcome, rs[i].Token = "mcp-stdio", "not_found", ""
		}
		if i%10 == 5 {
			rs[i].Source, rs[i].Origin = "git", fmt.Sprintf("https://git.example.com/team/skills.git@main %040x skills/skill-%d", i, i%50)
		}
	}
	start := time.Now()
	if err := s.AddReceipts(ctx, rs); err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	t.Logf("AddReceipts: %d rows in %v, %.0f rows/s", n, el.Round(time.Millisecond), float64(n)/el.Seconds())

	// Default limit, newest first, every field back.
	got, err := s.Receipts(ctx, store.ReceiptQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 100 {
		t.Fatalf("default limit: %d", len(got))
	}
	for i, r := range got {
		want := rs[n-1-i]
		want.ID = r.ID
		if !r.Time.Equal(want.Time) {
			t.Fatalf("receipt %d: time %v, want %v", i, r.Time, want.Time)
		}
		want.Time = r.Time
		want.Count = 1 // added with count 0, which means 1
		if r != want {
			t.Fatalf("receipt %d:\n got %+v\nwant %+v", i, r, want)
		}
		if i > 0 && r.ID >= got[i-1].ID {
			t.Errorf("ids not descending with time: %d after %d", r.ID, got[i-1].ID)
		}
	}
	if got, _ := s.Receipts(ctx, store.ReceiptQuery{Limit: 50000}); len(got) != 10000 {
		t.Errorf("limit 50000: %d, want the maximum 10000", len(got))
	}
	if got, _ := s.Receipts(ctx, store.ReceiptQuery{Limit: 7}); len(got) != 7 {
		t.Errorf("limit 7: %d", len(got))
	}

	// Filters.
	since := base.Add(time.Duration(n-1000) * time.Second)
	got, err = s.Receipts(ctx, store.ReceiptQuery{Agent: "ops", Skill: "skill-2", Since: since, Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for i := n - 1000; i < n; i++ {
		if rs[i].Agent == "ops" && rs[i].Skill == "skill-2" {
			want++
		}
	}
	if len(got) != want || want == 0 {
		t.Errorf("agent+skill+since: %d, want %d", len(got), want)
	}
	for _, r := range got {
		if r.Agent != "ops" || r.Skill != "skill-2" || r.Time.Before(since) {
			t.Errorf("filtered out, but listed: %+v", r)
		}
	}
	if got, _ := s.Receipts(ctx, store.ReceiptQuery{Agent: "coder", Limit: 10000}); len(got) != n/4 {
		t.Errorf("agent coder: %d, want %d", len(got), n/4)
	}
	if got, _ := s.Receipts(ctx, store.ReceiptQuery{Skill: "skill-7", Limit: 10000}); len(got) != n/50 {
		t.Errorf("skill-7: %d, want %d", len(got), n/50)
	}
	if got, _ := s.Receipts(ctx, store.ReceiptQuery{Since: since, Limit: 10000}); len(got) != 1000 || !got[999].Time.Equal(since) {
		t.Errorf("since (inclusive): %d", len(got))
	}
	if got, _ := s.Receipts(ctx, store.ReceiptQuery{Agent: "nobody"}); len(got) != 0 {
		t.Errorf("agent nobody: %d", len(got))
	}

	// A receipt without a time is stamped now; same-time receipts list in
	// reverse order of insertion.
	before := time.Now().Add(-time.Second)
	if err := s.AddReceipts(ctx, []store.Receipt{{Agent: "late", Skill: "a"}, {Agent: "late", Skill: "b"}}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Receipts(ctx, store.ReceiptQuery{Agent: "late"})
	if len(got) != 2 || got[0].Skill != "b" || got[0].Time.Before(before) || got[0].Time.After(time.Now().Add(time.Second)) {
		t.Errorf("stamped receipts: %+v", got)
	}
}

// changeWait is how long a change may take to reach another instance.
const changeWait = 2 * time.Second

// drain empties ch after letting pending sends arrive.
func drain(ch <-chan struct{}, settle time.Duration) {
	time.Sleep(settle)
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// seen waits for a send on ch and returns how long it took.
func seen(t *testing.T, ch <-chan struct{}, what string) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case _, ok := <-ch:
		if !ok {
			t.Fatalf("%s: the channel closed", what)
		}
		return time.Since(start)
	case <-time.After(changeWait):
		t.Fatalf("%s: no change within %v", what, changeWait)
	}
	return 0
}

func quiet(t *testing.T, ch <-chan struct{}, what string, d time.Duration) {
	t.Helper()
	select {
	case <-ch:
		t.Errorf("%s: the change feed fired", what)
	case <-time.After(d):
	}
}

func testChangesAcrossInstances(t *testing.T, open func(t *testing.T) store.Store) {
	a, b := open(t), open(t)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chA, err := server(t, a).Changes(cctx)
	if err != nil {
		t.Fatal(err)
	}
	chB, err := server(t, b).Changes(cctx)
	if err != nil {
		t.Fatal(err)
	}
	writes := []struct {
		name string
		fn   func() error
	}{
		{"Put", func() error {
			_, err := a.Put(ctx, bundle("feed", file("a.md", "A")), store.PutOptions{IfVersion: 0})
			return err
		}},
		{"PutFile", func() error { _, err := a.PutFile(ctx, "feed", "b.md", []byte("B"), false, -1); return err }},
		{"DeleteFile", func() error { _, err := a.DeleteFile(ctx, "feed", "b.md", -1); return err }},
		{"Restore", func() error { _, err := a.Restore(ctx, "feed", 1, -1); return err }},
		{"SetEnabled", func() error { return a.SetEnabled(ctx, "feed", false) }},
		{"SetOverride", func() error { return a.SetOverride(ctx, "plugin:acme/x", false) }},
		{"Import", func() error {
			_, err := a.Import(ctx, []store.ImportItem{{Bundle: bundle("imported")}})
			return err
		}},
		{"Delete", func() error { return a.Delete(ctx, "feed", -1) }},
		{"Put through B", func() error { _, err := b.Put(ctx, bundle("from-b"), store.PutOptions{IfVersion: 0}); return err }},
	}
	// Latency is measured from the write's return (its commit) to the
	// send on the other instance's channel.
	var worst, total time.Duration
	for i, w := range writes {
		drain(chA, 0)
		drain(chB, 0)
		// Writes fall at different points of a SQLite poll interval.
		time.Sleep(time.Duration(i) * 23 * time.Millisecond)
		if err := w.fn(); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		start := time.Now()
		other, mine := chB, chA
		if strings.Contains(w.name, "through B") {
			other, mine = chA, chB
		}
		seen(t, other, w.name+", on the other instance")
		d := time.Since(start)
		seen(t, mine, w.name+", on the writing instance")
		total += d
		worst = max(worst, d)
	}
	t.Logf("a change reached the other instance in %v on average, %v at worst", (total / time.Duration(len(writes))).Round(time.Microsecond), worst.Round(time.Microsecond))
}

func testChangesQuiet(t *testing.T, open func(t *testing.T) store.Store) {
	a, b := open(t), open(t)
	put(t, a, bundle("base"), 0)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chA, err := server(t, a).Changes(cctx)
	if err != nil {
		t.Fatal(err)
	}
	chB, err := server(t, b).Changes(cctx)
	if err != nil {
		t.Fatal(err)
	}
	drain(chA, 300*time.Millisecond)
	drain(chB, 0)
	sa := server(t, a)
	if err := sa.AddReceipts(ctx, []store.Receipt{{Agent: "x", Skill: "base", Action: "load", Outcome: "ok"}}); err != nil {
		t.Fatal(err)
	}
	secret, tok, err := sa.CreateToken(ctx, "t", []string{"admin"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sa.TokenBySecret(ctx, secret); err != nil { // records its use: a write
		t.Fatal(err)
	}
	if err := sa.RevokeToken(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	// Reads and unchanged saves are no writes either.
	if _, err := a.List(ctx); err != nil {
		t.Fatal(err)
	}
	const settle = 800 * time.Millisecond // four SQLite polls
	done := make(chan struct{})
	go func() { defer close(done); quiet(t, chB, "receipts and tokens, on B", settle) }()
	quiet(t, chA, "receipts and tokens, on A", settle)
	<-done
	// And the feed still works.
	put(t, a, bundle("after"), 0)
	seen(t, chB, "a Put after the quiet writes")
}

func testChangesClose(t *testing.T, open func(t *testing.T) store.Store) {
	a := open(t)
	s := server(t, a)
	cctx, cancel := context.WithCancel(ctx)
	ch, err := s.Changes(cctx)
	if err != nil {
		t.Fatal(err)
	}
	// Several feeds may run at once; each gets every change.
	ch2ctx, cancel2 := context.WithCancel(ctx)
	defer cancel2()
	ch2, err := s.Changes(ch2ctx)
	if err != nil {
		t.Fatal(err)
	}
	put(t, a, bundle("one"), 0)
	seen(t, ch, "first feed")
	seen(t, ch2, "second feed")
	cancel()
	deadline := time.After(changeWait)
	for {
		select {
		case _, ok := <-ch:
			if ok {
				continue
			}
		case <-deadline:
			t.Fatal("the channel did not close after its context ended")
		}
		break
	}
	// The other feed goes on.
	drain(ch2, 0)
	put(t, a, bundle("two"), 0)
	seen(t, ch2, "second feed, after the first ended")
	// Sends coalesce: many writes, at most one pending send.
	for i := range 5 {
		put(t, a, bundle(fmt.Sprintf("burst-%d", i)), 0)
	}
	if len(ch2) > 1 || cap(ch2) > 1 {
		t.Errorf("the channel holds %d of %d", len(ch2), cap(ch2))
	}
}

// Creating and revoking a token reaches every instance's token feed (and
// no skill feed); a token's use, receipts and skill writes do not.
func testTokenChanges(t *testing.T, open func(t *testing.T) store.Store) {
	a, b := open(t), open(t)
	sa, sb := server(t, a), server(t, b)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tokA, err := sa.TokenChanges(cctx)
	if err != nil {
		t.Fatal(err)
	}
	tokB, err := sb.TokenChanges(cctx)
	if err != nil {
		t.Fatal(err)
	}
	skillsB, err := sb.Changes(cctx)
	if err != nil {
		t.Fatal(err)
	}
	drain(tokA, 300*time.Millisecond)
	drain(tokB, 0)
	drain(skillsB, 0)

	secret, tok, err := sa.CreateToken(ctx, "feed", []string{"admin"})
	if err != nil {
		t.Fatal(err)
	}
	seen(t, tokA, "a token created, on the creating instance")
	seen(t, tokB, "a token created, on the other instance")

	// Uses (which record last_used), receipts and skill writes are not
	// token changes.
	if _, err := sb.TokenBySecret(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if err := sa.AddReceipts(ctx, []store.Receipt{{Agent: "x", Skill: "y"}}); err != nil {
		t.Fatal(err)
	}
	put(t, a, bundle("not-a-token"), 0)
	seen(t, skillsB, "a skill write, on the skill feed")
	const settle = 800 * time.Millisecond // four SQLite polls
	done := make(chan struct{})
	go func() { defer close(done); quiet(t, tokB, "a token's use, receipts and a skill write, on B", settle) }()
	quiet(t, tokA, "a token's use, receipts and a skill write, on A", settle)
	<-done

	if err := sb.RevokeToken(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	seen(t, tokB, "a token revoked, on the revoking instance")
	seen(t, tokA, "a token revoked, on the other instance")
	quiet(t, skillsB, "a token revoked, on the skill feed", 300*time.Millisecond)
	// A refused revocation is no change.
	wantCode(t, sa.RevokeToken(ctx, "nope"), store.NotFound)
	quiet(t, tokA, "an unknown token's revocation", 300*time.Millisecond)
}

// usageKey is what the daily counts count by.
type usageKey struct{ agent, skill, action, outcome string }

func usageOf(t *testing.T, s store.Server, q store.UsageQuery) map[usageKey]int64 {
	t.Helper()
	q.Limit = 100000
	us, err := s.Usage(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	got := map[usageKey]int64{}
	for _, u := range us {
		k := usageKey{u.Agent, u.Skill, u.Action, u.Outcome}
		if !q.Daily {
			if _, dup := got[k]; dup {
				t.Fatalf("Usage lists %+v twice", k)
			}
		}
		got[k] += u.Count
	}
	return got
}

func rawCount(t *testing.T, st store.Store) int64 {
	t.Helper()
	var n int64
	if err := dbOf(t, st).QueryRowContext(ctx, `SELECT count(*) FROM receipts`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func sameUsage(t *testing.T, what string, got, want map[usageKey]int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d usage rows, want %d", what, len(got), len(want))
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: %+v counted %d, want %d", what, k, got[k], n)
		}
	}
}

// Writing many more receipts than MaxRows, in batches, with maintenance
// after each: the raw table never holds more than MaxRows afterwards, and
// the counts equal what was written, before and after maintenance.
func testReceiptRetention(t *testing.T, open func(t *testing.T) store.Store) {
	st := open(t)
	s := server(t, st)
	const maxRows, batches, per = 3000, 12, 1000
	ret := store.Retention{MaxRows: maxRows}
	want := map[usageKey]int64{}
	agents := []string{"coder", "reviewer", "ops"}
	outcomes := []string{"ok", "ok", "ok", "not_found", "refused"}
	now := time.Now().UTC()
	written := 0
	for b := range batches {
		rs := make([]store.Receipt, per)
		for i := range rs {
			n := b*per + i
			r := store.Receipt{Time: now.Add(time.Duration(n-batches*per) * time.Millisecond), Agent: agents[n%3],
				Skill: fmt.Sprintf("skill-%d", n%17), Action: "load", Source: "store", Transport: "http", Outcome: outcomes[n%5]}
			if n%4 == 0 {
				r.Action, r.Path = "read", "references/a.md"
			}
			if n%11 == 0 { // a made-up name: no skill, no source
				r.Skill, r.Source, r.Outcome = fmt.Sprintf("made-up-%d", n), "", "not_found"
			}
			rs[i] = r
			skill := r.Skill
			if r.Source == "" {
				skill = ""
			}
			want[usageKey{r.Agent, skill, r.Action, r.Outcome}]++
		}
		// Batches of odd sizes too, to cross the insert's chunk sizes.
		for len(rs) > 0 {
			k := min(len(rs), 1+b*37%400)
			if err := s.AddReceipts(ctx, rs[:k]); err != nil {
				t.Fatal(err)
			}
			rs = rs[k:]
		}
		written += per
		// Exact before maintenance: the counts include receipts not yet
		// rolled up.
		if b == 0 || b == batches-1 {
			sameUsage(t, fmt.Sprintf("batch %d, before maintenance", b), usageOf(t, s, store.UsageQuery{}), want)
		}
		res, err := s.MaintainReceipts(ctx, ret)
		if err != nil {
			t.Fatal(err)
		}
		if n := rawCount(t, st); n > maxRows || n != min(int64(written), maxRows) {
			t.Fatalf("after batch %d: %d raw receipts, want %d (bound %d); %+v", b, n, min(written, maxRows), maxRows, res)
		}
		if res.RolledUp != per || res.Remaining < min(int64(written), maxRows) {
			t.Errorf("batch %d: %+v", b, res)
		}
	}
	sameUsage(t, "after maintenance", usageOf(t, s, store.UsageQuery{}), want)

	// Maintenance again changes nothing.
	res, err := s.MaintainReceipts(ctx, ret)
	if err != nil || res.RolledUp != 0 || res.Pruned != 0 {
		t.Errorf("maintaining twice: %+v %v", res, err)
	}
	sameUsage(t, "after maintaining twice", usageOf(t, s, store.UsageQuery{}), want)

	// Filters, per day, order and limits.
	coder := map[usageKey]int64{}
	skill3 := map[usageKey]int64{}
	for k, n := range want {
		if k.agent == "coder" {
			coder[k] = n
		}
		if k.skill == "skill-3" {
			skill3[k] = n
		}
	}
	sameUsage(t, "agent coder", usageOf(t, s, store.UsageQuery{Agent: "coder"}), coder)
	sameUsage(t, "skill-3", usageOf(t, s, store.UsageQuery{Skill: "skill-3"}), skill3)
	sameUsage(t, "per day", usageOf(t, s, store.UsageQuery{Daily: true, Since: now.Add(-48 * time.Hour)}), want)
	if got := usageOf(t, s, store.UsageQuery{Since: now.Add(48 * time.Hour)}); len(got) != 0 {
		t.Errorf("since the day after tomorrow: %v", got)
	}
	us, err := s.Usage(ctx, store.UsageQuery{Limit: 5})
	if err != nil || len(us) != 5 {
		t.Fatalf("limit 5: %d %v", len(us), err)
	}
	for i := 1; i < len(us); i++ {
		if us[i].Count > us[i-1].Count {
			t.Errorf("not most used first: %+v", us)
		}
	}
	daily, err := s.Usage(ctx, store.UsageQuery{Daily: true, Limit: 1})
	if err != nil || len(daily) != 1 {
		t.Fatal(daily, err)
	}
	if d := daily[0].Day; !d.Equal(d.Truncate(24*time.Hour)) || d.Location() != time.UTC || now.Sub(d) > 48*time.Hour || d.After(now) {
		t.Errorf("day %v", d)
	}
	// The newest receipts are the ones kept.
	rs, err := s.Receipts(ctx, store.ReceiptQuery{Limit: 1})
	if err != nil || len(rs) != 1 {
		t.Fatal(rs, err)
	}
	if last := now.Add(-time.Millisecond); !rs[0].Time.Equal(last.Truncate(time.Microsecond)) {
		t.Errorf("newest kept receipt: %v, want %v", rs[0].Time, last)
	}
}

// Raw receipts older than KeepDays go, and daily counts older than
// UsageDays; the counts of the days kept stay exact.
func testReceiptRetentionByAge(t *testing.T, open func(t *testing.T) store.Store) {
	st := open(t)
	s := server(t, st)
	now := time.Now().UTC()
	day := 24 * time.Hour
	var rs []store.Receipt
	for _, ago := range []time.Duration{40 * day, 20 * day, 8 * day, 6 * day, time.Hour} {
		for range 3 {
			rs = append(rs, store.Receipt{Time: now.Add(-ago), Agent: "a", Skill: "s", Action: "load", Source: "store", Outcome: "ok"})
		}
	}
	if err := s.AddReceipts(ctx, rs); err != nil {
		t.Fatal(err)
	}
	res, err := s.MaintainReceipts(ctx, store.Retention{KeepDays: 7, UsageDays: 30})
	if err != nil {
		t.Fatal(err)
	}
	if n := rawCount(t, st); n != 6 || res.Pruned != 9 || res.RolledUp != 15 {
		t.Errorf("%d raw receipts left, want the 6 of the last 7 days; %+v", n, res)
	}
	if res.PrunedDays != 1 {
		t.Errorf("daily counts pruned: %+v, want the day 40 days ago", res)
	}
	key := usageKey{"a", "s", "load", "ok"}
	if got := usageOf(t, s, store.UsageQuery{}); got[key] != 12 {
		t.Errorf("usage since ever: %v, want 12 (the day 40 days ago is gone)", got)
	}
	if got := usageOf(t, s, store.UsageQuery{Since: now.Add(-10 * day)}); got[key] != 9 {
		t.Errorf("usage over 10 days: %v, want 9", got)
	}
	if got := usageOf(t, s, store.UsageQuery{Since: now.Add(-7 * day), Daily: true}); got[key] != 6 {
		t.Errorf("daily usage over 7 days: %v, want 6", got)
	}
}

// Raw receipts are bounded by their estimated size as well as their count:
// the size the store sums is store.ReceiptBytes of each row (in bytes,
// not characters); chunks that fit exactly in MaxBytes are all kept, one
// byte less drops the oldest chunk, and the daily counts still count
// every receipt.
func testReceiptRetentionByBytes(t *testing.T, open func(t *testing.T) store.Store) {
	st := open(t)
	s := server(t, st)
	now := time.Now().UTC()
	huge := store.Retention{MaxBytes: 1 << 40}
	var chunk [3]int64
	var oldest int64 // the first receipt's size
	var want int64
	for c := range chunk {
		rs := make([]store.Receipt, 100)
		for i := range rs {
			// Paths of several bytes a character, up to the caps.
			rs[i] = store.Receipt{Time: now.Add(time.Duration(c*100+i-300) * time.Millisecond), Agent: "coder", Skill: fmt.Sprintf("s%d", i%7),
				Action: "read", Path: strings.Repeat("é", 1+(c*100+i)*5%512), Source: "store", Transport: "http", Outcome: "not_found"}
			chunk[c] += store.ReceiptBytes(&rs[i])
		}
		if c == 0 {
			oldest = store.ReceiptBytes(&rs[0])
		}
		if err := s.AddReceipts(ctx, rs); err != nil {
			t.Fatal(err)
		}
		res, err := s.MaintainReceipts(ctx, huge)
		if err != nil {
			t.Fatal(err)
		}
		want += chunk[c]
		if res.Bytes != want || res.Pruned != 0 {
			t.Fatalf("chunk %d: %+v, want %d bytes as store.ReceiptBytes sums them, none pruned", c, res, want)
		}
	}
	total := chunk[0] + chunk[1] + chunk[2]
	res, err := s.MaintainReceipts(ctx, store.Retention{MaxBytes: total})
	if err != nil || res.Pruned != 0 || res.Bytes != total {
		t.Fatalf("MaxBytes exactly the size kept: %+v %v, want nothing pruned", res, err)
	}
	res, err = s.MaintainReceipts(ctx, store.Retention{MaxBytes: total - 1})
	if err != nil || res.Pruned != 1 || res.Bytes != total-oldest {
		t.Fatalf("MaxBytes one byte less: %+v %v, want the oldest receipt pruned and %d bytes left", res, err, total-oldest)
	}
	// A bound that ends exactly at a chunk: the rest of the oldest goes,
	// and its size is forgotten.
	res, err = s.MaintainReceipts(ctx, store.Retention{MaxBytes: chunk[1] + chunk[2]})
	if err != nil || res.Pruned != 99 || res.Bytes != chunk[1]+chunk[2] {
		t.Fatalf("MaxBytes the two newest chunks: %+v %v, want 99 more pruned and %d bytes left", res, err, chunk[1]+chunk[2])
	}
	if n := rawCount(t, st); n != 200 {
		t.Errorf("%d raw receipts left, want 200", n)
	}
	var sizes int
	if err := dbOf(t, st).QueryRowContext(ctx, `SELECT count(*) FROM receipt_bytes`).Scan(&sizes); err != nil || sizes != 2 {
		t.Errorf("receipt_bytes holds %d rows (%v), want the 2 chunks kept", sizes, err)
	}
	rs, err := s.Receipts(ctx, store.ReceiptQuery{Limit: 1000})
	if err != nil || len(rs) != 200 || !rs[len(rs)-1].Time.Equal(now.Add(-200*time.Millisecond).Truncate(time.Microsecond)) {
		t.Errorf("kept %d receipts (%v), want the newest 200", len(rs), err)
	}
	var counted int64
	for _, n := range usageOf(t, s, store.UsageQuery{}) {
		counted += n
	}
	if counted != 300 {
		t.Errorf("usage counts %d reads, want all 300", counted)
	}
	// The count bound still holds beside the size bound.
	res, err = s.MaintainReceipts(ctx, store.Retention{MaxRows: 150, MaxBytes: 1 << 40})
	if err != nil || rawCount(t, st) != 150 {
		t.Errorf("MaxRows 150: %d left, %+v %v", rawCount(t, st), res, err)
	}
}

// A size bound that ends inside a chunk that is not the oldest: that
// chunk keeps its newest rows that fit, a row that fits exactly is kept,
// the older chunks go whole, and the chunk's size is what is left of it.
// One byte less keeps one row fewer.
func testReceiptRetentionByBytesMidChunk(t *testing.T, open func(t *testing.T) store.Store) {
	st := open(t)
	s := server(t, st)
	now := time.Now().UTC()
	var chunk [3]int64
	var rows [3][10]int64
	for c := range chunk {
		rs := make([]store.Receipt, 10)
		for i := range rs {
			rs[i] = store.Receipt{Time: now.Add(time.Duration(c*10+i-30) * time.Millisecond), Agent: "coder", Skill: "s",
				Action: "read", Path: strings.Repeat("p", 1+(c*10+i)*7), Source: "store", Transport: "http", Outcome: "ok"}
			rows[c][i] = store.ReceiptBytes(&rs[i])
			chunk[c] += rows[c][i]
		}
		if err := s.AddReceipts(ctx, rs); err != nil {
			t.Fatal(err)
		}
		if _, err := s.MaintainReceipts(ctx, store.Retention{MaxBytes: 1 << 40}); err != nil {
			t.Fatal(err)
		}
	}
	bound := chunk[2] + rows[1][9] + rows[1][8]
	res, err := s.MaintainReceipts(ctx, store.Retention{MaxBytes: bound})
	if err != nil || res.Pruned != 18 || res.Bytes != bound {
		t.Fatalf("MaxBytes ending exactly after two rows of the middle chunk: %+v %v, want 18 pruned and %d bytes left", res, err, bound)
	}
	if n := rawCount(t, st); n != 12 {
		t.Errorf("%d raw receipts left, want 12", n)
	}
	var sizes int
	if err := dbOf(t, st).QueryRowContext(ctx, `SELECT count(*) FROM receipt_bytes`).Scan(&sizes); err != nil || sizes != 2 {
		t.Errorf("receipt_bytes holds %d rows (%v), want the 2 chunks with receipts left", sizes, err)
	}
	res, err = s.MaintainReceipts(ctx, store.Retention{MaxBytes: bound - 1})
	if err != nil || res.Pruned != 1 || res.Bytes != chunk[2]+rows[1][9] {
		t.Fatalf("one byte less: %+v %v, want 1 more pruned and %d bytes left", res, err, chunk[2]+rows[1][9])
	}
	// A bound of the newest chunk exactly: nothing of the middle one is left.
	res, err = s.MaintainReceipts(ctx, store.Retention{MaxBytes: chunk[2]})
	if err != nil || res.Pruned != 1 || res.Bytes != chunk[2] || rawCount(t, st) != 10 {
		t.Fatalf("MaxBytes the newest chunk: %+v %v, want 1 more pruned and %d bytes left", res, err, chunk[2])
	}
}

// A receipt whose values the database cannot hold (PostgreSQL refuses a
// NUL byte and invalid UTF-8 in text) is refused as Invalid, so the
// writer drops it rather than retrying it: never as a passing failure.
// A database that holds them (SQLite) accepts them. Either way the next
// clean receipt is written.
func testReceiptValuesRefused(t *testing.T, open func(t *testing.T) store.Store) {
	st := open(t)
	s := server(t, st)
	for _, name := range []string{"a\x00b", "a\xffb"} {
		r := store.Receipt{Time: time.Now(), Agent: "coder", Skill: name, Action: "read", Path: name, Source: "store", Transport: "http", Outcome: "not_found"}
		if err := s.AddReceipts(ctx, []store.Receipt{r}); err != nil {
			wantCode(t, err, store.Invalid)
		}
	}
	before := rawCount(t, st)
	ok := store.Receipt{Time: time.Now(), Agent: "coder", Skill: "s", Action: "read", Source: "store", Transport: "http", Outcome: "ok"}
	if err := s.AddReceipts(ctx, []store.Receipt{ok}); err != nil || rawCount(t, st) != before+1 {
		t.Fatalf("a clean receipt after refused ones: %v, %d raw receipts, want %d", err, rawCount(t, st), before+1)
	}
}

// Instances maintaining and writing at once neither lose nor double-count
// a receipt.
func testUsageConcurrentMaintenance(t *testing.T, open func(t *testing.T) store.Store) {
	stores := []store.Store{open(t), open(t)}
	const writers, batches, per = 4, 15, 50
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers)
	stop := make(chan struct{})
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := server(t, stores[i%2])
			for b := range batches {
				rs := make([]store.Receipt, per)
				for j := range rs {
					rs[j] = store.Receipt{Agent: fmt.Sprintf("agent-%d", i), Skill: fmt.Sprintf("skill-%d", (b+j)%7), Action: "load", Source: "store", Outcome: "ok"}
				}
				if err := s.AddReceipts(ctx, rs); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var mwg sync.WaitGroup
	for i := range 2 {
		mwg.Add(1)
		go func() {
			defer mwg.Done()
			s := server(t, stores[i])
			for {
				if _, err := s.MaintainReceipts(ctx, store.Retention{MaxRows: 100}); err != nil {
					errs <- err
					return
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	mwg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s := server(t, stores[0])
	if _, err := s.MaintainReceipts(ctx, store.Retention{MaxRows: 100}); err != nil {
		t.Fatal(err)
	}
	got := usageOf(t, s, store.UsageQuery{})
	var total int64
	perAgent := map[string]int64{}
	for k, n := range got {
		total += n
		perAgent[k.agent] += n
	}
	if total != writers*batches*per {
		t.Errorf("counted %d receipts, wrote %d", total, writers*batches*per)
	}
	for a, n := range perAgent {
		if n != batches*per {
			t.Errorf("%s: counted %d, wrote %d", a, n, batches*per)
		}
	}
	if n := rawCount(t, stores[1]); n > 100 {
		t.Errorf("%d raw receipts, bound 100", n)
	}
}

// testReceiptsSharedFields: rows that share every field but time, skill,
// digest and count are written with those fields bound once (SQLite),
// rows that do not with all of theirs. Every row reads back as written:
// a run of 64 that share, then for each shared field a run of 64 where
// only the last row differs in that one field (the near miss), then 8
// that share, then one alone; with counts and zero times among them.
func testReceiptsSharedFields(t *testing.T, open func(t *testing.T) store.Store) {
	s := server(t, open(t))
	base := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	like := store.Receipt{Agent: "coder", Action: "load", Path: "", Source: "folder", Plugin: "", Trust: "local",
		Transport: "http", Outcome: "ok", Token: "tok1", Code: "", Origin: ""}
	var rs []store.Receipt
	add := func(r store.Receipt) {
		i := len(rs)
		r.Time = base.Add(time.Duration(i) * time.Millisecond)
		r.Skill = fmt.Sprintf("skill-%d", i)
		r.Digest = fmt.Sprintf("sha256:%064x", i)
		r.Count = int64(i%3) + 1
		rs = append(rs, r)
	}
	for range 64 {
		add(like)
	}
	fields := []func(r *store.Receipt){
		func(r *store.Receipt) { r.Agent = "reviewer" }, func(r *store.Receipt) { r.Action = "read" },
		func(r *store.Receipt) { r.Path = "references/guide.md" }, func(r *store.Receipt) { r.Source = "git" },
		func(r *store.Receipt) { r.Plugin = "acme" }, func(r *store.Receipt) { r.Trust = "trusted" },
		func(r *store.Receipt) { r.Transport = "mcp-stdio" }, func(r *store.Receipt) { r.Outcome = "not_found" },
		func(r *store.Receipt) { r.Token = "" }, func(r *store.Receipt) { r.Code = "too_large" },
		func(r *store.Receipt) { r.Origin = "https://git.example.com/skills.git@main" },
	}
	for _, f := range fields {
		for j := range 64 {
			r := like
			if j == 63 {
				f(&r)
			}
			add(r)
		}
	}
	for range 8 {
		add(like)
	}
	other := like
	other.Agent = "ops"
	add(other)
	if err := s.AddReceipts(ctx, rs); err != nil {
		t.Fatal(err)
	}
	got, err := s.Receipts(ctx, store.ReceiptQuery{Limit: len(rs) + 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rs) {
		t.Fatalf("%d receipts read back, want %d", len(got), len(rs))
	}
	for i, g := range got {
		w := rs[len(rs)-1-i] // newest first
		g.ID = 0
		if !g.Time.Equal(w.Time) {
			t.Fatalf("receipt %s: time %v, want %v", w.Skill, g.Time, w.Time)
		}
		g.Time = w.Time
		if g != w {
			t.Fatalf("receipt %s read back as\n%+v\nwant\n%+v", w.Skill, g, w)
		}
	}
	// A zero time is the time of writing, in a run that shares too.
	before := time.Now().Add(-time.Second)
	zero := make([]store.Receipt, 64)
	for i := range zero {
		zero[i] = like
		zero[i].Skill = fmt.Sprintf("now-%d", i)
	}
	if err := s.AddReceipts(ctx, zero); err != nil {
		t.Fatal(err)
	}
	got, err = s.Receipts(ctx, store.ReceiptQuery{Skill: "now-63"})
	if err != nil || len(got) != 1 {
		t.Fatalf("the zero-time receipt: %v %v", got, err)
	}
	if got[0].Time.Before(before) || got[0].Count != 1 {
		t.Errorf("a zero time and count were written as %v and %d, want now and 1", got[0].Time, got[0].Count)
	}
}
