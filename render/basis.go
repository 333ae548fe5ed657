package render

import (
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A Basis is a listing as it was planned. Given back to Prompt
// (Options.Basis), it keeps that listing's text byte for byte and writes
// what changed since after it: skills added or edited, described within
// the budget's reserve, and the named skills no longer there. A prompt
// cache keys on the prompt's prefix, so adding, editing or removing a
// skill, or new usage counts, then cost only the few characters at the
// end, not the whole listing.
//
// A Basis is planned afresh (Report.Replan says why) when there is none,
// when the options it was planned for changed (format, budget, floor,
// tools, preface, pins, the inline skills), or when the changes do not
// fit: more than MaxChanges skills, changes longer than the reserve or
// than a ninth of the planned text, a changed pinned skill that cannot be
// described whole, or a stored skill joining a listing that never said
// how to read stored skills. Usage counts never re-plan it: callers
// re-plan on a schedule by passing no Basis (the service does daily).
//
// A Basis is immutable and safe to share between goroutines.
type Basis struct {
	key    uint64 // the options and inline context it was planned for
	text   string // the listing part as planned, preface excluded
	chars  int    // its length in code points
	virt   bool   // the planned text tells how to read stored skills
	skills map[string]basisSkill
	groups []Group // Report.Groups of the plan
}

// basisSkill is what the listing showed of one skill: its tier, and the
// text it was planned with (shared with the entry, not copied).
type basisSkill struct {
	tier        Tier
	virtual     bool
	desc, where string
}

// same reports whether e shows as it did when planned.
func (b *basisSkill) same(e *Entry) bool {
	return b.desc == e.Description && b.where == e.Location && b.virtual == e.Virtual
}

// ReserveShare: a fresh plan leaves 1/ReserveShare of the budget (8%)
// for the changes a Basis carries until the next plan; the changes may
// use at most a ninth of the planned text, so that at least 90% of a
// listing stays its byte prefix from one change to the next.
const ReserveShare = 12

// MaxChanges is the most skills a Basis carries changes for (added,
// changed or removed, named or not: a group's count in the planned text
// is off by the skills removed from it); past it the listing is planned
// afresh.
const MaxChanges = 64

// Bytes is about how much memory the Basis holds: its text, and each
// planned skill's name, tier, description and location.
func (b *Basis) Bytes() int {
	n := len(b.text) + 80*len(b.skills)
	for name, s := range b.skills {
		// The texts are the entries' (shared), but a plan keeps them
		// alive after the catalog moves on.
		n += len(name) + len(s.desc) + len(s.where)
	}
	return n
}

// Chars is the length of the planned listing in code points.
func (b *Basis) Chars() int { return b.chars }

// reserve is what a fresh plan leaves unused of budget: 1/ReserveShare
// of it, but never so much that the listing's frame and its note on the
// skills left out (least) no longer fit.
func reserve(budget, least int) int {
	if budget < 0 {
		return 0
	}
	return max(0, min(budget/ReserveShare, budget-least))
}

// basisKey hashes what a listing's text depends on besides its entries
// and the usage counts.
func basisKey(s settings, opt Options, c frameCtx) uint64 {
	h := fnv.New64a()
	for _, p := range []string{s.format, strconv.Itoa(s.budget), strconv.Itoa(s.floor), s.load, s.read, s.search, opt.Preface,
		strconv.FormatBool(c.hasInline), strconv.FormatBool(c.inlineVirtual)} {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	pins := slices.Clone(opt.Pinned)
	slices.Sort(pins)
	for _, p := range pins {
		h.Write([]byte(p))
		h.Write([]byte{1})
	}
	return h.Sum64()
}

func newBasis(key uint64, text string, listing []Entry, tiers []Tier, virt bool) *Basis {
	b := &Basis{key: key, text: text, chars: utf8.RuneCountInString(text), virt: virt, skills: make(map[string]basisSkill, len(listing))}
	for i := range listing {
		if _, dup := b.skills[listing[i].Name]; !dup {
			e := &listing[i]
			b.skills[e.Name] = basisSkill{tier: tiers[i], virtual: e.Virtual, desc: e.Description, where: e.Location}
		}
	}
	return b
}

func named(t Tier) bool { return t == TierFull || t == TierShortened || t == TierName }

// kept is a listing rendered on a Basis.
type kept struct {
	tiers   []Tier
	tail    string
	changed []string // in the tail, in listing order
	removed []string // every basis skill no longer listed, by name
}

// keep renders listing on bs: the tier of every skill the basis planned
// and did not change, and the tail of changes. It returns why the basis
// cannot be kept instead ("" when it can).
func keep(lay layout, listing []Entry, c frameCtx, opt Options, bs *Basis) (kept, string) {
	budget := c.s.budget
	k := kept{tiers: make([]Tier, len(listing))}
	var items []int // listing indexes of the skills added or changed
	seen := make(map[string]bool, len(listing))
	inBasis := 0 // names of the listing the basis planned
	for i := range listing {
		e := &listing[i]
		old, ok := bs.skills[e.Name]
		if ok && !seen[e.Name] {
			inBasis++
		}
		switch {
		case !ok || seen[e.Name]:
			items = append(items, i)
		case old.same(e) || !named(old.tier):
			// Unchanged, or changed but never named: the listing shows
			// nothing of it to change.
			k.tiers[i] = old.tier
		default:
			items = append(items, i)
		}
		seen[e.Name] = true
		if len(items) > MaxChanges {
			return k, "more than " + strconv.Itoa(MaxChanges) + " skills were added, changed or removed"
		}
	}
	var gone []string // named in the basis, no longer listed
	if inBasis < len(bs.skills) {
		for name, old := range bs.skills {
			if !seen[name] {
				k.removed = append(k.removed, name)
				if named(old.tier) {
					gone = append(gone, name)
				}
			}
		}
		if len(items)+len(k.removed) > MaxChanges {
			return k, "more than " + strconv.Itoa(MaxChanges) + " skills were added, changed or removed"
		}
		slices.Sort(k.removed)
		slices.Sort(gone)
	}
	if len(items) == 0 && len(gone) == 0 {
		return k, ""
	}
	fc := c
	fc.hasListing = true
	fc.listVirtual = bs.virt
	for _, i := range items {
		if listing[i].Virtual && !bs.virt {
			return k, "a stored skill joined a listing that does not say how to read stored skills"
		}
	}
	room := min(budget-bs.chars, bs.chars/9)
	if budget < 0 {
		room = bs.chars / 9
	}
	// Every change by name first; then descriptions, whole or at the
	// floor, pinned skills first, then in priority order.
	caps := make([]int, len(items))
	tiers := make([]Tier, len(items))
	for j := range tiers {
		tiers[j] = TierName
	}
	tail := tailText(lay, fc, listing, items, tiers, caps, gone)
	if utf8.RuneCountInString(tail) > room {
		return k, "the changes do not fit the reserve"
	}
	order := make([]int, len(items))
	for j := range order {
		order[j] = j
	}
	prio := map[string]int{}
	for r, p := range append(slices.Clip(opt.Pinned), opt.Priority...) {
		if _, ok := prio[p]; !ok {
			prio[p] = r
		}
	}
	rankOf := func(j int) int {
		if r, ok := prio[listing[items[j]].Name]; ok {
			return r
		}
		return len(prio)
	}
	slices.SortStableFunc(order, func(a, b int) int { return rankOf(a) - rankOf(b) })
	for _, j := range order {
		d := lay.prepDesc(listing[items[j]].Description)
		n := utf8.RuneCountInString(d)
		if n == 0 {
			continue
		}
		// Whole if it fits, else at the floor, else by name.
		tiers[j] = TierFull
		next := tailText(lay, fc, listing, items, tiers, caps, gone)
		if L := floorCap(d, c.s.floor); utf8.RuneCountInString(next) > room && L < n {
			tiers[j], caps[j] = TierShortened, L
			next = tailText(lay, fc, listing, items, tiers, caps, gone)
		}
		if utf8.RuneCountInString(next) > room {
			tiers[j] = TierName
			continue
		}
		tail = next
	}
	pinned := map[string]bool{}
	for _, p := range opt.Pinned {
		pinned[p] = true
	}
	for j, i := range items {
		if pinned[listing[i].Name] && tiers[j] != TierFull && listing[i].Description != "" {
			return k, "a changed pinned skill cannot be described whole in the reserve"
		}
		k.tiers[i] = tiers[j]
		k.changed = append(k.changed, listing[i].Name)
	}
	k.tail = tail
	return k, ""
}

// tailText is the section of changes written after a Basis's text: the
// added or changed skills (items) at their tiers, and the named skills
// no longer listed.
func tailText(lay layout, fc frameCtx, listing []Entry, items []int, tiers []Tier, caps []int, gone []string) string {
	var b strings.Builder
	b.WriteString("\n\n")
	b.WriteString(lay.tailIntro())
	var names []int
	described := false
	for j, i := range items {
		e := listing[i]
		switch tiers[j] {
		case TierFull, TierShortened:
			if !described {
				b.WriteString("\n\n")
				b.WriteString(lay.tailOpen())
				described = true
			}
			if tiers[j] == TierFull {
				lay.entry(&b, e, lay.prepDesc(e.Description), false)
			} else {
				lay.entry(&b, e, cut(lay.prepDesc(e.Description), caps[j]), true)
			}
		default:
			names = append(names, i)
		}
	}
	if described {
		b.WriteString(lay.tailClose())
	}
	s := strings.TrimSuffix(b.String(), "\n")
	b.Reset()
	b.WriteString(s)
	if len(names) > 0 {
		b.WriteString("\n\n")
		writeNames(&b, lay, fc, listing, names)
	}
	if len(gone) > 0 {
		b.WriteString("\n\nNo longer available, do not load: ")
		for j, name := range gone {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(plainName(name))
		}
		b.WriteString(".")
	}
	return b.String()
}

// plainName is name as the line of skills no longer available shows it:
// quoted unless it is letters, digits and "-_.:" only.
func plainName(name string) string {
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("-_.:", r) {
			return strconv.Quote(name)
		}
	}
	return name
}
