package render

import "strings"

// Domains is every listing entry's domain, the groups a listing counts
// the skills it cannot name in.
type Domains struct {
	Keys  []string   // Keys[g]: the label shown to the model (never a host path)
	Words [][]string // Words[g]: up to 3 words the search matches, most distinctive first
	Of    []int      // Of[i]: the domain of listing[i]; every entry has exactly one
}

// NewDomains groups the entries: by category, else by a name prefix
// shared with another skill, else "other". (Temporary: replaced by the
// domain words.)
func NewDomains(listing []Entry) *Domains {
	d := &Domains{Of: make([]int, len(listing))}
	count := map[string]int{}
	prefix := make([]string, len(listing))
	for i, e := range listing {
		if e.Category != "" {
			continue
		}
		if j := strings.IndexAny(e.Name, "-_.:"); j > 0 {
			prefix[i] = e.Name[:j]
			count[prefix[i]]++
		}
	}
	idx := map[string]int{}
	for i, e := range listing {
		k := e.Category
		if k == "" {
			k = "other"
			if p := prefix[i]; p != "" && count[p] > 1 {
				k = p + "-*"
			}
		}
		g, ok := idx[k]
		if !ok {
			g = len(d.Keys)
			idx[k] = g
			d.Keys = append(d.Keys, k)
			d.Words = append(d.Words, nil)
		}
		d.Of[i] = g
	}
	return d
}

// namedGroups are the groups p's groups line names, with their skills.
func namedGroups(listing []Entry, p plan) []Group {
	gs := p.groups
	if gs == nil {
		return nil
	}
	cnt := make([]int, len(gs.d.Keys))
	for i, t := range p.tiers {
		if t == TierGrouped {
			cnt[gs.d.Of[i]]++
		}
	}
	var out []Group
	at := map[int]int{}
	gs.shown(cnt, func(g, _ int) {
		at[g] = len(out)
		out = append(out, Group{Label: gs.d.Keys[g], Words: gs.d.Words[g], Skills: make([]string, 0, cnt[g])})
	})
	for i, t := range p.tiers {
		if t != TierGrouped {
			continue
		}
		if j, ok := at[gs.d.Of[i]]; ok {
			out[j].Skills = append(out[j].Skills, listing[i].Name)
		}
	}
	return out
}
