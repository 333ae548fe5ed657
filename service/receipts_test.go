package service

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/loadout/loadout/store"
)

// mergeBase is a receipt with every field set.
func mergeBase(at time.Time) store.Receipt {
	return store.Receipt{Time: at, Agent: "ops", Skill: "deploy", Action: "load", Path: "p.md", Source: "folder", Plugin: "acme",
		Trust: "trusted", Digest: "sha256:aa", Transport: "http", Outcome: "ok", Token: "tok1", Code: "c", Origin: "o"}
}

// TestReceiptsMerged: a flush writes N receipts identical in every field
// but time as one row with count N and the first time; receipts that
// differ in any one field stay separate rows. The same with a store (both
// engines) and with the in-memory ring, whose usage sums the counts.
func TestReceiptsMerged(t *testing.T) {
	kinds := map[string]func(t *testing.T) store.Server{"memory": func(*testing.T) store.Server { return nil }}
	for name, fresh := range engines(t) {
		kinds[name] = func(t *testing.T) store.Server { return fresh(t)(t) }
	}
	for name, mk := range kinds {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			srv := mk(t)
			r := newReceiptLog(srv, slog.New(slog.DiscardHandler), store.Retention{})
			t.Cleanup(func() { r.close() })
			first := time.Now().UTC().Truncate(time.Millisecond).Add(-time.Second)
			const n = 500
			for i := range n {
				r.add(mergeBase(first.Add(time.Duration(i) * time.Microsecond)))
			}
			// One receipt per field that differs from the base in that
			// field only.
			fields := 0
			v := reflect.ValueOf(mergeBase(first))
			for i := range v.NumField() {
				if v.Field(i).Kind() != reflect.String {
					continue
				}
				rc := mergeBase(first)
				reflect.ValueOf(&rc).Elem().Field(i).SetString("other")
				r.add(rc)
				r.add(rc) // twice: merged with each other, not with the base
				fields++
			}
			if fields != 13 {
				t.Fatalf("%d string fields in store.Receipt; the test expects 13", fields)
			}
			if err := r.flush(); err != nil {
				t.Fatal(err)
			}
			var rs []store.Receipt
			if srv == nil {
				rs = r.memory(store.ReceiptQuery{Limit: 1000})
			} else {
				var err error
				if rs, err = srv.Receipts(ctx, store.ReceiptQuery{Limit: 1000}); err != nil {
					t.Fatal(err)
				}
			}
			if len(rs) != 1+fields {
				t.Fatalf("%d rows, want %d (one for the %d identical receipts, one per differing field)", len(rs), 1+fields, n)
			}
			var base int
			for _, rc := range rs {
				want := int64(2)
				if rc.Agent == "ops" && rc.Skill == "deploy" && rc.Action == "load" && rc.Path == "p.md" && rc.Source == "folder" && rc.Plugin == "acme" &&
					rc.Trust == "trusted" && rc.Digest == "sha256:aa" && rc.Transport == "http" && rc.Outcome == "ok" && rc.Token == "tok1" && rc.Code == "c" && rc.Origin == "o" {
					want = n
					base++
				}
				if rc.Count != want {
					t.Errorf("row %+v: count %d, want %d", rc, rc.Count, want)
				}
				if !rc.Time.Equal(first) {
					t.Errorf("row %+v: time %v, want the first receipt's %v", rc, rc.Time, first)
				}
			}
			if base != 1 {
				t.Errorf("%d rows of the identical receipts, want 1", base)
			}
			var us []store.Usage
			q := store.UsageQuery{Agent: "ops", Skill: "deploy"}
			if srv == nil {
				us = r.usage(q)
			} else {
				var err error
				if us, err = srv.Usage(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			var loads int64
			for _, u := range us {
				if u.Action == "load" && u.Outcome == "ok" {
					loads += u.Count
				}
			}
			// The base, and the receipts differing in path, source (not
			// empty, so still counted under the skill), plugin, trust,
			// digest, transport, token, code or origin, which usage does
			// not count apart: n + 9*2.
			if loads != n+18 {
				t.Errorf("usage of ops/deploy load ok: %d, want %d", loads, n+18)
			}
		})
	}
}

