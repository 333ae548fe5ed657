package render

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tier is how much of one skill a listing shows.
type Tier string

// The tiers, from most to least.
const (
	// TierFull: name and whole description.
	TierFull Tier = "full"
	// TierShortened: name and description cut at a word boundary (at a
	// sentence's end when one fits), never below the floor
	// (Options.DescriptionFloor) code points.
	TierShortened Tier = "shortened"
	// TierName: the name only, in the format's compact line.
	TierName Tier = "name"
	// TierGrouped: not named; counted in a domain (its category or a
	// domain word) on the line that says to search for them.
	TierGrouped Tier = "grouped"
	// TierOmitted: not named and not grouped; only counted in the line that
	// says how many skills are not listed.
	TierOmitted Tier = "omitted"
)

// DefaultDescriptionFloor is the least number of characters (code points)
// a shortened description keeps, before the ellipsis. A description that
// cannot keep this much is not shown at all: the skill is listed by name.
const DefaultDescriptionFloor = 60

// ApproxTokens is the token count the budget uses: ceil(code points / 4),
// the usual rule of thumb for English text with current tokenizers. It is an
// approximation, not any model's tokenizer.
func ApproxTokens(s string) int {
	return (utf8.RuneCountInString(s) + 3) / 4
}

// frameCtx is what the text around the entries depends on.
type frameCtx struct {
	s settings
	// hasListing is true once a listing part was written; the inline part
	// then needs no heading of its own.
	hasListing bool
	hasInline  bool
	// listVirtual: a skill named in the listing is virtual; inlineVirtual:
	// an inline entry is.
	listVirtual, inlineVirtual bool
}

// plan says how to render the listing.
type plan struct {
	tiers []Tier
	// caps[i] is the number of code points entry i's description is cut to
	// (before the ellipsis) when its tier is TierShortened.
	caps []int
	// virt: a named skill is virtual.
	virt bool
	// groups is groupKeys' result when some skill is grouped.
	groups *groupSet
	// tooSmall: the budget cannot hold the frame and the note about the
	// skills left out; nothing is named and the listing is over the budget.
	tooSmall bool
}

