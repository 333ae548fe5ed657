package catalog

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/loadout/loadout/internal/terms"
	"github.com/loadout/loadout/skill"
)

// Hit is one search result: a short entry, never a body.
type Hit struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Score       float64 `json:"score"`
	// Source is the skill's origin kind: folder, store or plugin.
	Source string `json:"source"`
	// Also names the other skills of the same description (clones), in
	// name order, at most 16 of them (maxAlso): any of them serves the same.
	// Name is the first of them by name; the index holds them as one
	// document, so clones take one hit however many there are.
	Also []string `json:"also,omitempty"`
}

// searchIndex is an inverted index over the names and descriptions of a
// loadout's skills, built on first search and kept with the immutable
// loadout. A loadout patched from one whose index was built gets a copy of
// that index with only the changed entries' postings changed (patched),
// so a search after a write does not index every skill again.
//
// Skills of the same description (exact equality) are clones
// (collections vendor each other's skills) and are one document: the
// terms of the first of them by name, its representative, and the others
// named in its hit's Also. So clones neither crowd the other skills out
// of the best documents nor make their words look common: idf, lengths
// and norms count documents, and a skill scores as much with 20 clones as
// alone.
type searchIndex struct {
	// entries are the documents' representatives; nil is a document
	// removed by a patch. They are skills, not a loadout's entries: the
	// index is the same for two loadouts of the same skills (an agent that
	// selects all of them and the global loadout), which share it (twin).
	entries []*skill.Skill
	// clones are the other skills of a document's description, in name
	// order, for the documents that have some.
	clones map[int32][]*skill.Skill
	// docOf is the live document of each description.
	docOf  map[string]int32
	live   int // documents not removed
	terms  map[string][]posting
	sorted []string // the terms, sorted, for prefix matches
	lens   []int
	total  int
	avgLen float64
	// norms are each document's length term of BM25,
	// bm25K1*(1-bm25B+bm25B*len/avgLen), made once per index by finish
	// rather than for every posting of every search.
	norms []float64
	// rank is each live document's place in name order (0 to live-1) by
	// its representative: ties of score are broken by name, and at 10,000
	// skills comparing names was most of a search's time (many skills
	// score alike), comparing ranks is not. A fresh index's documents are
	// in name order already; a patched one merges its new documents in
	// (mergeOrder).
	rank []int32
}

// BM25's parameters.
const bm25K1, bm25B = 1.2, 0.75

type posting struct {
	doc  int32
	tf   uint16
	name bool // the term is in the name
}

const maxDescTerms = 200

// indexBase is what a patched loadout's index starts from: the index of
// the loadout it was patched from, and the entries that went and came.
type indexBase struct {
	ix            *searchIndex
	removed, made []*Entry
}

// docTerms are the terms of one entry with their weights (the name
// counts three times, tags and the category twice, the first maxDescTerms words of the
// description once), which of them are in the name, and their total. It
// fills d's maps, cleared first: one docTerms serves every document of a
// build, which made two maps a document before (most of the build's
// garbage: 4.2 KB a skill).
type docTerms struct {
	counts map[string]int
	inName map[string]bool
	n      int
	toks   []string
}

func (d *docTerms) of(sk *skill.Skill) {
	if d.counts == nil {
		d.counts, d.inName = map[string]int{}, map[string]bool{}
	}
	clear(d.counts)
	clear(d.inName)
	counts, inName := d.counts, d.inName
	toks := terms.Append(sk.Name, d.toks[:0])
	for _, t := range toks {
		counts[t] += 3
		inName[t] = true
	}
	toks = terms.Append(sk.Description, toks[:0])
	if len(toks) > maxDescTerms {
		toks = toks[:maxDescTerms]
	}
	for _, t := range toks {
		counts[t]++
	}
	for _, t := range sk.Meta.Tags {
		toks = terms.Append(t, toks[:0])
		for _, t := range toks {
			counts[t] += 2
		}
	}
	// The category counts as a tag: the listing's group lines (render's
	// grouped tier) tell the model to search for a group's category.
	if c := sk.Meta.Category; c != "" {
		toks = terms.Append(c, toks[:0])
		for _, t := range toks {
			counts[t] += 2
		}
	}
	d.n = 0
	for _, c := range counts {
		d.n += c
	}
	d.toks = toks
}

