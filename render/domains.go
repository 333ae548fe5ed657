package render

import (
	"container/heap"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/loadout/loadout/internal/terms"
)

// Domains is every listing entry's domain: the group the listing counts it
// in when it cannot name it, with a label and a few words the model can
// give the search to find the group's skills.
//
// An entry's domain is its category when it has one. The others are
// partitioned by a greedy cover over their words (search terms): the term
// that most entries not yet covered share becomes a domain, and every
// entry not yet covered that has it joins it; then the next, until no term
// is shared by two entries not yet covered. Only a term in at most 15% of
// the uncategorised entries (domainCapPercent) can label a domain: a word
// as common as "code" says little of what skills do. Words that describe
// skills in general ("skill", "via", "whenever") never label a domain. An
// entry left (all of whose words are over the cap, or its own) gets a
// domain of its rarest word, with the entries left that share it.
//
// A listing shows only its largest domains, so the cover is followed by
// one step that keeps the long tail in them: an entry of a word domain
// smaller than 0.5% of the listing joins the larger word domain whose
// distinctive words it shares most (each word weighted by the share of
// that domain's members that have it times its inverse document
// frequency), if it shares any. Such an entry need not hold its domain's
// label; the domain's words are computed on its final members. Over real
// skills (bench/cmd/domains) this takes the share of skills in the largest
// 30 domains from 88% to 99% at 10,000 skills and from 90% to 99.6% at
// 2,000, and leaves 12% and 10% of the skills in a domain whose label
// they do not hold.
//
// Entries with no usable word go to one domain labelled "other".
//
// Labels and words are words as they appear in the members' names and
// descriptions (lowercased): the search index takes its terms from the
// same text by package terms, so each matches the members it came from.
// Labels never hold a folder path (a category's slashes become spaces).
//
// The result depends only on the listing: ties are broken by term, then
// by position.
type Domains struct {
	// Keys[g] is domain g's label: a category, a word, or "other".
	Keys []string
	// Words[g] are up to 3 words of domain g's members that the search
	// matches, most distinctive of the domain first (frequent in it, rare
	// outside): never the label again.
	Words [][]string
	// Of[i] is the domain of listing[i]. Domains are numbered in order of
	// their first entry.
	Of []int
}

const (
	// domainCapPercent is the largest share of the uncategorised entries
	// (percent) whose word can label a domain. Over real skills, "code"
	// is in 18% of the public collections and 16% of 10,000 skills, and
	// "create" in 19% and 16%: at 25% they led the domains; at 15% the
	// labels are more specific ("testing", "agent", "design") and, with
	// small domains absorbed, cover as many skills (bench/cmd/domains).
	domainCapPercent = 15
	// domainMinCap is the cap of a small listing (domainCap).
	domainMinCap = 10
	// domainHeadPermille: a word domain of fewer entries (per mille of the
	// listing, and at least 2) gives its entries to larger ones.
	domainHeadPermille = 5
	// domainProfile is how many distinctive words of a large domain an
	// entry of a small one is matched against.
	domainProfile = 64
	// domainMaxTerms is how many description terms of an entry count, as
	// in the search index (catalog's maxDescTerms): a word from further
	// on might not be indexed, and the work per entry stays bounded.
	domainMaxTerms = 200
	// domainMaxNameWords bounds the words read from a name.
	domainMaxNameWords = 32
	// domainWords is how many words a domain shows.
	domainWords = 3
	// OtherDomain labels the entries that have no usable word.
	OtherDomain = "other"
)

// domainCap is the most entries (of n uncategorised) a label may be in:
// domainCapPercent of n, and at least domainMinCap, so that in a listing
// of a few skills three of seven can still share "pdf".
func domainCap(n int) int { return max(n*domainCapPercent/100, domainMinCap) }