// minFrame is the length of the listing with none of n entries named: the
// frame text and the note about the n skills left out.
func minFrame(lay layout, c frameCtx, n int) int {
	fc := c
	fc.hasListing = true
	fc.listVirtual = false
	pre, post := lay.affixes()
	return runes(lay.head(fc)) + runes(lay.closeBlock(0)) +
		runes(pre) + runes(omittedNote(c.s, n)) + runes(post) + runes(lay.after(fc))
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// descCost knows what a description costs at any cut, in code points of
// rendered (escaped) text, without rendering it.
type descCost struct {
	n int // code points of the prepared description
	// slab[lo:hi] are the code point indexes of characters that escaping
	// lengthens, each with the running total of extra length so far.
	lo, hi int
}

// special is one character that escaping lengthens.
type special struct {
	pos, cum int32 // code point index; extra length up to and including it
}

// newDescCost measures d, appending its escaped characters to slab. All
// escaped characters are ASCII, so it can walk bytes.
func newDescCost(d string, extra func(rune) int, slab *[]special) descCost {
	c := descCost{lo: len(*slab)}
	if extra == nil || !strings.ContainsAny(d, escaped) {
		c.n = utf8.RuneCountInString(d)
		c.hi = c.lo
		return c
	}
	var sum int32
	for i := 0; i < len(d); i++ {
		b := d[i]
		if b&0xC0 == 0x80 { // UTF-8 continuation byte
			continue
		}
		if extra != nil && b < utf8.RuneSelf {
			if x := extra(rune(b)); x > 0 {
				sum += int32(x)
				*slab = append(*slab, special{int32(c.n), sum})
			}
		}
		c.n++
	}
	c.hi = len(*slab)
	return c
}

// escaped are the characters writeXML escapes (xmlExtra > 0).
const escaped = "&<>\"'"

// extraBefore is the extra length of escaped characters among the first m.
func (c *descCost) extraBefore(slab []special, m int) int {
	sp := slab[c.lo:c.hi]
	if len(sp) == 0 || int(sp[0].pos) >= m {
		return 0
	}
	if int(sp[len(sp)-1].pos) < m {
		return int(sp[len(sp)-1].cum)
	}
	j, _ := slices.BinarySearchFunc(sp, m, func(s special, m int) int { return int(s.pos) - m })
	return int(sp[j-1].cum)
}

// at is the cost of the description capped at L code points, the ellipsis
// included when L < n. It never decreases as L grows.
func (c *descCost) at(slab []special, L int) int {
	if L >= c.n {
		return c.n + c.extraBefore(slab, c.n)
	}
	return L + c.extraBefore(slab, L) + 1 // 1: the ellipsis
}

// boundaries lists the code point indexes where d may be cut: each is the
// start of a run of white space (so the kept text ends with no space). A
// cut after a sentence's end is one of them. The last element is n.
func boundaries(d string) []int {
	var bs []int
	n := 0
	prevSpace := true
	for _, r := range d {
		sp := unicode.IsSpace(r)
		if sp && !prevSpace {
			bs = append(bs, n)
		}
		prevSpace = sp
		n++
	}
	return append(bs, n)
}

// floorCap is the shortest cut of d that the floor allows: the first word
// boundary at or after floor code points. It returns n (the whole
// description) when there is none, so a shortened description never keeps
// fewer than floor code points. (A first sentence shorter than the floor
// used to be a cut of its own: "Fills forms.…" kept 12 characters.)
func floorCap(d string, floor int) int {
	n := 0
	prev := rune(0)
	for _, r := range d {
		if unicode.IsSpace(r) && n >= floor && !unicode.IsSpace(prev) {
			return n
		}
		prev = r
		n++
	}
	return n
}

// budgetModel holds what every piece of a listing costs, so a plan's length
// is known without rendering it. The listing is
//
//	head + detailed entries + closeBlock + [names] + [groups] + [note] + after
//
// where each bracketed section is pre + text + post (the layout's affixes).
type budgetModel struct {
	lay     layout
	c       frameCtx
	listing []Entry
	// What is measured of entry i, on first use, is in meas (see at):
	// most entries of a large listing are never measured (a few hundred
	// of 50,000 at a budget of 8,000), and arrays of every entry's
	// measures were 4 MB at the peak of loadout prompt.
	slot      []int32 // 1 + the index of entry i's measures, 0: none yet
	meas      [][]measured
	slab      []special
	virt      []bool // listing[i].Virtual, packed
	extra     func(rune) int
	sep       string // between names: " ", or ", " when a name has a space or comma
	folderIdx map[string]int
	folders   []string
	folderFx  []int // cost of a folder's prefix, minus one separator
	// groups: entry i is counted in group groups.d.Of[i] (nil until
	// needed), from domains when they are given.
	groups  *groupSet
	domains *Domains
	affix   int
	// costs of the fixed pieces
	namesHead         int
	closeNone, closed int
}

func newModel(lay layout, listing []Entry, c frameCtx) *budgetModel {
	n := len(listing)
	m := &budgetModel{lay: lay, c: c, listing: listing,
		slot:      make([]int32, n),
		namesHead: runes(lay.namesHeader(c)), closeNone: runes(lay.closeBlock(0)), closed: runes(lay.closeBlock(1))}
	m.extra = lay.escapeExtra()
	m.virt = make([]bool, n)
	for i := range listing {
		m.virt[i] = listing[i].Virtual
	}
	pre, post := lay.affixes()
	m.affix = runes(pre) + runes(post)
	return m
}

// measured is what is measured of an entry, each part on first use.
type measured struct {
	fixed int // cost with an empty description, +1 (0: not measured yet)
	// Compact name: the entry shows disp, under folder fold; dispCost is
	// runes(disp) + the separator (0: not measured yet).
	disp           string
	dispCost, fold int
	prep           string // the description prepared (known)
	desc           descCost
	known          bool // prep and desc are measured
}

// measChunk is how many entries' measures a chunk of meas holds: chunks
// never move, so a pointer at returns stays good.
const measChunk = 256

// at is entry i's measures, made on first use.
func (m *budgetModel) at(i int) *measured {
	if s := m.slot[i]; s != 0 {
		s--
		return &m.meas[s/measChunk][s%measChunk]
	}
	if len(m.meas) == 0 || len(m.meas[len(m.meas)-1]) == measChunk {
		m.meas = append(m.meas, make([]measured, 0, measChunk))
	}
	c := &m.meas[len(m.meas)-1]
	*c = append(*c, measured{})
	m.slot[i] = int32((len(m.meas)-1)*measChunk + len(*c))
	return &(*c)[len(*c)-1]
}

// compact measures entry i's compact name on first use (most entries of a
// large catalog are never named): disp, dispCost and fold.
func (m *budgetModel) compact(i int) *measured {
	e := m.at(i)
	if e.dispCost != 0 {
		return e
	}
	f, d, loc := compactName(m.lay, m.listing[i])
	sep := " "
	if loc {
		sep = ", "
	}
	e.disp = d
	e.dispCost = runes(d) + len(sep)
	e.fold = m.folderOf(f, sep)
	return e
}

// nameCost is what naming entry i costs: its compact name and separator.
func (m *budgetModel) nameCost(i int) int { return m.compact(i).dispCost }

// fold is the folder entry i is named under.
func (m *budgetModel) fold(i int) int { return m.compact(i).fold }

// folderOf is the index of folder f in m.folders, added if new (its names
// separated by sep). Entries of one folder usually come together, so the
// last one is checked first.
func (m *budgetModel) folderOf(f, sep string) int {
	if k := len(m.folders) - 1; k >= 0 && m.folders[k] == f {
		return k
	}
	if m.folderIdx == nil {
		m.folderIdx = map[string]int{}
	}
	fi, ok := m.folderIdx[f]
	if !ok {
		fi = len(m.folders)
		m.folderIdx[f] = fi
		m.folders = append(m.folders, f)
		m.folderFx = append(m.folderFx, runes(m.lay.folderPrefix(f))-len(sep))
	}
	return fi
}

// fix is entry i's cost with an empty description, measured on first use
// (most entries of a large catalog never need it).
func (m *budgetModel) fix(i int) int {
	e := m.at(i)
	if e.fixed == 0 {
		e.fixed = m.lay.entryCost(m.listing[i]) + 1
	}
	return e.fixed - 1
}

// desc is entry i's description cost, measured on first use.
func (m *budgetModel) desc(i int) *descCost {
	e := m.at(i)
	if !e.known {
		e.prep = m.lay.prepDesc(m.listing[i].Description)
		e.desc = newDescCost(e.prep, m.extra, &m.slab)
		e.known = true
	}
	return &e.desc
}

// groupsOf computes the groups on first use: the caller's Domains when
// they are for this listing, else NewDomains.
func (m *budgetModel) groupsOf() *groupSet {
	if m.groups == nil {
		d := m.domains
		if d == nil || len(d.Of) != len(m.listing) {
			d = NewDomains(m.listing)
		}
		m.groups = newGroupSet(d, max(m.c.s.budget, 0)/GroupShare)
	}
	return m.groups
}

// state is a plan with the running sums its length is computed from.
type state struct {
	tiers []Tier
	caps  []int
	virt  bool
	// detailed entries
	kept, detail int
	// compact names
	named, nameSum, folderSum int
	folderCnt                 []int
	// groups and the note: fixed once the named set is chosen
	groupCost, noteCost int
	frame               int // head + after for virt
}

func (m *budgetModel) frameCost(virt bool) int {
	fc := m.c
	fc.hasListing = true
	fc.listVirtual = virt
	return runes(m.lay.head(fc)) + runes(m.lay.after(fc))
}

// total is the listing's length in the state.
func (m *budgetModel) total(st *state) int {
	t := st.frame + st.detail + m.closeNone
	if st.kept > 0 {
		t = st.frame + st.detail + m.closed
	}
	if st.named > 0 {
		t += m.affix + m.namesHead + st.folderSum + st.nameSum
	}
	return t + st.groupCost + st.noteCost
}

// GroupShare is the part of the budget the groups line may give to naming
// groups (1/GroupShare of it, 25%): the groups that leave the most skills
// unnamed are named while they fit in that share, with words the search
// matches, and the skills of the others are counted together. At 2,000
// skills and more most of a catalog is grouped, and a line naming its
// domains is what tells the model what to search for.
const GroupShare = 4

// groupSet is every listing entry's group, and what naming each costs.
type groupSet struct {
	d     *Domains
	items []string // items[g]: "key (" and, after the count, ": words)" or ")"
	fix   []int    // fix[g]: the item's length without its count
	cap   int      // room for the groups' items (see GroupShare)
	order []int    // scratch: groups by count
}

func newGroupSet(d *Domains, cap int) *groupSet {
	// Labels and words come from skills' categories, names and
	// descriptions: only plain text reaches the prompt (a category of
	// "</available_skills>\n<skill>" would write an entry of its own).
	keys := make([]string, len(d.Keys))
	for g, k := range d.Keys {
		keys[g] = plainLabel(k, maxLabel)
	}
	gs := &groupSet{d: &Domains{Keys: keys, Words: make([][]string, len(keys)), Of: d.Of}, items: make([]string, len(d.Keys)), fix: make([]int, len(d.Keys)), cap: cap}
	for g, k := range keys {
		tail := ")"
		if g < len(d.Words) {
			var words []string
			for _, w := range d.Words[g] {
				if w = plainLabel(w, maxLabel); w != "other" && len(words) < 3 {
					words = append(words, w)
				}
			}
			gs.d.Words[g] = words
			if len(words) > 0 {
				tail = ": " + strings.Join(words, ", ") + ")"
			}
		}
		gs.items[g] = tail
		gs.fix[g] = runes(k) + 2 + runes(tail)
	}
	return gs
}

// maxLabel is the longest domain label or word the groups line shows,
// in code points.
const maxLabel = 40

// plainLabel is s with only letters, digits and "-_.*" kept, other runs
// made one space, at most max code points; "other" when nothing is left.
func plainLabel(s string, max int) string {
	var b strings.Builder
	n := 0
	space := false
	for _, r := range s {
		if n >= max {
			break
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_.*", r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
				n++
			}
			space = false
			b.WriteRune(r)
			n++
			continue
		}
		space = true
	}
	if b.Len() == 0 {
		return "other"
	}
	return strings.TrimSpace(b.String())
}