// TestReceiptsMergeAcrossRetry: merging keeps the earliest time, and a
// merged batch that could not be written (kept in pending with its
// counts) merges again with what came meanwhile without losing a load.
func TestReceiptsMergeAcrossRetry(t *testing.T) {
	r := newReceiptLog(nil, slog.New(slog.DiscardHandler), store.Retention{})
	t.Cleanup(func() { r.close() })
	at := time.Now()
	merged := r.merge([]store.Receipt{mergeBase(at), mergeBase(at.Add(time.Millisecond)), mergeBase(at.Add(-time.Millisecond))})
	if len(merged) != 1 || merged[0].Count != 3 || !merged[0].Time.Equal(at.Add(-time.Millisecond)) {
		t.Fatalf("merged %+v, want one row of 3 with the earliest time", merged)
	}
	a, b := mergeBase(at), mergeBase(at)
	b.Agent = "dev"
	mixed := r.merge([]store.Receipt{a, a, b, a, b, b, a})
	if len(mixed) != 2 || mixed[0].Agent != "ops" || mixed[0].Count != 4 || mixed[1].Agent != "dev" || mixed[1].Count != 3 {
		t.Fatalf("interleaved runs merged into %+v, want ops 4 then dev 3", mixed)
	}
	again := r.merge(append(merged, mergeBase(at), store.Receipt{Agent: "x", Count: 4}))
	if len(again) != 2 || again[0].Count != 4 || again[1].Count != 4 {
		t.Fatalf("merged again %+v, want counts 4 and 4", again)
	}
}

// TestReceiptsMergeInterleaved: receipts that share skill, action and
// path (merge's map key) but differ in another field are told apart when
// they come interleaved, not in runs, so that each is found through the
// key's chain: every variant merges with its own kind only, whichever
// field tells it apart, and the rows keep the order of first appearance.
func TestReceiptsMergeInterleaved(t *testing.T) {
	r := newReceiptLog(nil, slog.New(slog.DiscardHandler), store.Retention{})
	t.Cleanup(func() { r.close() })
	first := time.Now().UTC().Truncate(time.Millisecond).Add(-time.Second)
	var kinds []store.Receipt
	kinds = append(kinds, mergeBase(first))
	v := reflect.ValueOf(mergeBase(first))
	for i := range v.NumField() {
		if v.Field(i).Kind() != reflect.String {
			continue
		}
		rc := mergeBase(first)
		reflect.ValueOf(&rc).Elem().Field(i).SetString("other")
		kinds = append(kinds, rc)
	}
	// Another skill too, and one receipt of a kind already seen with a
	// count (a row kept by a failed write).
	other := mergeBase(first)
	other.Skill = "build"
	kinds = append(kinds, other)
	const rounds = 7
	r.mu.Lock()
	for round := range rounds {
		for i, k := range kinds {
			k.Time = first.Add(time.Duration(round*len(kinds)+i) * time.Microsecond)
			r.pending = append(r.pending, k)
		}
	}
	kept := mergeBase(first.Add(-time.Second))
	kept.Count = 5
	r.pending = append(r.pending, kept)
	batch := r.pending
	r.pending = nil
	r.mu.Unlock()
	r.flushMu.Lock()
	out := r.merge(batch)
	r.flushMu.Unlock()
	if len(out) != len(kinds) {
		t.Fatalf("%d rows, want %d (one per kind)", len(out), len(kinds))
	}
	for i, rc := range out {
		want := kinds[i]
		got := rc
		got.Time, got.Count, want.Time = time.Time{}, 0, time.Time{}
		if got != want {
			t.Errorf("row %d is %+v, want %+v", i, got, want)
		}
		wantCount, wantTime := int64(rounds), first.Add(time.Duration(i)*time.Microsecond)
		if i == 0 {
			wantCount, wantTime = rounds+5, kept.Time
		}
		if rc.Count != wantCount || !rc.Time.Equal(wantTime) {
			t.Errorf("row %d: count %d at %v, want %d at %v", i, rc.Count, rc.Time, wantCount, wantTime)
		}
	}
}

