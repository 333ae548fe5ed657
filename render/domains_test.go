package render

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/terms"
	"github.com/loadout/loadout/internal/testutil"
)

// zipfCatalog is n skills whose names and descriptions draw made-up words
// by a Zipf law, as real text does: a few words in many skills, most in
// few. Its vocabulary grows as real skills' does (bench/cmd/domains over
// the public collections and two larger ones: 9,100 words at 2,000
// skills, 22,300 at 10,000; here 6,800 and 21,900, and 67,200 at
// 50,000), and its descriptions are 8 to 160 words, skewed short (about
// 237 bytes a skill with its name, 265 in the real ones).
func zipfCatalog(n int, seed uint64) []Entry {
	r := rand.New(rand.NewPCG(seed, 1))
	syl := []string{"ka", "lo", "mi", "nu", "pe", "ra", "si", "to", "vu", "ze", "ba", "de", "fi", "go", "hu", "ja", "ke", "li", "mo", "ny"}
	word := func(k uint64) string {
		var b strings.Builder
		for {
			b.WriteString(syl[k%20])
			k /= 20
			if k == 0 {
				return b.String()
			}
		}
	}
	desc := rand.NewZipf(r, 1.3, 1, 1e6)
	topic := rand.NewZipf(r, 1.2, 4, 3000-1)
	es := make([]Entry, n)
	for i := range es {
		name := word(topic.Uint64()+20) + "-" + word(topic.Uint64()+20) + "-" + strconv.Itoa(i)
		var d strings.Builder
		nw := 8 + int(r.ExpFloat64()*30)
		for j := range min(nw, 160) {
			w := word(desc.Uint64())
			switch {
			case j == 0:
				w = strings.ToUpper(w[:1]) + w[1:]
			case j%11 == 0:
				d.WriteString(". The")
			case j%5 == 0:
				d.WriteString(" and")
			}
			if j > 0 {
				d.WriteByte(' ')
			}
			d.WriteString(w)
		}
		d.WriteString(". Use when the user asks for it.")
		es[i] = Entry{Name: name, Description: d.String(), Location: "/home/ann/.agents/skills/" + name + "/SKILL.md", Dir: "/home/ann/.agents/skills/" + name}
		if r.IntN(50) == 0 {
			es[i].Category = "team " + strconv.Itoa(r.IntN(5))
		}
	}
	return es
}

// check asserts what every Domains must hold, for any listing.
func checkDomains(t *testing.T, listing []Entry, d *Domains) {
	t.Helper()
	if len(d.Of) != len(listing) || len(d.Words) != len(d.Keys) {
		t.Fatalf("%d entries, %d Of; %d keys, %d word lists", len(listing), len(d.Of), len(d.Keys), len(d.Words))
	}
	// Each entry's terms (name and the first 200 of the description, as
	// the search index takes them).
	entTerms := make([]map[string]bool, len(listing))
	for i, e := range listing {
		m := map[string]bool{}
		for _, t := range terms.Append(e.Name, nil) {
			m[t] = true
		}
		ts := terms.Append(e.Description, nil)
		for _, t := range ts[:min(len(ts), domainMaxTerms)] {
			m[t] = true
		}
		entTerms[i] = m
	}
	members := make([][]int, len(d.Keys))
	for i, g := range d.Of {
		if g < 0 || g >= len(d.Keys) {
			t.Fatalf("entry %d: domain %d of %d", i, g, len(d.Keys))
		}
		members[g] = append(members[g], i)
	}
	seen := map[string]bool{}
	for g, k := range d.Keys {
		if len(members[g]) == 0 {
			t.Errorf("domain %q has no entry", k)
		}
		if seen[strings.ToLower(k)] {
			t.Errorf("label %q twice", k)
		}
		seen[strings.ToLower(k)] = true
		if k == "" || strings.ContainsAny(k, "/\\") {
			t.Errorf("label %q: empty or a path", k)
		}
		if len(d.Words[g]) > domainWords {
			t.Errorf("%q: %d words", k, len(d.Words[g]))
		}
		for _, w := range d.Words[g] {
			tw := terms.Term(w)
			if tw == "" || w != strings.ToLower(w) || w == k || tw == terms.Term(k) {
				t.Errorf("%q: word %q (term %q) is not a search word, or is the label", k, w, tw)
			}
			n := 0
			for _, i := range members[g] {
				if entTerms[i][tw] {
					n++
				}
			}
			if n == 0 || n < 2 && len(members[g]) > 1 {
				t.Errorf("%q: word %q matches %d of its %d members", k, w, n, len(members[g]))
			}
		}
		// The first entry of a domain comes after the first of the one before.
		if g > 0 && len(members[g]) > 0 && len(members[g-1]) > 0 && members[g][0] < members[g-1][0] {
			t.Errorf("domain %d (%q) starts before domain %d", g, k, g-1)
		}
	}
	for i, e := range listing {
		k := d.Keys[d.Of[i]]
		if c := categoryKey(e.Category); c != "" {
			if !strings.EqualFold(k, c) {
				t.Errorf("%s: category %q, domain %q", e.Name, e.Category, k)
			}
			continue
		}
		usable := false
		for tm := range entTerms[i] {
			usable = usable || usableTerm(tm) && !genericTerms[tm]
		}
		if (k == OtherDomain) == usable {
			t.Errorf("%s: domain %q, has usable words: %v", e.Name, k, usable)
		}
	}
}