// WarmSearch builds l's search index now, not on its first search: a
// server calls it as it starts, so the first search_skills at 10,000
// skills does not pay for the index (a search under way meanwhile waits
// for this build rather than starting its own).
func (l *Loadout) WarmSearch() { l.index() }

func (l *Loadout) index() *searchIndex {
	l.searchOnce.Do(func() {
		if ix := l.twin(); ix != nil {
			l.base = nil
			l.search.Store(ix)
			return
		}
		defer func() {
			if l.share != nil {
				l.share.add(l)
			}
		}()
		if b := l.base; b != nil {
			l.base = nil
			if ix := b.ix.patched(b.removed, b.made); ix != nil {
				l.search.Store(ix)
				return
			}
		}
		ix := build(l.names, l.byName)
		order := make([]int32, len(ix.entries))
		for i := range order {
			order[i] = int32(i) // l.names is sorted
		}
		ix.finish(order)
		l.search.Store(ix)
	})
	return l.search.Load()
}

// build indexes the entries of names (sorted) in two passes, to make
// little garbage: the first gives each term a number and records each
// document's (term, weight) pairs in one slice; the second lays every
// term's postings out in one array, each term's a slice of it (full, so
// a patch copies rather than appends into it). Postings grown one append
// at a time, and two maps a document, made 4.2 KB of garbage a skill and
// kept 526 B a skill at 20,000 skills (TestSearchIndexCost).
func build(names []string, byName map[string]*Entry) *searchIndex {
	ix := &searchIndex{docOf: make(map[string]int32, len(names)), clones: map[int32][]*skill.Skill{},
		lens: make([]int, 0, len(names))}
	ids := map[string]int32{}
	var list []string // the terms by number
	var count []int32 // each term's postings
	var pairs chunked // the documents' terms in document order, doc holding the term's number
	var per []int32   // each document's pairs
	var d docTerms
	for _, name := range names { // sorted: the first of a description is its representative
		sk := byName[name].Skill
		if doc, ok := ix.docOf[sk.Description]; ok {
			ix.clones[doc] = append(ix.clones[doc], sk)
			continue
		}
		ix.docOf[sk.Description] = int32(len(ix.entries))
		ix.entries = append(ix.entries, sk)
		d.of(sk)
		for t, c := range d.counts {
			id, ok := ids[t]
			if !ok {
				id = int32(len(list))
				ids[t] = id
				list = append(list, t)
				count = append(count, 0)
			}
			count[id]++
			pairs.add(posting{doc: id, tf: uint16(min(c, 65535)), name: d.inName[t]})
		}
		per = append(per, int32(len(d.counts)))
		ix.lens = append(ix.lens, d.n)
		ix.total += d.n
	}
	ix.live = len(ix.entries)
	at := make([]int32, len(list)) // where each term's next posting goes
	var sum int32
	for id, c := range count {
		at[id] = sum
		sum += c
	}
	flat := make([]posting, pairs.n)
	i := 0
	for doc, n := range per {
		for end := i + int(n); i < end; i++ {
			p := pairs.at(i)
			flat[at[p.doc]] = posting{doc: int32(doc), tf: p.tf, name: p.name}
			at[p.doc]++
		}
	}
	ix.terms = make(map[string][]posting, len(list))
	start := int32(0)
	for id, t := range list {
		end := at[id] // the term's end now
		ix.terms[t] = flat[start:end:end]
		start = end
	}
	slices.Sort(list)
	ix.sorted = list
	return ix
}

// chunked is a list of postings kept in chunks of chunkLen: grown by
// one append at a time, one slice made 5 times its final size in
// garbage (the runtime grows large slices by a quarter).
type chunked struct {
	chunks [][]posting
	n      int
}

const chunkLen = 1 << 12

func (c *chunked) add(p posting) {
	if c.n%chunkLen == 0 {
		c.chunks = append(c.chunks, make([]posting, 0, chunkLen))
	}
	last := len(c.chunks) - 1
	c.chunks[last] = append(c.chunks[last], p)
	c.n++
}

func (c *chunked) at(i int) posting { return c.chunks[i/chunkLen][i%chunkLen] }