// genericTerms are the terms of words that describe skills in general, not
// a domain: in the public collections' descriptions "This skill should be
// used whenever...", "Triggers on...", "via", "based on". They label no
// domain and are not shown as a domain's words.
var genericTerms = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("skill skills via capability capabilities trigger triggers triggered whenever someone including based always") {
		m[terms.Term(w)] = true
	}
	return m
}()

// NewDomains computes the domains of listing. It reads each entry's name,
// category and the first 200 terms of its description.
func NewDomains(listing []Entry) *Domains {
	return NewDomainsOf(len(listing), func(i int) (string, string, string) {
		e := &listing[i]
		return e.Name, e.Description, e.Category
	})
}

// NewDomainsOf is NewDomains of a listing of n entries that at gives,
// entry i's name, description and category: the same domains, for a
// caller that holds its skills in another form and computes the domains
// before it builds the listing (a catalog of 50,000 skills held both the
// listing, 11 MB, and the domains being computed, 16 MB, at its peak).
// at is called several times for each entry, and must give the same
// text each time.
func NewDomainsOf(n int, at func(i int) (name, description, category string)) *Domains {
	b := domainBuilder{at: at}
	b.entOff = make([]int32, 1, n+1)
	// An entry has about one distinct word in 12 bytes of its text (445 to
	// 10,000 real skills, bench/cmd/domains): sized for one in 10 at a
	// byte and a half each, the lists are seldom copied as they grow.
	text := 0
	for i := range n {
		name, desc, _ := at(i)
		text += len(name) + min(len(desc), 16*domainMaxTerms)
	}
	b.ents = make([]byte, 0, text/10*3/2)
	// The vocabulary grows as the square root of the text: about
	// 12·√bytes words, 9·√bytes terms, in the same collections.
	root := int(math.Sqrt(float64(text)))
	b.termID = make(map[string]int32, 10*root)
	b.words = make([]string, 0, 13*root)
	b.wterm = make([]int32, 0, 13*root)
	b.seenW = make([]int32, 0, 13*root)
	b.terms = make([]string, 0, 10*root)
	b.seenT = make([]int32, 0, 10*root)
	b.slots = make([]uint64, max(1<<12, 1<<bits.Len(uint(26*root))))
	for i := range n {
		name, desc, _ := at(i)
		b.scan(name, desc)
	}
	nt := len(b.terms)
	df := make([]int32, nt)     // entries with the term
	dfFree := make([]int32, nt) // uncategorised entries with it
	cat := make([]int32, n)     // category group + 1, or 0
	var keys []string
	catIdx := map[string]int32{}
	nFree := 0
	for i := range n {
		_, _, c := at(i)
		if k := categoryKey(c); k != "" {
			g, ok := catIdx[k]
			if !ok {
				g = int32(len(keys))
				catIdx[k] = g
				keys = append(keys, k)
			}
			cat[i] = g + 1
		} else {
			nFree++
		}
		for t := range b.entTerms(i) {
			df[t]++
			if cat[i] == 0 {
				dfFree[t]++
			}
		}
	}

	// Postings of the uncategorised entries, by term, in entry order.
	postOff := make([]int32, nt+1)
	for t, c := range dfFree {
		postOff[t+1] = postOff[t] + c
	}
	post := make([]int32, postOff[nt])
	fill := make([]int32, nt)
	copy(fill, postOff[:nt])
	for i := range n {
		if cat[i] == 0 {
			for t := range b.entTerms(i) {
				post[fill[t]] = int32(i)
				fill[t]++
			}
		}
	}

	// grp[i] is entry i's group, provisional (categories first, then
	// domains in the order the cover chose them), -1 while uncovered.
	grp := make([]int32, n)
	labelTerm := make([]int32, len(keys), len(keys)+64) // -1: not a word
	for g := range labelTerm {
		labelTerm[g] = -1
	}
	for i := range grp {
		grp[i] = cat[i] - 1
	}
	choose := func(t int32) {
		g := int32(len(labelTerm))
		labelTerm = append(labelTerm, t)
		for _, i := range post[postOff[t]:postOff[t+1]] {
			if grp[i] < 0 {
				grp[i] = g
			}
		}
	}
	// The greedy cover, lazily: a term's count in the heap is an upper
	// bound (counts only fall), so the top is recounted, and chosen if it
	// still holds.
	limit := int32(domainCap(nFree))
	h := termHeap{terms: b.terms}
	for t := range int32(nt) {
		if c := dfFree[t]; c >= 2 && c <= limit {
			h.items = append(h.items, termCount{t, c})
		}
	}
	heap.Init(&h)
	for h.Len() > 0 {
		top := h.items[0]
		c := int32(0)
		for _, i := range post[postOff[top.t]:postOff[top.t+1]] {
			if grp[i] < 0 {
				c++
			}
		}
		switch {
		case c < 2:
			heap.Pop(&h)
		case c < top.c:
			h.items[0].c = c
			heap.Fix(&h, 0)
		default:
			heap.Pop(&h)
			choose(top.t)
		}
	}
	// An entry left gets a domain of its rarest word, which the entries
	// left that share it join; "other" if it has none.
	other := int32(-1)
	for i := range n {
		if grp[i] >= 0 {
			continue
		}
		best := int32(-1)
		for t := range b.entTerms(i) {
			if best < 0 || df[t] < df[best] || df[t] == df[best] && b.terms[t] < b.terms[best] {
				best = t
			}
		}
		if best >= 0 {
			choose(best)
			continue
		}
		if other < 0 {
			other = int32(len(labelTerm))
			labelTerm = append(labelTerm, -1)
		}
		grp[i] = other
	}
	ng := len(labelTerm)
	wc := newWordCounter(&b, n)
	absorb(&b, wc, grp, ng, len(keys), other, df)

	// Labels: the category, "other", or the commonest spelling of the
	// term among the members; then the words.
	mOff, byGroup := groupMembers(grp, ng)
	label := make([]string, ng)
	groupWords := make([][]string, ng)
	for g := range ng {
		ms := byGroup[mOff[g]:mOff[g+1]]
		switch {
		case g < len(keys):
			label[g] = keys[g]
		case g == int(other):
			label[g] = OtherDomain
		}
		if g == int(other) || len(ms) == 0 {
			continue
		}
		wc.count(ms, true)
		if lt := labelTerm[g]; lt >= 0 {
			label[g] = wc.spelling(lt)
		}
		groupWords[g] = wc.top(len(ms), labelTerm[g], label[g], df)
		wc.reset()
	}

	// Number domains by first entry; labels equal but for case share a
	// domain (a word that is also a category joins the category), under
	// the first one's label.
	d := &Domains{Of: make([]int, n)}
	newID := make([]int32, ng)
	for g := range newID {
		newID[g] = -1
	}
	keyIdx := make(map[string]int32, ng)
	for i, g := range grp {
		if newID[g] < 0 {
			k := label[g]
			id, ok := keyIdx[strings.ToLower(k)]
			if !ok {
				id = int32(len(d.Keys))
				keyIdx[strings.ToLower(k)] = id
				d.Keys = append(d.Keys, k)
				d.Words = append(d.Words, groupWords[g])
			}
			newID[g] = id
		}
		d.Of[i] = int(newID[g])
	}
	return d
}