// shown calls f for each group the groups line names, given each group's
// count of grouped skills, in order: the groups that hold the most first
// (then by label) while their items (", key (n: words)") fit
// in the cap; the first always. It returns how many skills the named
// groups hold.
func (gs *groupSet) shown(cnt []int, f func(g, len int)) (held int) {
	order := gs.order[:0]
	for g, c := range cnt {
		if c > 0 {
			order = append(order, g)
		}
	}
	slices.SortFunc(order, func(a, b int) int {
		if cnt[a] != cnt[b] {
			return cnt[b] - cnt[a]
		}
		return strings.Compare(gs.d.Keys[a], gs.d.Keys[b])
	})
	gs.order = order
	used := 0
	first := true
	skipped, last := 0, -1
	for _, g := range order {
		c := cnt[g]
		l := gs.fix[g] + digits(c)
		if !first {
			l += 2
			if used+l > gs.cap {
				skipped, last = skipped+1, g
				continue // a smaller group may still fit
			}
		}
		first = false
		used += l
		held += c
		f(g, l)
	}
	if skipped == 1 {
		// One group left: its name is shorter than saying "other domains".
		f(last, gs.fix[last]+2+digits(cnt[last]))
		held += cnt[last]
	}
	return held
}

// sectionLen is the length of section(s, cnt, total) without building it.
func (gs *groupSet) sectionLen(s settings, cnt []int, total int) int {
	if total == 0 {
		return 0
	}
	n := runes(groupsNote(s, total)) + 1 // the final "."
	held := gs.shown(cnt, func(_, l int) { n += l })
	if rest := total - held; rest > 0 {
		n += runes(otherGroups) + digits(rest) + runes(otherGroupsEnd)
	}
	return n
}