// finish makes what the index derives from its documents: order, the
// live documents in name order, gives rank; and the BM25 length terms.
func (ix *searchIndex) finish(order []int32) {
	ix.rank = make([]int32, len(ix.entries))
	for r, d := range order {
		ix.rank[d] = int32(r)
	}
	ix.avgLen = 0
	if ix.live > 0 {
		ix.avgLen = float64(ix.total) / float64(ix.live)
	}
	ix.norms = make([]float64, len(ix.lens))
	for i, n := range ix.lens {
		ix.norms[i] = bm25K1 * (1 - bm25B + bm25B*float64(n)/ix.avgLen)
	}
}

// members are a document's skills: its representative, then its clones.
func (ix *searchIndex) members(doc int32) []*skill.Skill {
	return append([]*skill.Skill{ix.entries[doc]}, ix.clones[doc]...)
}

// patched returns a copy of ix without the removed entries and with the
// made ones: the postings of their documents' terms change, the rest is
// shared. A document whose representative stays (a clone came or went)
// keeps its postings; one whose representative changes is removed and
// made again. It returns nil when building afresh is better: a removed
// entry is not in ix, or removed documents would make a third of it.
func (ix *searchIndex) patched(removed, made []*Entry) *searchIndex {
	// Each description touched, with its document's skills after.
	type change struct {
		old     int32 // its document in ix, or -1
		members []*skill.Skill
	}
	changes := map[string]*change{}
	var descs []string // in the order first touched
	touch := func(e *skill.Skill) *change {
		c := changes[e.Description]
		if c == nil {
			c = &change{old: -1}
			if d, ok := ix.docOf[e.Description]; ok {
				c.old, c.members = d, ix.members(d)
			}
			changes[e.Description] = c
			descs = append(descs, e.Description)
		}
		return c
	}
	for _, e := range removed {
		c := touch(e.Skill)
		i := slices.Index(c.members, e.Skill)
		if i < 0 {
			return nil
		}
		c.members = slices.Delete(c.members, i, i+1)
	}
	byName := func(x *skill.Skill, name string) int { return strings.Compare(x.Name, name) }
	for _, e := range made {
		c := touch(e.Skill)
		i, _ := slices.BinarySearchFunc(c.members, e.Skill.Name, byName)
		c.members = slices.Insert(c.members, i, e.Skill)
	}
	kept := func(c *change) bool { return c.old >= 0 && len(c.members) > 0 && c.members[0] == ix.entries[c.old] }
	gone, come := 0, 0 // documents removed and made
	for _, c := range changes {
		if !kept(c) {
			if c.old >= 0 {
				gone++
			}
			if len(c.members) > 0 {
				come++
			}
		}
	}
	if (len(ix.entries)-ix.live+gone)*3 > len(ix.entries)+come {
		return nil
	}
	nx := &searchIndex{entries: slices.Clone(ix.entries), live: ix.live, terms: maps.Clone(ix.terms), lens: slices.Clone(ix.lens), total: ix.total,
		docOf: maps.Clone(ix.docOf), clones: maps.Clone(ix.clones)}
	setClones := func(doc int32, cl []*skill.Skill) {
		if len(cl) == 0 {
			delete(nx.clones, doc)
		} else {
			nx.clones[doc] = cl
		}
	}
	var d docTerms
	var newTerms, goneTerms []string
	first := len(nx.entries)
	for _, desc := range descs {
		c := changes[desc]
		if kept(c) {
			setClones(c.old, c.members[1:])
			continue
		}
		if doc := c.old; doc >= 0 {
			d.of(nx.entries[doc])
			for t := range d.counts {
				ps := nx.terms[t]
				out := make([]posting, 0, len(ps))
				for _, p := range ps {
					if p.doc != doc {
						out = append(out, p)
					}
				}
				if len(out) == 0 {
					delete(nx.terms, t)
					goneTerms = append(goneTerms, t)
				} else {
					nx.terms[t] = out
				}
			}
			nx.entries[doc] = nil
			nx.total -= nx.lens[doc]
			nx.lens[doc] = 0
			nx.live--
			delete(nx.docOf, desc)
			delete(nx.clones, doc)
		}
		if len(c.members) == 0 {
			continue
		}
		e := c.members[0]
		doc := int32(len(nx.entries))
		nx.entries = append(nx.entries, e)
		nx.docOf[desc] = doc
		setClones(doc, c.members[1:])
		d.of(e)
		for t, w := range d.counts {
			ps := nx.terms[t]
			if ps == nil {
				newTerms = append(newTerms, t)
			}
			out := make([]posting, len(ps), len(ps)+1)
			copy(out, ps)
			nx.terms[t] = append(out, posting{doc: doc, tf: uint16(min(w, 65535)), name: d.inName[t]})
		}
		nx.lens = append(nx.lens, d.n)
		nx.total += d.n
		nx.live++
	}
	nx.sorted = ix.sorted
	if len(newTerms)+len(goneTerms) > 0 {
		nx.sorted = mergeTerms(ix.sorted, newTerms, goneTerms, nx.terms)
	}
	nx.finish(mergeOrder(ix.order(), nx.entries, first))
	return nx
}