// groupMembers lists the entries of each of ng groups: those of group g
// are members[off[g]:off[g+1]], in entry order.
func groupMembers(grp []int32, ng int) (off, members []int32) {
	off = make([]int32, ng+2)
	for _, g := range grp {
		off[g+2]++
	}
	for g := 2; g < len(off); g++ {
		off[g] += off[g-1]
	}
	members = make([]int32, len(grp))
	for i, g := range grp {
		members[off[g+1]] = int32(i)
		off[g+1]++
	}
	return off[:ng+1], members
}

// absorb gives the entries of small word domains (fewer than
// domainHeadPermille of the entries) to the large word domain whose
// profile (its domainProfile most distinctive words, each weighted by the
// members' share that have it times its inverse document frequency) they
// share most; ties go to the domain chosen first, the larger. An entry
// that shares none stays.
func absorb(b *domainBuilder, wc *wordCounter, grp []int32, ng, ncat int, other int32, df []int32) {
	n := len(grp)
	size := make([]int32, ng)
	for _, g := range grp {
		size[g]++
	}
	minHead := int32(max(2, n*domainHeadPermille/1000))
	isHead := make([]bool, ng)
	var heads []int32
	for g := ncat; g < ng; g++ {
		if int32(g) != other && size[g] >= minHead {
			heads = append(heads, int32(g))
			isHead[g] = true
		}
	}
	if len(heads) == 0 {
		return
	}
	off, byGroup := groupMembers(grp, ng)
	type prof struct {
		t, h int32
		w    float32
	}
	var profs []prof
	var cand []prof
	for hi, g := range heads {
		ms := byGroup[off[g]:off[g+1]]
		wc.count(ms, false)
		cand = cand[:0]
		for _, t := range wc.touchT {
			if c := wc.termN[t]; c >= 2 {
				w := float64(c) / float64(len(ms)) * math.Log(float64(n)/float64(df[t]))
				cand = append(cand, prof{t, int32(hi), float32(w)})
			}
		}
		slices.SortFunc(cand, func(x, y prof) int {
			if x.w != y.w {
				if x.w > y.w {
					return -1
				}
				return 1
			}
			return strings.Compare(b.terms[x.t], b.terms[y.t])
		})
		profs = append(profs, cand[:min(len(cand), domainProfile)]...)
		wc.reset()
	}
	// The profiles by term.
	nt := len(b.terms)
	poff := make([]int32, nt+2)
	for _, p := range profs {
		poff[p.t+2]++
	}
	for t := 2; t < len(poff); t++ {
		poff[t] += poff[t-1]
	}
	byTerm := make([]prof, len(profs))
	for _, p := range profs {
		byTerm[poff[p.t+1]] = p
		poff[p.t+1]++
	}
	score := make([]float32, len(heads))
	for i, g := range grp {
		if int(g) < ncat || g == other || isHead[g] {
			continue
		}
		clear(score)
		for t := range b.entTerms(i) {
			for _, p := range byTerm[poff[t]:poff[t+1]] {
				score[p.h] += p.w
			}
		}
		best := -1
		for h, sc := range score {
			if sc > 0 && (best < 0 || sc > score[best]) {
				best = h
			}
		}
		if best >= 0 {
			grp[i] = heads[best]
		}
	}
}

