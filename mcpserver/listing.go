package mcpserver

import (
	"reflect"
	"sync"
	"time"

	"github.com/loadout/loadout/catalog"
)

// A write to the store makes a new loadout for every agent that selects
// the skill written, and each of the server's views follows it. Most
// writes (a reference file, a body edit) change nothing a listing shows:
// then the new view keeps what the old one derived from the listing (the
// instructions, the tools' enum) instead of deriving it again, and the
// sessions are told only that the resources changed. At 10,000 skills
// the instructions were most of a write's cost.

// listingText is an agent's instructions, rendered once, on first use; a
// view whose listing is the same as its predecessor's shares it.
type listingText struct {
	once sync.Once
	text string
}

// coalesce is how long follow waits after a change before it acts, so a
// burst of writes (an import script, a sync) costs one update of the
// tools and one round of list_changed notifications, not one each. A
// variable for tests; a server takes its value when it is made.
var coalesce = 50 * time.Millisecond

// sameListing reports whether loadouts a and b list the same skills the
// same way: the same agent settings and, entry by entry, the same names,
// descriptions and everything else the listing, the tools' enum or
// prompts/list shows. An entry that is the same value in both is the
// same; a changed inline entry, or a changed entry of an agent that
// refuses invalid skills (whose validity is read from the files), counts
// as a change, since what they show depends on more than the fields.
func sameListing(a, b *catalog.Loadout) bool {
	strict := a != nil && refuseInvalid(a)
	return sameEntries(a, b, func(x, y *catalog.Entry) bool {
		if x.Listed != y.Listed || x.Inline != y.Inline || x.Source != y.Source {
			return false
		}
		return x.Skill == y.Skill || !x.Inline && !strict && sameListed(x, y)
	})
}

// sameEntries reports whether loadouts a and b have the same settings and,
// entry by entry, entries that are the same value or that same says are
// alike.
func sameEntries(a, b *catalog.Loadout, same func(x, y *catalog.Entry) bool) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil || !reflect.DeepEqual(a.Spec, b.Spec) {
		return false
	}
	ea, eb := a.Entries(), b.Entries()
	if len(ea) != len(eb) {
		return false
	}
	for i, x := range ea {
		if y := eb[i]; x != y && !same(x, y) {
			return false
		}
	}
	return true
}

// sameListed compares what the listing (render.Prompt), the tools' enum
// and prompts/list take from an entry's skill. The origin is not among
// them: a stored skill's version moves with every write.
func sameListed(x, y *catalog.Entry) bool {
	p, q := x.Skill, y.Skill
	if p.Name != q.Name || p.Description != q.Description || p.Location != q.Location || p.Dir != q.Dir ||
		p.Virtual != q.Virtual || p.Hidden() != q.Hidden() {
		return false
	}
	var cp, cq string
	if p.Meta != nil {
		cp = p.Meta.Category
	}
	if q.Meta != nil {
		cq = q.Meta.Category
	}
	return cp == cq
}

// sameSkills reports whether loadouts a and b serve the very same skill
// values under the same settings: a reload that rebuilt the agent's
// loadout without changing any of its skills changed nothing a session
// can see.
func sameSkills(a, b *catalog.Loadout) bool {
	return sameEntries(a, b, func(x, y *catalog.Entry) bool {
		return x.Skill == y.Skill && x.Listed == y.Listed && x.Inline == y.Inline && x.Source == y.Source
	})
}