// order is the live documents in name order: rank inverted.
func (ix *searchIndex) order() []int32 {
	order := make([]int32, ix.live)
	for d, e := range ix.entries {
		if e != nil {
			order[ix.rank[d]] = int32(d)
		}
	}
	return order
}

// mergeOrder is old, the documents of an index in name order, without
// those now removed (nil in entries) and with the documents from first on
// (the ones a patch made) put in by name: a search in the order for each
// made one, not a comparison of every name.
func mergeOrder(old []int32, entries []*skill.Skill, first int) []int32 {
	live := old
	if slices.ContainsFunc(old, func(d int32) bool { return entries[d] == nil }) {
		live = slices.DeleteFunc(slices.Clone(old), func(d int32) bool { return entries[d] == nil })
	}
	made := make([]int32, 0, len(entries)-first)
	for d := first; d < len(entries); d++ {
		made = append(made, int32(d))
	}
	name := func(d int32) string { return entries[d].Name }
	slices.SortFunc(made, func(a, b int32) int { return strings.Compare(name(a), name(b)) })
	out := make([]int32, 0, len(live)+len(made))
	at := 0
	for _, d := range made {
		n := name(d)
		next := at + sort.Search(len(live)-at, func(i int) bool { return name(live[at+i]) > n })
		out = append(out, live[at:next]...)
		out = append(out, d)
		at = next
	}
	return append(out, live[at:]...)
}

// mergeTerms is sorted with the terms of gone that are no longer in terms
// left out and those of fresh that are put in: a copy, and a search per
// term that changed.
func mergeTerms(sorted, fresh, gone []string, terms map[string][]posting) []string {
	var edits []string
	for _, t := range gone {
		if _, back := terms[t]; !back {
			edits = append(edits, t)
		}
	}
	for _, t := range fresh {
		if i, found := slices.BinarySearch(sorted, t); !found || sorted[i] != t {
			edits = append(edits, t)
		}
	}
	slices.Sort(edits)
	edits = slices.Compact(edits)
	out := make([]string, 0, len(sorted)+len(fresh))
	at := 0
	for _, t := range edits {
		j := at + sort.SearchStrings(sorted[at:], t)
		out = append(out, sorted[at:j]...)
		at = j
		if at < len(sorted) && sorted[at] == t {
			at++ // gone
			continue
		}
		out = append(out, t) // fresh
	}
	return append(out, sorted[at:]...)
}

// The caps on a search query. A query's cost grows with its terms (each
// adds its postings, and a prefix match up to 32 terms more), so a query
// of a megabyte of one common word cost 39 CPU-seconds at 20,000 skills
// before the terms were de-duplicated and capped. Transports
// refuse a query past either cap with CheckQuery; Search itself reads
// only the first MaxQueryBytes and the first MaxQueryTerms distinct
// terms of what it is given, so no caller can make it dear.
const (
	MaxQueryBytes = 1024
	MaxQueryTerms = 32
)