// categoryKey is a category as a label: spaces for slashes, so that no
// label reads as a path, and runs of spaces as one.
func categoryKey(c string) string {
	if strings.ContainsAny(c, "/\\") {
		c = strings.NewReplacer("/", " ", "\\", " ").Replace(c)
	}
	return strings.Join(strings.Fields(c), " ")
}

// domainBuilder holds the words of every entry.
type domainBuilder struct {
	// slots is an open-addressing table of the words: each slot holds a
	// word's hash (high half) and its index in words + 1, or 0. It is
	// twice as fast as a map of strings here, where looking words up is
	// most of the work.
	slots []uint64
	words []string
	// wterm is the word's term, or wordStop for a stopword and
	// wordUnusable for a term that can neither label a domain nor be
	// shown as a word (usableTerm, genericTerms).
	wterm []int32
	// termID maps a term to its index in terms. Only usable terms are
	// here: one that is not changes no domain, and keeping them (every
	// number in the names of 50,000 skills) was 5-7 MB more at the peak
	// of loadout prompt.
	termID map[string]int32
	terms  []string
	// ents[entOff[i]:entOff[i+1]] are entry i's distinct terms, each an
	// unsigned varint (entTerms): the terms met first, the commonest, take
	// a byte, and as int32 they were 7 MB at 50,000 skills, at the peak of
	// loadout prompt. Its distinct words are read again from its text when
	// its group's spellings are counted (eachEntWord): kept beside the
	// terms, they were as large.
	ents   []byte
	entOff []int32
	seenT  []int32 // entry+1 that last saw the term
	// seenW is, per word, the last wstamp that saw it (eachEntWord).
	seenW  []int32
	wstamp int32
	at     func(i int) (name, description, category string)
	buf    []byte
}