// The end of the groups line when some groups are not named.
const (
	otherGroups    = ", and "
	otherGroupsEnd = " in other domains"
)

// section is the groups line for the given counts of grouped skills per
// group (total of them); "" if none.
func (gs *groupSet) section(s settings, cnt []int, total int) string {
	if total == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(groupsNote(s, total))
	first := true
	held := gs.shown(cnt, func(g, _ int) {
		if !first {
			b.WriteString(", ")
		}
		first = false
		b.WriteString(gs.d.Keys[g])
		b.WriteString(" (")
		b.WriteString(strconv.Itoa(cnt[g]))
		b.WriteString(gs.items[g])
	})
	if rest := total - held; rest > 0 {
		b.WriteString(otherGroups)
		b.WriteString(strconv.Itoa(rest))
		b.WriteString(otherGroupsEnd)
	}
	b.WriteString(".")
	return b.String()
}

// groupSection is the groups line of the entries whose tier is TierGrouped;
// "" if none.
func groupSection(s settings, gs *groupSet, tiers []Tier) string {
	if gs == nil {
		return ""
	}
	cnt, total := gs.grouped(tiers)
	return gs.section(s, cnt, total)
}

// grouped counts the entries of tier TierGrouped in each group, and in
// all.
func (gs *groupSet) grouped(tiers []Tier) (cnt []int, total int) {
	cnt = make([]int, len(gs.d.Keys))
	for i, t := range tiers {
		if t == TierGrouped {
			cnt[gs.d.Of[i]]++
			total++
		}
	}
	return cnt, total
}