// CheckQuery says why a search query is refused, or nil: longer than
// MaxQueryBytes, or more than MaxQueryTerms distinct words (a repeated
// word counts once).
func CheckQuery(query string) error {
	if len(query) > MaxQueryBytes {
		return fmt.Errorf("the query is %d bytes; the limit is %d bytes (%d distinct words): give a few words describing the task", len(query), MaxQueryBytes, MaxQueryTerms)
	}
	if w := queryWords(query, MaxQueryTerms+1); len(w) > MaxQueryTerms {
		return fmt.Errorf("the query has more than %d distinct words; the limit is %d: give a few words describing the task", MaxQueryTerms, MaxQueryTerms)
	}
	return nil
}

// queryWords are the distinct words of a query's first MaxQueryBytes, in
// order, at most max of them. The caps count words as written, stopwords
// included, as a person counts them.
func queryWords(query string, max int) []string {
	var out []string
	terms.Words(clipQuery(query), func(w string) {
		if len(out) < max && !slices.Contains(out, w) {
			out = append(out, w)
		}
	})
	return out
}

// queryTerms are the distinct search terms of the query's first max
// distinct words.
func queryTerms(query string, max int) []string {
	var out []string
	for _, w := range queryWords(query, max) {
		if t := terms.Term(w); t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// clipQuery is the query's first MaxQueryBytes, cut at a character.
func clipQuery(query string) string {
	if len(query) <= MaxQueryBytes {
		return query
	}
	cut := MaxQueryBytes
	for cut > 0 && !utf8.RuneStart(query[cut]) {
		cut--
	}
	return query[:cut]
}

// Search ranks the skills the agent can load against a query, by BM25 over
// names, descriptions and tags (names weigh most, and a whole-name match
// ranks first), the best by BM25 ranked again by how many of the query's
// terms each matched (coverage). Listed, inline and budget-omitted skills are all
// searchable: this is how skills left out of the listing are reached.
// limit defaults to 10. Only the query's first MaxQueryBytes and its first
// MaxQueryTerms distinct terms count (CheckQuery refuses more).
func (l *Loadout) Search(query string, limit int) []Hit {
	return l.hits(query, limit, true, SearchOptions{})
}

// SearchOptions are what a search may weigh besides the query.
type SearchOptions struct {
	// Usage is how many times the agent loaded each skill (the service's
	// usage counts, as the listing ranks by): among the skills the query
	// matches about as well, the used ones come first (usagePrior).
	Usage map[string]int
}

// SearchWith is Search with options.
func (l *Loadout) SearchWith(query string, limit int, o SearchOptions) []Hit {
	return l.hits(query, limit, true, o)
}

// usagePrior is the factor a skill's score is multiplied by for its
// uses: 1 unused, 1.05 for one use, growing with the log of the uses up
// to 1.25 (31 uses and more): it breaks near-ties. Coverage weighs
// more: matching one more of the query's terms multiplies a score by
// (m+1)/m, 2 for the second term, 1.25 for the fifth.
func usagePrior(uses int) float64 {
	if uses <= 0 {
		return 1
	}
	return 1 + min(0.25, 0.05*math.Log2(float64(1+uses)))
}

// maxThresholdChecks bounds how many times a search works out whether the
// terms left can still bring in a document (each a sort of the documents
// found): a query of many common terms does not pay it for every term.
const maxThresholdChecks = 4

// maxPrefixTerms bounds the prefix matches of a whole query, so that
// MaxQueryTerms prefixes of 32 matches each do not add a thousand terms.
const maxPrefixTerms = 128

// hits is Search; prune false scores every posting (what the tests
// compare the pruned ranking with).
func (l *Loadout) hits(query string, limit int, prune bool, o SearchOptions) []Hit {
	if limit <= 0 {
		limit = 10
	}
	ix := l.index()
	query = clipQuery(query)
	q := queryTerms(query, MaxQueryTerms)
	if len(q) == 0 || ix.live == 0 {
		return []Hit{}
	}
	// The best depth documents by BM25 are ranked exactly: the hits and
	// those the coverage (below) may bring up; at least minRerank of them,
	// so that a search's first hits do not depend on its limit.
	depth := max(limit*rerankDepth, minRerank)
	sc := scorePool.Get().(*scores)
	defer scorePool.Put(sc)
	sc.reset(len(ix.entries))
	// The query's terms, each with its weight: 1 for a term of the query,
	// 0.5 for a prefix match ("deplo" finds "deploy"), for terms of four
	// or more letters and the first 32 longer terms only, so a short
	// prefix cannot make a query slow.
	terms := sc.terms[:0]
	n := float64(ix.live)
	put := func(ps []posting, w float64, bit uint32) {
		if len(ps) == 0 {
			return
		}
		idf := logf(1 + (n-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
		wi := w * idf
		// No document gets more from a term than wi*(k1+1)*1.5:
		// tf/(tf+norm) is below 1, and 1.5 is the name's weight.
		terms = append(terms, queryTerm{ps: ps, wi: wi, most: wi * (bm25K1 + 1) * 1.5, bit: bit})
	}
	prefixed := 0 // prefix matches so far, at most maxPrefixTerms
	for qi, t := range q {
		bit := uint32(1) << qi // q has at most MaxQueryTerms (32) terms
		put(ix.terms[t], 1, bit)
		if len(t) >= 4 {
			i := sort.SearchStrings(ix.sorted, t)
			for k := 0; i < len(ix.sorted) && k < 32 && prefixed < maxPrefixTerms && strings.HasPrefix(ix.sorted[i], t); i++ {
				if ix.sorted[i] != t {
					put(ix.terms[ix.sorted[i]], 0.5, bit)
					k++
					prefixed++
				}
			}
		}
	}
	sc.terms = terms
	// A whole-name match ranks first: its bonus is added before the
	// terms, so that the document counts as found when they are scored.
	// The name may be a clone's: its document is the one of its
	// description.
	whole := strings.ToLower(strings.TrimSpace(query))
	if e, ok := l.byName[whole]; ok {
		if doc, ok := ix.docOf[e.Skill.Description]; ok {
			sc.add(doc, 100, 0)
		}
	}
	// Rare terms first, as they can give the most (MaxScore): once the
	// best limit documents found score more than every term left could
	// give a document not yet found, those terms are added only to the
	// documents found. The ranking is the one scoring every posting
	// would give (TestSearchMatchesExhaustive).
	slices.SortStableFunc(terms, func(a, b queryTerm) int { return cmp.Compare(b.most, a.most) })
	norms := ix.norms
	closed := false // no document not found yet can reach the best limit
	checks := 0
	for i, t := range terms {
		if prune && !closed && checks < maxThresholdChecks && len(sc.touched) >= depth && len(t.ps) > len(sc.touched) && len(t.ps) >= ix.live/16 {
			left := 0.0 // the most the terms left can give one document
			for _, u := range terms[i:] {
				left += u.most
			}
			// Strictly more, with room for the rounding of the sums.
			closed = sc.kth(depth, ix.rank) > left*(1+1e-9)
			checks++
		}
		for _, p := range t.ps {
			if closed && sc.val[p.doc] == 0 {
				continue
			}
			tf := float64(p.tf)
			v := t.wi * tf * (bm25K1 + 1) / (tf + norms[p.doc])
			if p.name {
				v *= 1.5
			}
			sc.add(p.doc, v, t.bit)
		}
	}
	clear(terms) // the pooled scores hold no postings of this index
	top := sc.top(depth, ix.rank)
	// Coverage: each score times the number of the query's terms the
	// document matched (a prefix match counts for its term). BM25 alone
	// put a skill that matched one rare word of a long request ("friday"
	// in pipecat-friday-agent) ahead of the one that matched four of its
	// words; with coverage the right skill was first for 5 to 8 more
	// requests in 100 at 445 to 10,000 skills (docs/search.md). The
	// whole-name bonus is kept whole: a name is one term at least.
	for i := range top {
		m := float64(max(1, bits.OnesCount32(sc.mask[top[i].doc])))
		top[i].score *= m
		if o.Usage != nil {
			// A document's uses are its skills': loading any clone is a
			// use of the same text.
			uses := o.Usage[ix.entries[top[i].doc].Name]
			for _, e := range ix.clones[top[i].doc] {
				uses += o.Usage[e.Name]
			}
			top[i].score *= usagePrior(uses)
		}
	}
	slices.SortFunc(top, func(a, b scored) int { return order(a, b, ix.rank) })
	top = top[:min(len(top), limit)]
	hits := make([]Hit, 0, len(top))
	for _, d := range top {
		e := ix.entries[d.doc]
		h := Hit{Name: e.Name, Description: e.Description, Score: float64(int(d.score*1000)) / 1000, Source: e.Origin.Kind}
		if cl := ix.clones[d.doc]; len(cl) > 0 {
			h.Also = make([]string, 0, min(len(cl), maxAlso))
			for _, c := range cl[:min(len(cl), maxAlso)] {
				h.Also = append(h.Also, c.Name)
			}
		}
		hits = append(hits, h)
	}
	return hits
}

// maxAlso is the most clones a hit names (Hit.Also): a skill vendored
// by hundreds of collections does not make a search's answer long.
const maxAlso = 16

// rerankDepth is how many times the limit of documents, best by BM25,
// coverage and usage rank again (at least minRerank).
const rerankDepth = 3

// minRerank is the fewest documents, best by BM25, that coverage and
// usage rank again: 30, what a search of the default limit ranks. More
// (100, 300) changed no hit of bench/cmd/findability.
const minRerank = 30

// scores accumulates per-document scores densely, remembering which
// documents were touched so reset and selection cost only those.
type scores struct {
	val     []float64
	mask    []uint32 // the query terms each document matched, a bit a term
	touched []int32
	terms   []queryTerm // the query's, reused
}

// queryTerm is one term a search adds: its postings, its weight (the
// query weight times its idf) and the most it can give one document.
type queryTerm struct {
	ps       []posting
	wi, most float64
	bit      uint32 // the query term's bit (a prefix match: its term's)
}

// kth is the k-th best score among the documents found (k <= found):
// the root of the heap of the best k, which needs no sort.
func (s *scores) kth(k int, rank []int32) float64 {
	return s.heap(k, rank)[0].score
}

var scorePool = sync.Pool{New: func() any { return &scores{} }}

func (s *scores) reset(n int) {
	if cap(s.val) < n {
		s.val = make([]float64, n)
		s.mask = make([]uint32, n)
	} else {
		for _, d := range s.touched {
			s.val[d] = 0
			s.mask[d] = 0
		}
		s.val = s.val[:n]
		s.mask = s.mask[:n]
	}
	s.touched = s.touched[:0]
}

func (s *scores) add(doc int32, v float64, bit uint32) {
	if s.val[doc] == 0 {
		s.touched = append(s.touched, doc)
	}
	s.val[doc] += v
	s.mask[doc] |= bit
}

type scored struct {
	doc   int32
	score float64
}

// better orders by score, then by name (rank: the place in name order).
func better(a, b scored, rank []int32) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return rank[a.doc] < rank[b.doc]
}

// order is better as a comparison for slices.SortFunc: sort.Slice's
// reflection (its swapper) was a quarter of a search's time at 10,000
// skills. better is a total order (ranks differ), so the order is the
// same.
func order(a, b scored, rank []int32) int {
	switch {
	case better(a, b, rank):
		return -1
	case better(b, a, rank):
		return 1
	}
	return 0
}

// top selects the best k with a small heap, best first: O(touched · log k).
func (s *scores) top(k int, rank []int32) []scored {
	h := s.heap(k, rank)
	slices.SortFunc(h, func(a, b scored) int { return order(a, b, rank) })
	return h
}

// heap is the best k as a heap, the worst of them at the root.
func (s *scores) heap(k int, rank []int32) []scored {
	h := make([]scored, 0, k)
	for _, d := range s.touched {
		c := scored{d, s.val[d]}
		if len(h) < k {
			h = append(h, c)
			for i := len(h) - 1; i > 0; { // sift up: the worst at the root
				p := (i - 1) / 2
				if !better(h[p], h[i], rank) {
					break
				}
				h[p], h[i] = h[i], h[p]
				i = p
			}
			continue
		}
		if !better(c, h[0], rank) {
			continue
		}
		h[0] = c
		for i := 0; ; { // sift down
			l, r, m := 2*i+1, 2*i+2, i
			if l < len(h) && better(h[m], h[l], rank) {
				m = l
			}
			if r < len(h) && better(h[m], h[r], rank) {
				m = r
			}
			if m == i {
				break
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	return h
}

func logf(x float64) float64 { return math.Log(x) }