// wterm's values for a word that is not a usable term.
const (
	wordStop     = -1
	wordUnusable = -2
)

// entTerms yields entry i's distinct terms, in the order scan met them.
func (b *domainBuilder) entTerms(i int) func(yield func(int32) bool) {
	s := b.ents[b.entOff[i]:b.entOff[i+1]]
	return func(yield func(int32) bool) {
		for j := 0; j < len(s); j++ {
			v, shift := uint32(s[j]&0x7f), 7
			for s[j] >= 0x80 {
				j++
				v |= uint32(s[j]&0x7f) << shift
				shift += 7
			}
			if !yield(int32(v)) {
				return
			}
		}
	}
}

// eachEntWord calls f with each distinct word of entry i that is a usable
// term, in the order scan met them: the words scan read, read again.
func (b *domainBuilder) eachEntWord(i int, f func(w int32)) {
	b.wstamp++
	stamp := b.wstamp
	visit := func(w []byte, h uint32) bool {
		id := b.find(w, h)
		if id < 0 {
			return false // never: scan read the same text
		}
		switch t := b.wterm[id]; t {
		case wordStop:
			return false
		case wordUnusable:
			return true
		}
		if b.seenW[id] != stamp {
			b.seenW[id] = stamp
			f(id)
		}
		return true
	}
	name, desc, _ := b.at(i)
	b.buf = eachWord(name, domainMaxNameWords, b.buf, visit)
	b.buf = eachWord(desc, domainMaxTerms, b.buf, visit)
}

// scan adds an entry's words: its name's and its description's first
// domainMaxTerms terms.
func (b *domainBuilder) scan(name, desc string) {
	stamp := int32(len(b.entOff)) // entry index + 1
	add := func(w []byte, h uint32) bool {
		id, slot := b.lookup(w, h)
		if id < 0 {
			s := string(w)
			id = int32(len(b.words))
			b.insert(slot, id)
			b.words = append(b.words, s)
			b.seenW = append(b.seenW, 0)
			t := int32(wordStop)
			if ts := terms.Term(s); ts != "" && (!usableTerm(ts) || genericTerms[ts]) {
				t = wordUnusable
			} else if ts != "" {
				var ok bool
				t, ok = b.termID[ts]
				if !ok {
					t = int32(len(b.terms))
					b.termID[ts] = t
					b.terms = append(b.terms, ts)
					b.seenT = append(b.seenT, 0)
				}
			}
			b.wterm = append(b.wterm, t)
		}
		switch t := b.wterm[id]; t {
		case wordStop:
			return false
		case wordUnusable:
			return true // a term all the same: it counts to domainMaxTerms
		}
		t := b.wterm[id]
		if b.seenT[t] != stamp {
			b.seenT[t] = stamp
			b.ents = binary.AppendUvarint(b.ents, uint64(t))
		}
		return true
	}
	b.buf = eachWord(name, domainMaxNameWords, b.buf, add)
	b.buf = eachWord(desc, domainMaxTerms, b.buf, add)
	b.entOff = append(b.entOff, int32(len(b.ents)))
}

const fnvOffset, fnvPrime = 2166136261, 16777619

// lookup returns w's index in words, or -1 and the slot to insert it at.
// h is w's hash.
func (b *domainBuilder) lookup(w []byte, h uint32) (int32, int) {
	mask := uint32(len(b.slots) - 1)
	for i := (h ^ h>>15) & mask; ; i = (i + 1) & mask {
		s := b.slots[i]
		if s == 0 {
			b.slots[i] = uint64(h) << 32 // the hash, for insert
			return -1, int(i)
		}
		if uint32(s>>32) == h && uint32(s) != 0 && b.words[uint32(s)-1] == string(w) {
			return int32(uint32(s) - 1), int(i)
		}
	}
}

