package catalog

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// Hit is one search result: a short entry, never a body.
type Hit struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Score       float64 `json:"score"`
	// Source is the skill's origin kind: folder, store or plugin.
	Source string `json:"source"`
}

// searchIndex is an inverted index over the names and descriptions of a
// loadout's skills, built on first search and kept with the immutable
// loadout.
type searchIndex struct {
	entries []*Entry
	terms   map[string][]posting
	sorted  []string // the terms, sorted, for prefix matches
	lens    []int
	avgLen  float64
}

type posting struct {
	doc  int32
	tf   uint16
	name bool // the term is in the name
}

const maxDescTerms = 200

func tokenize(s string, out []string) []string {
	start := -1
	for i, r := range s {
		ok := unicode.IsLetter(r) || unicode.IsDigit(r)
		if ok && start < 0 {
			start = i
		}
		if !ok && start >= 0 {
			out = append(out, strings.ToLower(s[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, strings.ToLower(s[start:]))
	}
	return out
}

func (l *Loadout) index() *searchIndex {
	l.searchOnce.Do(func() {
		ix := &searchIndex{terms: map[string][]posting{}}
		var toks []string
		total := 0
		for _, name := range l.names {
			e := l.byName[name]
			doc := int32(len(ix.entries))
			ix.entries = append(ix.entries, e)
			counts := map[string]int{}
			inName := map[string]bool{}
			toks = tokenize(e.Skill.Name, toks[:0])
			for _, t := range toks {
				counts[t] += 3
				inName[t] = true
			}
			toks = tokenize(e.Skill.Description, toks[:0])
			if len(toks) > maxDescTerms {
				toks = toks[:maxDescTerms]
			}
			for _, t := range toks {
				counts[t]++
			}
			for _, t := range e.Skill.Meta.Tags {
				counts[strings.ToLower(t)] += 2
			}
			n := 0
			for t, c := range counts {
				ix.terms[t] = append(ix.terms[t], posting{doc: doc, tf: uint16(min(c, 65535)), name: inName[t]})
				n += c
			}
			ix.lens = append(ix.lens, n)
			total += n
		}
		if len(ix.entries) > 0 {
			ix.avgLen = float64(total) / float64(len(ix.entries))
		}
		for t := range ix.terms {
			ix.sorted = append(ix.sorted, t)
		}
		sort.Strings(ix.sorted)
		l.search = ix
	})
	return l.search
}

// Search ranks the skills the agent can load against a query, by BM25 over
// names, descriptions and tags (names weigh most, and a word that starts a
// name or a whole-name match ranks first). Listed, inline and
// budget-omitted skills are all searchable: this is how skills left out of
// the listing are reached. limit defaults to 10.
func (l *Loadout) Search(query string, limit int) []Hit {
	if limit <= 0 {
		limit = 10
	}
	ix := l.index()
	q := tokenize(query, nil)
	if len(q) == 0 || len(ix.entries) == 0 {
		return []Hit{}
	}
	scores := map[int32]float64{}
	n := float64(len(ix.entries))
	const k1, b = 1.2, 0.75
	for _, t := range q {
		posts := ix.terms[t]
		// Prefix matches count too (a query "deplo" finds "deploy"), at
		// half weight, for terms of three or more letters.
		var prefix []posting
		if len(t) >= 3 {
			for i := sort.SearchStrings(ix.sorted, t); i < len(ix.sorted) && strings.HasPrefix(ix.sorted[i], t); i++ {
				if ix.sorted[i] != t {
					prefix = append(prefix, ix.terms[ix.sorted[i]]...)
				}
			}
		}
		for pass, ps := range [][]posting{posts, prefix} {
			if len(ps) == 0 {
				continue
			}
			idf := logf(1 + (n-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
			w := 1.0
			if pass == 1 {
				w = 0.5
			}
			for _, p := range ps {
				tf := float64(p.tf)
				norm := tf * (k1 + 1) / (tf + k1*(1-b+b*float64(ix.lens[p.doc])/ix.avgLen))
				s := w * idf * norm
				if p.name {
					s *= 1.5
				}
				scores[p.doc] += s
			}
		}
	}
	whole := strings.ToLower(strings.TrimSpace(query))
	for doc := range ix.entries {
		if ix.entries[doc].Skill.Name == whole {
			scores[int32(doc)] += 100
		}
	}
	hits := make([]Hit, 0, len(scores))
	for doc, sc := range scores {
		e := ix.entries[doc]
		hits = append(hits, Hit{Name: e.Skill.Name, Description: e.Skill.Description, Score: float64(int(sc*1000)) / 1000, Source: e.Skill.Origin.Kind})
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Name < hits[j].Name
	})
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

func logf(x float64) float64 { return math.Log(x) }
