package render

import (
	"encoding/binary"
	"slices"
	"testing"
)

// TestNoBasis: NoBasis (loadout prompt, which renders once) makes no
// Basis, and changes nothing else: the same text and report, for every
// format, over and under the budget.
func TestNoBasis(t *testing.T) {
	es := basisCatalog(300)
	for _, f := range formats {
		for _, budget := range []int{-1, 8000, 1500} {
			opt := Options{Format: f, Budget: budget, Stable: true, Priority: []string{"skill-0001"}}
			text, rep := Prompt(es, nil, opt)
			opt.NoBasis = true
			text2, rep2 := Prompt(es, nil, opt)
			if rep.Basis == nil || rep2.Basis != nil {
				t.Errorf("%s, budget %d: Basis %v without NoBasis, %v with it", f, budget, rep.Basis != nil, rep2.Basis != nil)
			}
			rep.Basis = nil
			if text != text2 || !slices.Equal(rep.Tiers, rep2.Tiers) || !slices.Equal(rep.Names, rep2.Names) || rep.Chars != rep2.Chars || len(rep.Groups) != len(rep2.Groups) {
				t.Errorf("%s, budget %d: NoBasis changed the prompt", f, budget)
			}
		}
	}
}

// TestNewDomainsOf: the domains of a listing given entry by entry are
// those of the listing (catalog computes them from its skills before it
// builds the listing).
func TestNewDomainsOf(t *testing.T) {
	for _, n := range []int{150, 3000} {
		es := zipfCatalog(n, 3)
		want := NewDomains(es)
		calls := 0
		got := NewDomainsOf(len(es), func(i int) (string, string, string) {
			calls++
			return es[i].Name, es[i].Description, es[i].Category
		})
		if !slices.Equal(got.Keys, want.Keys) || !slices.Equal(got.Of, want.Of) || !slices.EqualFunc(got.Words, want.Words, slices.Equal) {
			t.Errorf("%d entries: NewDomainsOf differs from NewDomains", n)
		}
		if calls < n {
			t.Errorf("%d entries: %d calls", n, calls)
		}
	}
}

// TestEntTermsVarints: an entry's terms are read back as written, at the
// bounds of one, two and three bytes a term.
func TestEntTermsVarints(t *testing.T) {
	want := [][]int32{{0, 127, 128, 16383}, {}, {16384, 1<<21 - 1, 1 << 21, 5}}
	var b domainBuilder
	b.entOff = []int32{0}
	for _, ts := range want {
		for _, v := range ts {
			b.ents = binary.AppendUvarint(b.ents, uint64(v))
		}
		b.entOff = append(b.entOff, int32(len(b.ents)))
	}
	for i, ts := range want {
		got := []int32{}
		for v := range b.entTerms(i) {
			got = append(got, v)
		}
		if !slices.Equal(got, ts) {
			t.Errorf("entry %d: %v, want %v", i, got, ts)
		}
	}
}