// find returns w's index in words, or -1; h is w's hash. It changes
// nothing.
func (b *domainBuilder) find(w []byte, h uint32) int32 {
	mask := uint32(len(b.slots) - 1)
	for i := (h ^ h>>15) & mask; ; i = (i + 1) & mask {
		s := b.slots[i]
		if s == 0 {
			return -1
		}
		if uint32(s>>32) == h && uint32(s) != 0 && b.words[uint32(s)-1] == string(w) {
			return int32(uint32(s) - 1)
		}
	}
}

// insert puts word id at the slot lookup returned, and grows the table
// past half full.
func (b *domainBuilder) insert(slot int, id int32) {
	b.slots[slot] |= uint64(id + 1)
	if int(id+1)*2 <= len(b.slots) {
		return
	}
	old := b.slots
	b.slots = make([]uint64, 2*len(old))
	mask := uint32(len(b.slots) - 1)
	for _, s := range old {
		if s != 0 {
			h := uint32(s >> 32)
			i := (h ^ h>>15) & mask
			for b.slots[i] != 0 {
				i = (i + 1) & mask
			}
			b.slots[i] = s
		}
	}
}

// usableTerm: a term of one character or of digits alone ("2", "365")
// tells the model nothing as a label or a word.
func usableTerm(t string) bool {
	if utf8.RuneCountInString(t) < 2 {
		return false
	}
	for _, r := range t {
		if !unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// eachWord calls f with the words of s as terms.Words gives them (runs of
// letters and digits, lowercased), each with its FNV-1a hash, until f has
// returned true limit times.
// The word passed to f is valid only during the call. It returns buf for
// reuse.
func eachWord(s string, limit int, buf []byte, f func(w []byte, hash uint32) bool) []byte {
	i := 0
	for i < len(s) && limit > 0 {
		// Skip to the next word.
		if c := s[i]; c < utf8.RuneSelf {
			if asciiLower[c] == 0 {
				i++
				continue
			}
		} else if r, size := utf8.DecodeRuneInString(s[i:]); !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			i += size
			continue
		}
		// The word: ASCII is lowercased and hashed on the way.
		start, ascii := i, true
		buf = buf[:0]
		h := uint32(fnvOffset)
		for i < len(s) {
			if c := s[i]; c < utf8.RuneSelf {
				l := asciiLower[c]
				if l == 0 {
					break
				}
				buf = append(buf, l)
				h = (h ^ uint32(l)) * fnvPrime
				i++
			} else {
				r, size := utf8.DecodeRuneInString(s[i:])
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					break
				}
				ascii = false
				i += size
			}
		}
		if !ascii {
			buf = append(buf[:0], strings.ToLower(s[start:i])...)
			h = fnvOffset
			for _, c := range buf {
				h = (h ^ uint32(c)) * fnvPrime
			}
		}
		if f(buf, h) {
			limit--
		}
	}
	return buf
}

// asciiLower maps an ASCII letter or digit to its lowercase, anything
// else to 0.
var asciiLower = func() (t [utf8.RuneSelf]byte) {
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c
	}
	for c := byte('a'); c <= 'z'; c++ {
		t[c] = c
		t[c-'a'+'A'] = c
	}
	return t
}()

// termCount is a term and how many entries not yet covered have it (in
// the heap, an upper bound).
type termCount struct{ t, c int32 }

// termHeap orders terms by count, most first, then by term.
type termHeap struct {
	items []termCount
	terms []string
}