// named sets up a state where the skills at ranks below k are named and the
// rest get tier rest (grouped or omitted).
func (m *budgetModel) named(rank []int, k int, rest Tier) *state {
	n := len(m.listing)
	return m.nameInto(&state{tiers: make([]Tier, n), caps: make([]int, n), folderCnt: make([]int, len(m.folders))}, rank, k, rest)
}

// nameInto is named, reusing st's slices.
func (m *budgetModel) nameInto(st *state, rank []int, k int, rest Tier) *state {
	clear(st.caps)
	clear(st.folderCnt)
	*st = state{tiers: st.tiers, caps: st.caps, folderCnt: st.folderCnt}
	omitted := 0
	for r, i := range rank {
		if r >= k {
			st.tiers[i] = rest
			omitted++
			continue
		}
		st.tiers[i] = TierName
		st.virt = st.virt || m.virt[i]
		st.named++
		st.nameSum += m.nameCost(i)
		f := m.fold(i)
		for f >= len(st.folderCnt) {
			st.folderCnt = append(st.folderCnt, 0)
		}
		if st.folderCnt[f] == 0 {
			st.folderSum += m.folderFx[f]
		}
		st.folderCnt[f]++
	}
	st.frame = m.frameCost(st.virt)
	if omitted > 0 {
		if rest == TierGrouped {
			st.groupCost = m.affix + runes(groupSection(m.c.s, m.groupsOf(), st.tiers))
		} else {
			st.noteCost = m.affix + runes(omittedNote(m.c.s, omitted))
		}
	}
	return st
}

// nameCosts holds sums over the priority order, so that the length of the
// listing that names the first k skills and groups or counts the rest is
// known without building it (see cost). The sums are extended on demand:
// a large catalog's budget names only its first few hundred skills.
type nameCosts struct {
	m       *budgetModel
	rank    []int
	virt    []bool // virt[k]: one of the first k is virtual
	names   []int  // names[k]: the compact names of the first k
	folders []int  // folders[k]: the folder prefixes they need
	seen    []bool // folders counted in folders[len(folders)-1]
	frame   [2]int // frameCost(false), frameCost(true)
	gcnt    []int  // skills per group, over all
	cnt     []int  // scratch
}

func (m *budgetModel) nameCosts(rank []int) *nameCosts {
	nc := &nameCosts{m: m, rank: rank, virt: []bool{false}, names: []int{0}, folders: []int{0},
		frame: [2]int{m.frameCost(false), m.frameCost(true)}}
	gs := m.groupsOf()
	nc.gcnt = make([]int, len(gs.d.Keys))
	nc.cnt = make([]int, len(gs.d.Keys))
	for _, g := range gs.d.Of {
		nc.gcnt[g]++
	}
	return nc
}

// extend makes the sums reach k, unless the names alone pass limit on the
// way: then it reports false, and every listing naming k skills is over.
func (nc *nameCosts) extend(k, limit int) bool {
	m := nc.m
	for r := len(nc.names) - 1; r < k; r++ {
		if nc.names[r] > limit {
			return false
		}
		i := nc.rank[r]
		nc.virt = append(nc.virt, nc.virt[r] || m.virt[i])
		nc.names = append(nc.names, nc.names[r]+m.nameCost(i))
		fx := nc.folders[r]
		f := m.fold(i)
		for f >= len(nc.seen) {
			nc.seen = append(nc.seen, false)
		}
		if !nc.seen[f] {
			nc.seen[f] = true
			fx += m.folderFx[f]
		}
		nc.folders = append(nc.folders, fx)
	}
	return true
}