func TestDomainsInvariants(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 50, 400, 3000} {
		es := zipfCatalog(n, uint64(n))
		d := NewDomains(es)
		checkDomains(t, es, d)
	}
	es := genCatalog(rand.New(rand.NewPCG(3, 3)), 500)
	checkDomains(t, es, NewDomains(es))
}

func TestDomainsDeterministic(t *testing.T) {
	es := zipfCatalog(2000, 7)
	a := NewDomains(es)
	for range 3 {
		if b := NewDomains(es); !reflect.DeepEqual(a, b) {
			t.Fatal("two runs over the same listing differ")
		}
	}
}

func TestDomainsCategoryWins(t *testing.T) {
	es := []Entry{
		{Name: "pdf-fill", Description: "Fill PDF forms.", Category: "Office/Docs"},
		{Name: "pdf-split", Description: "Split PDF files into pages."},
		{Name: "pdf-merge", Description: "Merge PDF files.", Dir: "/home/ann/skills/pdf-merge"},
		{Name: "pdf-sign", Description: "Sign PDF forms.", Category: "Office/Docs"},
		{Name: "x", Description: "The and of. A skill, via which."},
		{Name: "csv-clean", Description: "Clean CSV tables.", Category: "files"},
		{Name: "sheets", Description: "Sort spreadsheet tables.", Category: "Files"},
	}
	d := NewDomains(es)
	checkDomains(t, es, d)
	got := make([]string, len(es))
	for i := range es {
		got[i] = d.Keys[d.Of[i]]
	}
	// A category wins over the words ("pdf"), its slash becomes a space;
	// pdf-split and pdf-merge share "files" and "pdf" ("files" < "pdf"),
	// and a word domain labelled as a category joins it, as does a
	// category spelt otherwise; an entry of stopwords and generic words
	// alone is "other".
	want := []string{"Office Docs", "files", "files", "Office Docs", OtherDomain, "files", "files"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if !reflect.DeepEqual(d.Keys, []string{"Office Docs", "files", OtherDomain}) {
		t.Errorf("keys %q", d.Keys)
	}
}

// TestDomainsNameBound: a name's words count up to domainMaxNameWords.
func TestDomainsNameBound(t *testing.T) {
	for _, at := range []int{domainMaxNameWords, domainMaxNameWords + 1} {
		var es []Entry
		for i := range 3 {
			var name strings.Builder
			for k := range at - 1 {
				fmt.Fprintf(&name, "n%dx%d-", i, k)
			}
			name.WriteString("zebra")
			es = append(es, Entry{Name: name.String(), Description: fmt.Sprintf("Own%dword.", i)})
		}
		d := NewDomains(es)
		checkDomains(t, es, d)
		if grouped := d.Keys[d.Of[0]] == "zebra"; grouped != (at <= domainMaxNameWords) {
			t.Errorf("a shared word at name word %d: grouped by it %v (keys %q)", at, grouped, d.Keys)
		}
	}
}

// TestDomainsDescriptionBound: a word counts only among the first 200
// terms of a description, as the search index takes them.
func TestDomainsDescriptionBound(t *testing.T) {
	for _, at := range []int{domainMaxTerms, domainMaxTerms + 1} {
		var es []Entry
		for i := range 3 {
			var d strings.Builder
			for k := range at - 1 {
				fmt.Fprintf(&d, "w%dx%d ", i, k) // a term of its own
			}
			d.WriteString("zebra.")
			es = append(es, Entry{Name: "n" + strconv.Itoa(i), Description: d.String()})
		}
		d := NewDomains(es)
		checkDomains(t, es, d)
		if grouped := d.Keys[d.Of[0]] == "zebra"; grouped != (at <= domainMaxTerms) {
			t.Errorf("a shared word at term %d: grouped by it %v (keys %q)", at, grouped, d.Keys)
		}
	}
}

// TestDomainsCap pins the cap: a word in exactly domainCapPercent of the
// uncategorised entries labels a domain; one in one entry more does not.
func TestDomainsCap(t *testing.T) {
	const n = 100
	cap := domainCap(n)
	if cap != 15 || domainCap(10) != domainMinCap || domainCap(73) != domainMinCap || domainCap(74) != 11 {
		t.Fatalf("domainCap: %d at 100, %d at 10, %d at 73, %d at 74", cap, domainCap(10), domainCap(73), domainCap(74))
	}
	for _, k := range []int{cap, cap + 1} {
		es := make([]Entry, n)
		for i := range es {
			es[i] = Entry{Name: "tool-" + strconv.Itoa(i), Description: fmt.Sprintf("Uniq%dword and alone%dword.", i, i)}
			if i < k {
				es[i].Description += " Handles kubernetes clusters."
			}
		}
		// The rest share words of their own in pairs, so each has a domain.
		for i := k; i < n; i++ {
			es[i].Description += fmt.Sprintf(" Pairs pair%dword.", i/2)
		}
		d := NewDomains(es)
		checkDomains(t, es, d)
		hasK8s := slices.Contains(d.Keys, "kubernetes") || slices.Contains(d.Keys, "clusters") || slices.Contains(d.Keys, "handles")
		if want := k <= cap; hasK8s != want {
			t.Errorf("a word in %d of %d entries (cap %d): labels a domain %v, want %v (keys %q)", k, n, cap, hasK8s, want, d.Keys)
		}
	}
}

// TestDomainsAbsorb pins the threshold of a small domain: one of
// domainHeadPermille of the entries keeps its entries; one entry fewer
// gives them to the large domain they share words with.
func TestDomainsAbsorb(t *testing.T) {
	const n = 1200 // heads: at least 6 entries
	head := max(2, n*domainHeadPermille/1000)
	if head != 6 {
		t.Fatalf("head size %d, want 6", head)
	}
	for _, k := range []int{head, head - 1} {
		var es []Entry
		// A large domain: "kubernetes" and a profile word "helm".
		for i := range 300 {
			es = append(es, Entry{Name: "kube-" + strconv.Itoa(i), Description: "Deploy kubernetes charts with helm."})
		}
		// A small one, "terraform", whose entries also say "helm".
		for i := range k {
			es = append(es, Entry{Name: "tf-" + strconv.Itoa(i), Description: "Plan terraform modules, then helm."})
		}
		// Filler in domains of 12 (pairs of words of their own).
		for i := len(es); i < n; i++ {
			es = append(es, Entry{Name: "fill-" + strconv.Itoa(i), Description: fmt.Sprintf("Filler group%dword.", i/12)})
		}
		d := NewDomains(es)
		checkDomains(t, es, d)
		// The small domain's label is its first word by term ("modul" <
		// "plan" < "terraform"), all in as many entries.
		kube, tf := d.Keys[d.Of[0]], d.Keys[d.Of[300]]
		if kept := tf != kube; kept != (k >= head) || kept && tf != "modules" {
			t.Errorf("a domain of %d (head %d): its entries are in %q (the large domain: %q)", k, head, tf, kube)
		}
	}
}

func TestDomainsWordsAndSpelling(t *testing.T) {
	var es []Entry
	for i := range 30 {
		es = append(es, Entry{Name: "form-" + strconv.Itoa(i), Description: "Fills PDF forms and signatures."})
	}
	for i := range 30 {
		es = append(es, Entry{Name: "chart-" + strconv.Itoa(i), Description: "Draws charts from spreadsheets."})
	}
	// Words of one member of a group are not shown; of two they are.
	es[30].Description += " Uniqueone."
	es[31].Description += " Sharedtwo."
	es[32].Description += " Sharedtwo."
	// Filler, so that 30 skills are under the cap.
	for i := range 200 {
		es = append(es, Entry{Name: "z" + strconv.Itoa(i), Description: fmt.Sprintf("Other%dthing alone.", i)})
	}
	d := NewDomains(es)
	checkDomains(t, es, d)
	g := d.Of[0]
	// Tied counts break by term: "fill" < "form" < "pdf" < "signatur".
	if d.Keys[g] != "fills" || !reflect.DeepEqual(d.Words[g], []string{"form", "pdf", "signatures"}) {
		t.Errorf("got %q %q", d.Keys[g], d.Words[g])
	}
	// "chart" (names) and "charts" are as common: the first by order wins.
	// "sharedtwo", in two members, is shown; "uniqueone", in one, is not.
	if g := d.Of[30]; d.Keys[g] != "chart" || !reflect.DeepEqual(d.Words[g], []string{"draws", "spreadsheets", "sharedtwo"}) {
		t.Errorf("got %q %q", d.Keys[g], d.Words[g])
	}
}

func TestEachWordMatchesTermsWords(t *testing.T) {
	for _, s := range []string{
		"", "a", "Fill PDF forms.", "café MENÜ über-cool x2 3d", "ÀÉÎ ǅ İstanbul straße", "--a--b--", "日本語 テスト", "end",
	} {
		var want, got []string
		terms.Words(s, func(w string) { want = append(want, w) })
		eachWord(s, 1<<30, nil, func(w []byte, _ uint32) bool { got = append(got, string(w)); return true })
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %q, want %q", s, got, want)
		}
	}
	// The limit counts the words f takes.
	var got []string
	eachWord("one two three four", 2, nil, func(w []byte, _ uint32) bool { got = append(got, string(w)); return string(w) != "two" })
	if !reflect.DeepEqual(got, []string{"one", "two", "three"}) {
		t.Errorf("limit: got %q", got)
	}
}