func (h *termHeap) Len() int { return len(h.items) }
func (h *termHeap) Less(a, b int) bool {
	x, y := h.items[a], h.items[b]
	if x.c != y.c {
		return x.c > y.c
	}
	return h.terms[x.t] < h.terms[y.t]
}
func (h *termHeap) Swap(a, b int) { h.items[a], h.items[b] = h.items[b], h.items[a] }
func (h *termHeap) Push(x any)    { h.items = append(h.items, x.(termCount)) }
func (h *termHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// wordCounter counts, for one group at a time, how many members have each
// term and each word.
type wordCounter struct {
	b              *domainBuilder
	n              int // entries
	termN, wordN   []int32
	touchT, touchW []int32
	best           []int32 // per term: its commonest word among the members, or -1
}

func newWordCounter(b *domainBuilder, n int) *wordCounter {
	nt := len(b.terms)
	wc := &wordCounter{b: b, n: n, termN: make([]int32, nt), wordN: make([]int32, len(b.words)), best: make([]int32, nt)}
	for t := range wc.best {
		wc.best[t] = -1
	}
	return wc
}

func (wc *wordCounter) count(members []int32, words bool) {
	b := wc.b
	for _, i := range members {
		for t := range b.entTerms(int(i)) {
			if wc.termN[t] == 0 {
				wc.touchT = append(wc.touchT, t)
			}
			wc.termN[t]++
		}
		if !words {
			continue
		}
		b.eachEntWord(int(i), func(w int32) {
			if wc.wordN[w] == 0 {
				wc.touchW = append(wc.touchW, w)
			}
			wc.wordN[w]++
		})
	}
	for _, w := range wc.touchW {
		t := b.wterm[w]
		bw := wc.best[t]
		if bw < 0 || wc.wordN[w] > wc.wordN[bw] || wc.wordN[w] == wc.wordN[bw] && b.words[w] < b.words[bw] {
			wc.best[t] = w
		}
	}
}

// spelling is the commonest word of term t among the members counted.
func (wc *wordCounter) spelling(t int32) string { return wc.b.words[wc.best[t]] }

// top is the most distinctive words of the group counted, of size
// members: by members with the term times its inverse document frequency
// (ln(entries/df)), then by term. A word must be in two members, unless
// the group has one, and in at most domainCapPercent of the entries; the
// label's terms are left out.
func (wc *wordCounter) top(size int, labelT int32, label string, df []int32) []string {
	b := wc.b
	var skip []int32
	if labelT >= 0 {
		skip = append(skip, labelT)
	} else {
		terms.Words(label, func(w string) {
			if t, ok := b.termID[terms.Term(w)]; ok {
				skip = append(skip, t)
			}
		})
	}
	minN := int32(min(2, size))
	var best [domainWords]int32
	nb := 0
	score := func(x int32) float64 {
		return float64(wc.termN[x]) * math.Log(float64(wc.n)/float64(df[x]))
	}
	better := func(x, y int32) bool {
		sx, sy := score(x), score(y)
		if sx != sy {
			return sx > sy
		}
		return b.terms[x] < b.terms[y]
	}
	wcap := int32(domainCap(wc.n))
	for _, t := range wc.touchT {
		if wc.termN[t] < minN || containsI32(skip, t) || df[t] > wcap {
			continue
		}
		// Insert into the sorted best few.
		k := nb
		if k == domainWords {
			if !better(t, best[k-1]) {
				continue
			}
			k--
		} else {
			nb++
		}
		for k > 0 && better(t, best[k-1]) {
			best[k] = best[k-1]
			k--
		}
		best[k] = t
	}
	out := make([]string, nb)
	for k := range nb {
		out[k] = wc.spelling(best[k])
	}
	return out
}

func (wc *wordCounter) reset() {
	for _, t := range wc.touchT {
		wc.termN[t] = 0
		wc.best[t] = -1
	}
	for _, w := range wc.touchW {
		wc.wordN[w] = 0
	}
	wc.touchT, wc.touchW = wc.touchT[:0], wc.touchW[:0]
}

func containsI32(s []int32, x int32) bool {
	for _, y := range s {
		if x == y {
			return true
		}
	}
	return false
}