// cost is m.total(m.named(rank, k, rest)), computed from the sums in time
// proportional to min(k, n-k) plus the number of groups.
func (nc *nameCosts) cost(k int, rest Tier) int {
	m := nc.m
	n := len(nc.rank)
	if !nc.extend(k, max(m.c.s.budget, 0)) {
		return math.MaxInt / 2
	}
	t := m.closeNone
	if nc.virt[k] {
		t += nc.frame[1]
	} else {
		t += nc.frame[0]
	}
	if k > 0 {
		t += m.affix + m.namesHead + nc.folders[k] + nc.names[k]
	}
	if k == n {
		return t
	}
	if rest != TierGrouped {
		return t + m.affix + runes(omittedNote(m.c.s, n-k))
	}
	// The groups of the skills from rank k on, with their counts.
	cnt := nc.cnt
	of := m.groups.d.Of
	if k < n-k {
		copy(cnt, nc.gcnt)
		for _, i := range nc.rank[:k] {
			cnt[of[i]]--
		}
	} else {
		clear(cnt)
		for _, i := range nc.rank[k:] {
			cnt[of[i]]++
		}
	}
	return t + m.affix + m.groups.sectionLen(m.c.s, cnt, n-k)
}

func digits(c int) int {
	d := 1
	for c >= 10 {
		c /= 10
		d++
	}
	return d
}

// describe moves named entry i to detailed with its description capped at
// L code points (L >= n: whole), if the listing still fits; it reports
// whether it did.
func (m *budgetModel) describe(st *state, i, L, budget int) bool {
	d := m.desc(i)
	cost := m.fix(i) + d.at(m.slab, L)
	old := *st
	f := m.fold(i)
	st.folderCnt[f]--
	if st.folderCnt[f] == 0 {
		st.folderSum -= m.folderFx[f]
	}
	st.named--
	st.nameSum -= m.nameCost(i)
	st.kept++
	st.detail += cost
	if m.total(st) > budget {
		st.folderCnt[f]++
		cnt := st.folderCnt
		*st = old
		st.folderCnt = cnt
		return false
	}
	m.setCap(st, i, L)
	return true
}

func (m *budgetModel) setCap(st *state, i, L int) {
	if L >= m.desc(i).n {
		st.tiers[i], st.caps[i] = TierFull, -1
	} else {
		st.tiers[i], st.caps[i] = TierShortened, L
	}
}

// priorityRank lists entry indexes in keep-preference order: the names in
// priority first, in its order, then the rest by name (then position).
func priorityRank(listing []Entry, priority []string) []int {
	pos := make(map[string]int, len(priority))
	for i, p := range priority {
		if _, ok := pos[p]; !ok {
			pos[p] = i
		}
	}
	rank := make([]int, len(listing))
	if slices.IsSortedFunc(listing, byName) {
		// The usual case (and always progressive): no sort needed.
		picked := make([]bool, len(listing))
		rank = rank[:0]
		for _, p := range priority {
			i, ok := slices.BinarySearchFunc(listing, p, func(e Entry, p string) int { return strings.Compare(e.Name, p) })
			for ; ok && i < len(listing) && listing[i].Name == p; i++ {
				if !picked[i] {
					picked[i] = true
					rank = append(rank, i)
				}
			}
		}
		for i := range listing {
			if !picked[i] {
				rank = append(rank, i)
			}
		}
		return rank
	}
	// Sort compact keys, not indexes into the large entries.
	type item struct {
		key  int // position in priority, or len(priority)
		name string
		i    int
	}
	items := make([]item, len(listing))
	for i, e := range listing {
		items[i] = item{len(priority), e.Name, i}
		if p, ok := pos[e.Name]; ok {
			items[i].key = p
		}
	}
	slices.SortFunc(items, func(a, b item) int {
		if a.key != b.key {
			return a.key - b.key
		}
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return a.i - b.i
	})
	for r, it := range items {
		rank[r] = it.i
	}
	return rank
}