func ExampleNewDomains() {
	listing := []Entry{
		{Name: "pdf-fill", Description: "Fill PDF forms and sign them."},
		{Name: "pdf-split", Description: "Split PDF files into pages."},
		{Name: "pdf-ocr", Description: "Read scanned PDF pages and forms."},
		{Name: "deploy-helm", Description: "Deploy Helm charts to a Kubernetes cluster."},
		{Name: "k8s-logs", Description: "Read Kubernetes pod logs in a cluster."},
		{Name: "k8s-scale", Description: "Scale Kubernetes deployments."},
		{Name: "csv-clean", Description: "Clean CSV tables.", Category: "data"},
		{Name: "sql-query", Description: "Query SQL tables.", Category: "data"},
		{Name: "1", Description: "Why not?"},
	}
	d := NewDomains(listing)
	for g, k := range d.Keys {
		var names []string
		for i, e := range listing {
			if d.Of[i] == g {
				names = append(names, e.Name)
			}
		}
		fmt.Printf("%s %q: %s\n", k, d.Words[g], strings.Join(names, " "))
	}
	// Output:
	// pdf ["forms" "pages"]: pdf-fill pdf-split pdf-ocr
	// kubernetes ["cluster" "deploy" "k8s"]: deploy-helm k8s-logs k8s-scale
	// data ["tables"]: csv-clean sql-query
	// other []: 1
}