// BenchmarkMerge is a flush's merge of receiptBatch receipts of a load
// spread over many skills (none merge) and of one hot skill (all do).
func BenchmarkMerge(b *testing.B) {
	r := newReceiptLog(nil, slog.New(slog.DiscardHandler), store.Retention{})
	b.Cleanup(func() { r.close() })
	for _, spread := range []bool{true, false} {
		name := "hot"
		if spread {
			name = "spread"
		}
		b.Run(name, func(b *testing.B) {
			src := make([]store.Receipt, receiptBatch)
			now := time.Now()
			for i := range src {
				src[i] = mergeBase(now)
				if spread {
					src[i].Skill = fmt.Sprintf("skill-%05d", i*7919%10000)
					src[i].Digest = fmt.Sprintf("sha256:%064x", i)
				}
			}
			batch := make([]store.Receipt, len(src))
			r.flushMu.Lock()
			defer r.flushMu.Unlock()
			for b.Loop() {
				copy(batch, src)
				r.merge(batch)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(src)), "ns/receipt")
		})
	}
}

// TestReceiptRingCopiesRarely: without a store, receipts are kept in an
// in-memory ring of the newest receiptRing rows. Once full, a flush of a
// batch does not copy the whole ring to trim it (2.6 MB allocated a
// flush, before): at most 64 KiB allocated a flush on average; and the
// readers still see exactly the newest receiptRing rows, at the bound
// and one past it.
func TestReceiptRingCopiesRarely(t *testing.T) {
	r := newReceiptLog(nil, slog.New(slog.DiscardHandler), store.Retention{})
	t.Cleanup(func() { r.close() })
	now := time.Now().UTC()
	n := 0
	names := make([]string, 3*receiptRing+60*receiptBatch)
	for i := range names {
		names[i] = fmt.Sprintf("s%06d", i)
	}
	addBatch := func(k int) {
		for range k {
			rc := mergeBase(now.Add(time.Duration(n) * time.Microsecond))
			rc.Skill = names[n] // none merge
			r.add(rc)
			n++
		}
		if err := r.flush(); err != nil {
			t.Fatal(err)
		}
	}
	check := func(want int) {
		t.Helper()
		got := r.memory(store.ReceiptQuery{Limit: 3 * receiptRing})
		if len(got) != want {
			t.Fatalf("after %d receipts, %d kept, want %d", n, len(got), want)
		}
		if got[0].Skill != fmt.Sprintf("s%06d", n-1) || got[len(got)-1].Skill != fmt.Sprintf("s%06d", n-want) {
			t.Fatalf("after %d receipts, kept %s to %s", n, got[len(got)-1].Skill, got[0].Skill)
		}
		var total int64
		for _, u := range r.usage(store.UsageQuery{Limit: 3 * receiptRing}) {
			total += u.Count
		}
		if total != int64(want) {
			t.Fatalf("after %d receipts, usage counts %d, want %d", n, total, want)
		}
	}
	addBatch(receiptRing)
	check(receiptRing)
	addBatch(1)
	check(receiptRing)
	addBatch(receiptRing - 1) // twice the ring: at the trim's bound
	check(receiptRing)
	addBatch(1) // one past it: trimmed
	check(receiptRing)
	if len(r.ring) != receiptRing {
		t.Errorf("the ring holds %d rows after its trim, want %d", len(r.ring), receiptRing)
	}
	for range 2 * receiptRing / receiptBatch { // the ring's array at its size
		addBatch(receiptBatch)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const flushes = 30
	for range flushes {
		addBatch(receiptBatch)
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / flushes; per > 64<<10 {
		t.Errorf("%d bytes allocated a flush of a full ring, want at most 64 KiB (the ring is not copied to trim it)", per)
	}
	check(receiptRing)
}