// fit plans the listing so that it fits the budget (see Prompt). The
// pinned skills come first in the ranking; when their whole descriptions
// fit the budget (with the frame and the line about the skills left out),
// they are described whole before any other skill is named.
func fit(lay layout, listing []Entry, c frameCtx, floor int, priority, pinned []string, domains *Domains) plan {
	n := len(listing)
	full := plan{tiers: make([]Tier, n), caps: make([]int, n), virt: anyVirtual(listing)}
	for i := range full.tiers {
		full.tiers[i], full.caps[i] = TierFull, -1
	}
	budget := c.s.budget
	if budget < 0 {
		return full
	}
	m := newModel(lay, listing, c)
	m.domains = domains
	rank := priorityRank(listing, append(slices.Clip(pinned), priority...))

	// Everything whole? Not if the entries without descriptions are over.
	sumFixed := m.frameCost(full.virt)
	for i := range listing {
		if sumFixed += m.fix(i); sumFixed > budget {
			break
		}
	}
	if sumFixed <= budget {
		all := m.named(rank, n, TierGrouped)
		for i := range listing {
			m.describe(all, i, m.desc(i).n, 1<<62)
		}
		if m.total(all) <= budget {
			return full
		}
	}

	// The pinned skills lead the ranking: pins of them are in the listing.
	pins := 0
	if len(pinned) > 0 {
		set := make(map[string]bool, len(pinned))
		for _, p := range pinned {
			set[p] = true
		}
		for pins < n && set[listing[rank[pins]].Name] {
			pins++
		}
	}
	// extra is what describing the pinned skills whole adds to a listing
	// that names them: an upper bound, as a folder prefix they leave is
	// still counted. When even the listing of the pinned skills alone is
	// over, pins get no place of their own (they still rank first).
	extra := 0
	nc := m.nameCosts(rank)
	if pins > 0 {
		extra = m.closed - m.closeNone
		for _, i := range rank[:pins] {
			extra += m.fix(i) + m.desc(i).at(m.slab, m.desc(i).n) - m.nameCost(i)
		}
	}
	if pins > 0 && min(nc.cost(pins, TierGrouped), nc.cost(pins, TierOmitted))+extra-m.leadSaving(nc, pins) > budget {
		pins, extra = 0, 0
	}
	// The skills of Priority after the pins (the most used) are described
	// at the floor before the others are named, as many as fit in
	// 1/LeadShare of the budget: a model is most likely to need them, and
	// once the names fill the budget no other skill is described.
	lead, pinExtra := pins, extra
	if p := prioritized(listing, rank, pinned, priority); p > pins && budget > 0 {
		share := budget / LeadShare
		used := 0
		if pins == 0 {
			used = m.closed - m.closeNone
		}
		for _, i := range rank[pins:p] {
			add := m.fix(i) + m.desc(i).at(m.slab, floorCap(m.lay.prepDesc(m.listing[i].Description), floor)) - m.nameCost(i)
			if m.listing[i].Description == "" || used+add > share {
				break
			}
			used += add
			lead++
		}
		if lead > pins {
			extra += used
		}
	}
	// costK is the length of the listing naming the first k skills, the
	// leading ones described: with no other name, no names section.
	costK := func(k int, rest Tier) int {
		c := nc.cost(k, rest) + extra
		if lead > 0 && k == lead {
			c -= m.leadSaving(nc, k)
		}
		return c
	}

	// Tier 3/4: name as many skills as fit, in priority order; group the
	// rest, or, when even the groups do not fit, only count them.
	var st *state
	if costK(n, TierGrouped) <= budget {
		st = m.named(rank, n, TierGrouped)
	} else {
		fits := func(rest Tier) int {
			k := largestFit(n-lead, func(k int) bool { return costK(lead+k, rest) <= budget })
			if k < 0 {
				return -1
			}
			return lead + k
		}
		pick := func() *state {
			kg, ko := fits(TierGrouped), fits(TierOmitted)
			// Groups tell the model more than a bare count, but not at
			// the price of more than half the names it could have.
			switch {
			case kg >= 0 && 2*kg >= ko:
				return m.named(rank, kg, TierGrouped)
			case ko >= 0:
				return m.named(rank, ko, TierOmitted)
			}
			return nil
		}
		st = pick()
		if st == nil && lead > pins {
			// The leading descriptions do not fit with the note: name as
			// many as fit instead (the pins stay).
			lead, extra = pins, pinExtra
			st = pick()
		}
		if st == nil {
			// Not even the frame and the note fit. The note is the one line
			// that says skills exist and how to find them, so it stays: the
			// listing is over the budget, which Report.TooSmall says.
			st = m.named(rank, 0, TierOmitted)
			return plan{tiers: st.tiers, caps: st.caps, tooSmall: true}
		}
	}
	// The pinned skills, whole; then the leading ones, at the floor.
	for _, i := range rank[:pins] {
		m.describe(st, i, m.desc(i).n, budget)
	}
	for _, i := range rank[pins:lead] {
		m.describe(st, i, floorCap(m.lay.prepDesc(m.listing[i].Description), floor), budget)
	}

	// Tier 2: descriptions at the floor, to as many as fit, in priority order.
	for _, i := range rank {
		if st.tiers[i] != TierName {
			continue
		}
		// Skip, without measuring the description, an entry that cannot
		// fit even with a one-character description.
		lb := m.fix(i) - m.nameCost(i)
		if m.listing[i].Description != "" {
			lb++
		}
		if st.folderCnt[m.fold(i)] == 1 {
			lb -= m.folderFx[m.fold(i)]
		}
		if st.named == 1 {
			lb -= m.affix + m.namesHead
		}
		if st.kept == 0 {
			lb += m.closed - m.closeNone
		}
		if lb > budget-m.total(st) {
			continue
		}
		m.describe(st, i, floorCap(m.lay.prepDesc(m.listing[i].Description), floor), budget)
	}
	// Tier 1: extend to whole descriptions in priority order; the first
	// that cannot be whole takes the longest cut that fits.
	for _, i := range rank {
		if st.tiers[i] != TierShortened {
			continue
		}
		d := m.desc(i)
		L := st.caps[i]
		room := budget - m.total(st)
		if room <= 0 {
			break
		}
		cur := d.at(m.slab, L)
		if d.at(m.slab, d.n)-cur <= room {
			st.detail += d.at(m.slab, d.n) - cur
			m.setCap(st, i, d.n)
			continue
		}
		bs := boundaries(m.at(i).prep)
		best := L
		for _, b := range bs {
			if b > L && b < d.n && d.at(m.slab, b)-cur <= room {
				best = b
			}
		}
		if best > L {
			st.detail += d.at(m.slab, best) - cur
			m.setCap(st, i, best)
		}
	}
	return plan{tiers: st.tiers, caps: st.caps, virt: st.virt, groups: m.groups}
}

