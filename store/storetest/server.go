package storetest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/store"
)

// RunServer runs the conformance suite of store.Server. fresh must make a
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
		{"ChangesAcrossInstances", testChangesAcrossInstances},
		{"ChangesQuiet", testChangesQuiet},
		{"ChangesClose", testChangesClose},
		{"ChangesByOthers", testChangesByOthers},
		{"Stamps", testStamps},
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
