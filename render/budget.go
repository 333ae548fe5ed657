package render

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// frameCtx is what the text around the entries depends on.
type frameCtx struct {
	s settings
	// hasListing is true once a listing part was written; the inline part
	// then needs no heading of its own.
	hasListing bool
	hasInline  bool
	// listVirtual: a rendered listing entry is virtual; inlineVirtual: an
	// inline entry is.
	listVirtual, inlineVirtual bool
}

func (c frameCtx) withKept(listing []Entry, kept int) frameCtx {
	c.hasListing = true
	c.listVirtual = anyVirtual(listing[:kept])
	return c
}

// plan says how much of the listing to render.
type plan struct {
	// kept is how many entries, from the start, are rendered.
	kept int
	// caps[i] is -1 to keep entry i's description whole, else the number
	// of code points it is cut to (before the ellipsis).
	caps []int
	// tooSmall: the budget cannot hold the frame and the note about the
	// skills left out; kept is 0 and the listing is over the budget.
	tooSmall bool
}

// minFrame is the length of the listing part with none of n entries kept:
// the frame text and the note about the n skills left out.
func minFrame(lay layout, c frameCtx, n int) int {
	fc := c
	fc.hasListing = true
	fc.listVirtual = false
	return utf8.RuneCountInString(lay.head(fc)) + utf8.RuneCountInString(lay.tail(fc, 0, n))
}

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

// extraBefore is the extra length of escaped characters among the first m.
func (c *descCost) extraBefore(slab []special, m int) int {
	sp := slab[c.lo:c.hi]
	if len(sp) == 0 || int(sp[0].pos) >= m {
		return 0
	}
	if int(sp[len(sp)-1].pos) < m {
		return int(sp[len(sp)-1].cum)
	}
	j := sort.Search(len(sp), func(j int) bool { return int(sp[j].pos) >= m })
	return int(sp[j-1].cum)
}

// at is the cost of the description capped at L code points. It is an upper
// bound of what cut renders (cut may drop trailing white space) and never
// decreases as L grows.
func (c *descCost) at(slab []special, L int) int {
	if L >= c.n {
		return c.n + c.extraBefore(slab, c.n)
	}
	return L + c.extraBefore(slab, L) + 1 // 1: the ellipsis
}

// fit plans the listing so that it fits the budget (see Prompt).
func fit(lay layout, listing []Entry, c frameCtx) plan {
	n := len(listing)
	p := plan{kept: n, caps: make([]int, n)}
	for i := range p.caps {
		p.caps[i] = -1
	}
	budget := c.s.budget
	if budget < 0 {
		return p
	}

	// virt[k]: one of the first k entries is virtual (the frame mentions
	// the read tool then).
	virt := make([]bool, n+1)
	fixed := make([]int, n)
	descs := make([]descCost, n)
	var slab []special
	var sb strings.Builder
	sb.Grow(n * 128)
	sumFixed, sumFull := 0, 0
	extra := lay.escapeExtra()
	for i, e := range listing {
		virt[i+1] = virt[i] || e.Virtual
		// Entries go into one buffer; each one's fixed cost is what it
		// adds with an empty description.
		start := sb.Len()
		lay.entry(&sb, e, "", false)
		fixed[i] = utf8.RuneCountInString(sb.String()[start:])
		descs[i] = newDescCost(lay.prepDesc(e.Description), extra, &slab)
		sumFixed += fixed[i]
		sumFull += descs[i].at(slab, descs[i].n)
	}
	// frame is the cost of the text around the first k entries. The head
	// depends only on whether a virtual entry is among them.
	headCost := [2]int{-1, -1}
	frame := func(k int) int {
		fc := c
		fc.hasListing = true
		fc.listVirtual = virt[k]
		v := 0
		if virt[k] {
			v = 1
		}
		if headCost[v] < 0 {
			headCost[v] = utf8.RuneCountInString(lay.head(fc))
		}
		return headCost[v] + utf8.RuneCountInString(lay.tail(fc, k, n-k))
	}
	full := frame(n)
	if full+sumFixed+sumFull <= budget {
		return p
	}

	// Keep as many entries as fit with every description cut to nothing.
	// pre[k] is what the first k entries cost then.
	pre := make([]int, n+1)
	for i := range descs {
		pre[i+1] = pre[i] + fixed[i] + descs[i].at(slab, 0)
	}
	k, fr := n, full
	if full+pre[n] > budget {
		// Some must go, and the note about them comes in. With the note
		// present, each entry kept costs more than the note can shrink by
		// (a digit, "skills are" becoming "skill is"), so the cost grows
		// with k and a binary search finds the largest k that fits.
		lo, hi := -1, n // lo fits (or is the sentinel -1), hi does not
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			if frame(mid)+pre[mid] <= budget {
				lo = mid
			} else {
				hi = mid
			}
		}
		k = lo
		if k < 0 {
			// Not even the frame and the note fit. The note is the one
			// line that says skills exist and how to find them, so it
			// stays: the listing keeps no entry and is over the budget,
			// which Report.TooSmall says (callers refuse or warn).
			return plan{kept: 0, tooSmall: true}
		}
		fr = frame(k)
	}
	p.kept, p.caps = k, p.caps[:k]
	avail := budget - fr
	for i := 0; i < k; i++ {
		avail -= fixed[i]
	}
	waterfill(descs[:k], slab, avail, p.caps)
	return p
}

// waterfill sets caps so that the descriptions cost at most avail, which
// they do when all are cut to nothing. It finds the largest common cap L
// that fits, then hands what is left over, in order, one more code point
// per description.
func waterfill(ds []descCost, slab []special, avail int, caps []int) {
	total := func(L int) int {
		t := 0
		for i := range ds {
			t += ds[i].at(slab, L)
		}
		return t
	}
	maxN := 0
	for i := range ds {
		maxN = max(maxN, ds[i].n)
	}
	if total(maxN) <= avail {
		return // all whole; caps are already -1
	}
	lo, hi := 0, maxN // total(lo) fits, total(hi) does not
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if total(mid) <= avail {
			lo = mid
		} else {
			hi = mid
		}
	}
	L := lo
	used := total(L)
	for i := range ds {
		if ds[i].n > L {
			caps[i] = L
		}
	}
	for i := range ds {
		if ds[i].n <= L {
			continue
		}
		delta := ds[i].at(slab, L+1) - ds[i].at(slab, L)
		if used+delta > avail {
			continue
		}
		used += delta
		if ds[i].n == L+1 {
			caps[i] = -1
		} else {
			caps[i] = L + 1
		}
	}
}