// LeadShare: the skills of Options.Priority after the pins (the most
// used) are described at the floor, before any other skill is named, in
// as much as 1/LeadShare of the budget (20%).
const LeadShare = 5

// leadSaving is what a listing naming only its first k skills, all of
// them described, saves: the names section's header and folders.
func (m *budgetModel) leadSaving(nc *nameCosts, k int) int {
	if !nc.extend(k, math.MaxInt/4) {
		return 0
	}
	return m.affix + m.namesHead + nc.folders[k]
}

// prioritized is how many skills lead the rank because pinned or
// priority names them.
func prioritized(listing []Entry, rank []int, pinned, priority []string) int {
	if len(pinned)+len(priority) == 0 {
		return 0
	}
	set := make(map[string]bool, len(pinned)+len(priority))
	for _, p := range pinned {
		set[p] = true
	}
	for _, p := range priority {
		set[p] = true
	}
	k := 0
	for k < len(rank) && set[listing[rank[k]].Name] {
		k++
	}
	return k
}

// largestFit is a k in [0, n] with ok(k), or -1. It probes 0, 1, 2, 4, …
// until ok fails, then searches between the last two probes, so it looks
// no further than twice the answer. ok is nearly, not strictly, monotone (a
// group's count can gain a digit, a group can leave the line), so k may
// fall a little short of the largest; it always satisfies ok.
func largestFit(n int, ok func(int) bool) int {
	if !ok(0) {
		return -1
	}
	lo, hi := 0, n+1
	for step := 1; lo+step <= n; step *= 2 {
		if !ok(lo + step) {
			hi = lo + step
			break
		}
		lo += step
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if ok(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
