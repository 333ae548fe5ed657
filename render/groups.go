package render

// namedGroups are the groups p's groups line names, with their skills.
func namedGroups(listing []Entry, p plan) []Group {
	gs := p.groups
	if gs == nil {
		return nil
	}
	cnt, _ := gs.grouped(p.tiers)
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