func BenchmarkNewDomains10000(b *testing.B) { benchDomains(b, 10000) }
func BenchmarkNewDomains50000(b *testing.B) { benchDomains(b, 50000) }

func benchDomains(b *testing.B, n int) {
	es := zipfCatalog(n, 1)
	b.ReportAllocs()
	// CPU time too (garbage collection included): the machine the figures
	// are taken on is shared, and wall time counts the others' turns.
	cpu0 := testutil.CPUTime()
	for b.Loop() {
		NewDomains(es)
	}
	b.ReportMetric(float64(testutil.CPUTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// TestDomainsWordMinMembers pins the near miss of a word's support: a
// word of two members of a domain is shown, one of a single member is not.
func TestDomainsWordMinMembers(t *testing.T) {
	for _, k := range []int{1, 2} {
		var es []Entry
		for i := range 4 {
			e := Entry{Name: "kube" + strconv.Itoa(i), Description: "Kubernetes."}
			if i < k {
				e.Description += " Helm."
			}
			es = append(es, e)
		}
		d := NewDomains(es)
		checkDomains(t, es, d)
		g := d.Of[0]
		if shown := slices.Contains(d.Words[g], "helm"); d.Keys[g] != "kubernetes" || shown != (k == 2) {
			t.Errorf("a word in %d of 4: %q %q", k, d.Keys[g], d.Words[g])
		}
	}
}

// domainOfName is the label of the domain of the entry named name.
func domainOfName(t *testing.T, es []Entry, d *Domains, name string) string {
	t.Helper()
	for i := range es {
		if es[i].Name == name {
			return d.Keys[d.Of[i]]
		}
	}
	t.Fatalf("no entry %q", name)
	return ""
}

// An entry left after the cover takes its rarest word; between words as
// rare, the first in alphabetical order, wherever it stands in the text.
func TestDomainsLeftRarestWord(t *testing.T) {
	for _, tc := range []struct {
		name, desc, want string
	}{
		{"alpha", "beta", "alpha"},
		{"beta", "alpha", "alpha"},
		{"alpha", "beta gamma", "alpha"},
	} {
		es := []Entry{{Name: tc.name, Description: tc.desc}}
		if got := NewDomains(es).Keys; !slices.Equal(got, []string{tc.want}) {
			t.Errorf("%q %q: domains %q, want [%q]", tc.name, tc.desc, got, tc.want)
		}
	}
	// A rarer word wins over an earlier one in alphabetical order: "zinc"
	// is in one entry, "apple" in two (the other covered by "mango"). Names
	// are words too: the entry is named by its rarest word.
	es := []Entry{
		{Name: "m1", Description: "mango apple"},
		{Name: "m2", Description: "mango"},
		{Name: "m3", Description: "mango"},
		{Name: "zinc", Description: "apple"},
	}
	d := NewDomains(es)
	if got := domainOfName(t, es, d, "zinc"); got != "zinc" {
		t.Errorf("left is in %q, want zinc (its rarest word)", got)
	}
}

// A word that one entry not yet covered shares only with entries already
// in a domain makes no domain: the entry ("zinc", its name its rarest
// word) gets its own rarest word.
func TestDomainsSharedOnlyWithCovered(t *testing.T) {
	for _, first := range []string{"word", "category"} {
		es := []Entry{
			{Name: "m1", Description: "mango kiwi"},
			{Name: "m2", Description: "mango"},
			{Name: "m3", Description: "mango"},
			{Name: "zinc", Description: "kiwi"},
		}
		if first == "category" {
			es[0].Category = "fruit"
		}
		d := NewDomains(es)
		if got := domainOfName(t, es, d, "zinc"); got != "zinc" {
			t.Errorf("%s first: zinc is in %q, want zinc: kiwi's other entry is in a domain already (%q)", first, got, d.Keys)
		}
		if got := domainOfName(t, es, d, "m1"); got != map[string]string{"word": "mango", "category": "fruit"}[first] {
			t.Errorf("%s first: m1 is in %q", first, got)
		}
	}
	// Two entries not yet covered that share a word make its domain, even
	// when each has a rarer word of its own.
	es := []Entry{
		{Name: "m1", Description: "mango"},
		{Name: "m2", Description: "mango"},
		{Name: "m3", Description: "mango"},
		{Name: "p1", Description: "kiwi zinc"},
		{Name: "p2", Description: "kiwi yam"},
	}
	d := NewDomains(es)
	if got := []string{domainOfName(t, es, d, "p1"), domainOfName(t, es, d, "p2")}; !slices.Equal(got, []string{"kiwi", "kiwi"}) {
		t.Errorf("p1, p2 are in %q, want kiwi, kiwi", got)
	}
	// The same once a word's count has fallen to two: "kiwi" is in three
	// entries, one of them taken by "apple" first.
	es = []Entry{
		{Name: "a1", Description: "apple kiwi"},
		{Name: "a2", Description: "apple"},
		{Name: "a3", Description: "apple"},
		{Name: "p1", Description: "kiwi zinc"},
		{Name: "p2", Description: "kiwi yam"},
	}
	d = NewDomains(es)
	if got := []string{domainOfName(t, es, d, "a1"), domainOfName(t, es, d, "p1"), domainOfName(t, es, d, "p2")}; !slices.Equal(got, []string{"apple", "kiwi", "kiwi"}) {
		t.Errorf("a1, p1, p2 are in %q, want apple, kiwi, kiwi", got)
	}
}

// Every entry with no usable word is in one domain "other", however many.
func TestDomainsOneOther(t *testing.T) {
	es := []Entry{{Name: "a"}, {Name: "1", Description: "2 3"}, {Name: "x", Description: "y"}}
	d := NewDomains(es)
	if !slices.Equal(d.Keys, []string{OtherDomain}) || !slices.Equal(d.Of, []int{0, 0, 0}) {
		t.Errorf("domains %q, of %v; want [other], [0 0 0]", d.Keys, d.Of)
	}
	// With a category and a word domain before it.
	es = append([]Entry{{Name: "c", Category: "fruit"}, {Name: "k1", Description: "kiwi"}, {Name: "k2", Description: "kiwi"}}, es...)
	d = NewDomains(es)
	if !slices.Equal(d.Keys, []string{"fruit", "kiwi", OtherDomain}) || !slices.Equal(d.Of, []int{0, 1, 1, 2, 2, 2}) {
		t.Errorf("domains %q, of %v; want [fruit kiwi other], [0 1 1 2 2 2]", d.Keys, d.Of)
	}
}

// A label is the commonest spelling of its term among the members, even
// when a rarer one comes first in alphabetical order.
func TestDomainsCommonestSpelling(t *testing.T) {
	var es []Entry
	for i, w := range []string{"tests", "testing", "tests", "testing", "tests"} {
		es = append(es, Entry{Name: "e" + strconv.Itoa(i), Description: w})
	}
	if d := NewDomains(es); !slices.Equal(d.Keys, []string{"tests"}) {
		t.Errorf("domains %q, want [tests] (3 tests, 2 testing)", d.Keys)
	}
}

// entries is n entries named prefix1.. with description desc.
func entries(prefix string, n int, desc string) []Entry {
	es := make([]Entry, n)
	for i := range es {
		es[i] = Entry{Name: prefix + strconv.Itoa(i+1), Description: desc}
	}
	return es
}

// An entry left alone joins the large domain with whose members it shares
// a word that at least two of them have; a word of one member is no match.
func TestDomainsAbsorbWordOfTwoMembers(t *testing.T) {
	es := []Entry{
		{Name: "d1", Description: "docx table"},
		{Name: "d2", Description: "docx table"},
		{Name: "d3", Description: "docx margin"},
		{Name: "zinc", Description: "table"},
		{Name: "yam", Description: "margin"},
	}
	d := NewDomains(es)
	if got := domainOfName(t, es, d, "zinc"); got != "docx" {
		t.Errorf("zinc is in %q, want docx (table: 2 of its 3 members)", got)
	}
	if got := domainOfName(t, es, d, "yam"); got != "yam" {
		t.Errorf("yam is in %q, want yam (margin: 1 of docx's members)", got)
	}
}

// An entry shares most with the domain where its word is in the larger
// share of the members, not the larger number: "tomato" is in 2 of the 3
// of "apple", "umbrella" in 2 of the 4 of "banana", both in 3 entries.
func TestDomainsAbsorbByShare(t *testing.T) {
	es := slices.Concat(
		entries("b", 2, "banana umbrella"), entries("bb", 2, "banana"),
		entries("a", 2, "apple tomato"), entries("aa", 1, "apple"),
		[]Entry{{Name: "zinc", Description: "tomato umbrella"}})
	d := NewDomains(es)
	if got := domainOfName(t, es, d, "zinc"); got != "apple" {
		t.Errorf("zinc is in %q, want apple (%q)", got, d.Keys)
	}
}

// Between words in as large a share of two domains' members, the rarer
// word counts more: "tomato" is in 3 entries, "umbrella" in 5 (two of
// them in a category).
func TestDomainsAbsorbByRarity(t *testing.T) {
	es := slices.Concat(
		entries("a", 2, "apple umbrella"), entries("aa", 1, "apple"),
		entries("b", 2, "banana tomato"), entries("bb", 1, "banana"),
		[]Entry{
			{Name: "c1", Description: "umbrella", Category: "misc"},
			{Name: "c2", Description: "umbrella", Category: "misc"},
			{Name: "zinc", Description: "tomato umbrella"},
		})
	d := NewDomains(es)
	if got := domainOfName(t, es, d, "zinc"); got != "banana" {
		t.Errorf("zinc is in %q, want banana (%q)", got, d.Keys)
	}
}

// An entry is matched against a large domain's 64 most distinctive words
// only: of its 65 words in two members or more, the 64th ("zulu", one
// shared with an entry left) counts; the 65th ("stale", in the most
// entries) does not.
func TestDomainsAbsorbProfileLimit(t *testing.T) {
	var words []string
	for i := range 62 {
		words = append(words, "q"+string(rune('a'+i/26))+string(rune('a'+i%26)))
	}
	shared := strings.Join(words, " ")
	es := []Entry{
		{Name: "h1", Description: "hub zulu stale " + shared},
		{Name: "h2", Description: "hub zulu stale " + shared},
		{Name: "h3", Description: "hub"},
		{Name: "c1", Description: "stale", Category: "misc"},
		{Name: "c2", Description: "stale", Category: "misc"},
		{Name: "c3", Description: "stale", Category: "misc"},
		{Name: "yam", Description: "stale"},
		{Name: "zinc", Description: "zulu"},
	}
	d := NewDomains(es)
	if got := domainOfName(t, es, d, "zinc"); got != "hub" {
		t.Errorf("zinc is in %q, want hub (zulu is hub's 64th word)", got)
	}
	if got := domainOfName(t, es, d, "yam"); got != "yam" {
		t.Errorf("yam is in %q, want yam (stale is hub's 65th word)", got)
	}
}

// An entry left goes to the domain it shares most with; at a tie, to the
// domain chosen first ("apple", before "banana" in alphabetical order);
// sharing nothing, it stays. Its words are each in 2 of a domain's 4
// members and in 3 entries.
func TestDomainsAbsorbBest(t *testing.T) {
	for _, tc := range []struct{ desc, want string }{
		{"kiwi mango", "apple"},
		{"kiwi lime mango", "apple"},
		{"kiwi mango nut", "banana"},
		{"pear", "pear"},
	} {
		es := slices.Concat(
			entries("a", 2, "apple kiwi lime"), entries("aa", 2, "apple"),
			entries("b", 2, "banana mango nut"), entries("bb", 2, "banana"),
			[]Entry{{Name: "zinc", Description: tc.desc}})
		d := NewDomains(es)
		if got := domainOfName(t, es, d, "zinc"); got != tc.want {
			t.Errorf("%q is in %q, want %q (%q)", tc.desc, got, tc.want, d.Keys)
		}
	}
}

// The first word domain may be small too: here the cover chooses nothing
// ("common" is in more than 10 uncategorised entries), so the first domain
// is the entry "zinc" alone, and it joins "common", which it shares.
func TestDomainsAbsorbFirstWordDomain(t *testing.T) {
	es := slices.Concat(
		[]Entry{{Name: "c1", Description: "misc", Category: "misc"}, {Name: "zinc", Description: "common"}},
		slices.Repeat([]Entry{{Name: "common"}}, 11))
	d := NewDomains(es)
	if got := domainOfName(t, es, d, "zinc"); got != "common" {
		t.Errorf("zinc is in %q, want common (%q)", got, d.Keys)
	}
}

// A label is the commonest spelling of its term, also when the listing's
// vocabulary outgrows the word table between its members: 40 domains have
// 2 members that say "<root>s" before 14,000 words of other entries, and 2
// that say it and 3 that say "<root>ing" after them.
func TestDomainsSpellingLargeVocabulary(t *testing.T) {
	var roots []string
	for _, a := range "bcdfghjklm" {
		for _, b := range "aeio" {
			r := "z" + string(b) + string(a) + "rb"
			if terms.Term(r+"s") != terms.Term(r+"ing") {
				t.Fatalf("%ss and %sing are different terms", r, r)
			}
			roots = append(roots, r)
		}
	}
	var es []Entry
	add := func(desc string) {
		es = append(es, Entry{Name: "e" + strconv.Itoa(len(es)), Description: desc})
	}
	for _, r := range roots {
		add(r + "s")
		add(r + "s")
	}
	for i := range 70 {
		var d strings.Builder
		for j := range 200 {
			d.WriteString("w" + strconv.FormatInt(int64(i*200+j), 36) + " ")
		}
		add(d.String())
	}
	for _, r := range roots {
		add(r + "s")
		add(r + "s")
		for range 3 {
			add(r + "ing")
		}
	}
	d := NewDomains(es)
	for _, r := range roots {
		if !slices.Contains(d.Keys, r+"s") {
			t.Errorf("no domain %ss (4 members say it, 3 %sing)", r, r)
		}
	}
}

// Bytes that are not UTF-8 (0x80 here, the first byte past ASCII) are
// separators, as terms.Words takes them, before a word and inside one.
func TestDomainsInvalidUTF8(t *testing.T) {
	es := entries("kube-", 4, "\x80Kube\x80rnetes helm\x80.")
	es = append(es, entries("tool-", 4, "Other alone.")...)
	d := NewDomains(es)
	checkDomains(t, es, d)
	g := d.Of[0]
	if d.Keys[g] != "helm" || !reflect.DeepEqual(d.Words[g], []string{"kube", "rnetes"}) {
		t.Errorf("got %q %q, want \"helm\" [kube rnetes]", d.Keys[g], d.Words[g])
	}
}

// A domain's words rank by members with the word times ln(entries /
// entries with it): "argo", in 2 of 100 (2·ln 50 = 7.8), comes before
// "helm", in 3 members but 10 of 100 (3·ln 10 = 6.9).
func TestDomainsWordsByRarity(t *testing.T) {
	es := entries("kube-", 12, "Kubernetes.")
	for i := range 3 {
		es[i].Description += " Helm."
	}
	es[3].Description += " Argo."
	es[4].Description += " Argo."
	for i := range 88 {
		e := Entry{Name: "tool-" + strconv.Itoa(i), Description: fmt.Sprintf("Pairs pair%dword.", i/2)}
		if i < 7 {
			e.Description += " Helm."
		}
		es = append(es, e)
	}
	d := NewDomains(es)
	checkDomains(t, es, d)
	g := d.Of[0]
	if d.Keys[g] != "kube" || !reflect.DeepEqual(d.Words[g], []string{"kubernetes", "argo", "helm"}) {
		t.Errorf("got %q %q, want \"kube\" [kubernetes argo helm]", d.Keys[g], d.Words[g])
	}
}

// A word in exactly domainCap of the entries can be a domain's word; in
// one more it cannot. The domain is a category's, so the word is not
// taken as a label first.
func TestDomainsWordCap(t *testing.T) {
	const n = 100
	cap := domainCap(n)
	for _, k := range []int{cap, cap + 1} {
		es := entries("ops-", 20, "Deploys.")
		for i := range es {
			es[i].Category = "ops"
			if i < k {
				es[i].Description += " Helm."
			}
		}
		for i := range n - 20 {
			es = append(es, Entry{Name: "tool-" + strconv.Itoa(i), Description: fmt.Sprintf("Pairs pair%dword.", i/2)})
		}
		d := NewDomains(es)
		checkDomains(t, es, d)
		g := d.Of[0]
		if shown := slices.Contains(d.Words[g], "helm"); d.Keys[g] != "ops" || shown != (k <= cap) {
			t.Errorf("a word in %d of %d entries (cap %d): %q %q, want helm shown %v", k, n, cap, d.Keys[g], d.Words[g], k <= cap)
		}
	}
}
