package safety

import (
	"fmt"
	"hash/maphash"
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/loadout/loadout/skill"
)

// confusables maps characters that look like a Latin letter to it: the
// Cyrillic and Greek lookalikes, fullwidth forms, and digits that pass for
// letters in a name (0 for o, 1 for l). A small hand-picked table, not
// Unicode's full confusables list: it covers what fits a skill name.
var confusables = map[rune]rune{
	// Cyrillic.
	'а': 'a', 'в': 'b', 'е': 'e', 'ё': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y', 'х': 'x', 'і': 'i', 'ї': 'i',
	'ј': 'j', 'ѕ': 's', 'һ': 'h', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'ӏ': 'l', 'к': 'k', 'м': 'm', 'н': 'h', 'т': 't',
	'г': 'r', 'п': 'n', 'ь': 'b', 'ѵ': 'v', 'ү': 'y', 'ɡ': 'g',
	// Greek.
	'α': 'a', 'ο': 'o', 'ν': 'v', 'ρ': 'p', 'ι': 'i', 'κ': 'k', 'υ': 'u', 'χ': 'x', 'ε': 'e', 'τ': 't', 'η': 'n',
	'β': 'b', 'γ': 'y', 'μ': 'u', 'ω': 'w',
	// Latin lookalikes.
	'ı': 'i', 'ℓ': 'l', 'ⅼ': 'l', 'ⅰ': 'i', 'ǀ': 'l', 'ɑ': 'a', 'ɩ': 'i', 'ʏ': 'y',
	// Digits and ASCII.
	'0': 'o', '1': 'l', 'I': 'l', '|': 'l', '_': '-',
}

// Skeleton maps a name to the form two lookalike names share: lower case,
// confusable characters replaced by the Latin letter they imitate,
// fullwidth letters folded, "rn" read as "m" and "vv" as "w".
func Skeleton(name string) string {
	if skeletonIsName(name) {
		return name // no copy: check names 50,000 skills at once
	}
	return skeletonOf(name)
}

// asciiConfusable marks the ASCII characters Skeleton changes: upper case
// and the ASCII keys of confusables.
var asciiConfusable = func() (t [128]bool) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for r := range confusables {
		if r < 128 {
			t[r] = true
		}
	}
	return t
}()

// skeletonIsName reports whether name is its own skeleton: ASCII that
// Skeleton leaves as it is, holding neither "rn" nor "vv".
func skeletonIsName(name string) bool {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= 0x80 || asciiConfusable[c] {
			return false
		}
	}
	return !strings.Contains(name, "rn") && !strings.Contains(name, "vv")
}

// skeletonOf is Skeleton, made character by character.
func skeletonOf(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r >= 0xFF01 && r <= 0xFF5E { // fullwidth ASCII
			r -= 0xFEE0
		}
		if m, ok := confusables[r]; ok {
			r = m
		} else {
			r = unicode.ToLower(r)
			if m, ok := confusables[r]; ok {
				r = m
			}
		}
		b.WriteRune(r)
	}
	s := strings.ReplaceAll(b.String(), "rn", "m")
	return strings.ReplaceAll(s, "vv", "w")
}

// Confusable reports whether two different names look alike: their
// skeletons are equal.
func Confusable(a, b string) bool {
	return a != b && Skeleton(a) == Skeleton(b)
}

// scripts returns the scripts of the letters in name (Latin, Cyrillic,
// Greek, …); Japanese kana and Han count as one.
func scripts(name string) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range name {
		if !unicode.IsLetter(r) {
			continue
		}
		s := "other"
		switch {
		case r < 0x80 || unicode.Is(unicode.Latin, r):
			s = "Latin"
		case unicode.Is(unicode.Cyrillic, r):
			s = "Cyrillic"
		case unicode.Is(unicode.Greek, r):
			s = "Greek"
		case unicode.Is(unicode.Han, r), unicode.Is(unicode.Hiragana, r), unicode.Is(unicode.Katakana, r):
			s = "Han/Kana"
		case unicode.Is(unicode.Hangul, r):
			s = "Hangul"
		case unicode.Is(unicode.Arabic, r):
			s = "Arabic"
		case unicode.Is(unicode.Hebrew, r):
			s = "Hebrew"
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// checkName reports a name that mixes scripts ("рdf": Cyrillic р, Latin
// df), or is written entirely in lookalikes of a Latin name.
func (c *checker) checkName() {
	name := c.in.Name
	if name == "" {
		return
	}
	ascii := true
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return
	}
	sc := scripts(name)
	sk := Skeleton(name)
	switch {
	case len(sc) > 1:
		c.out = append(c.out, finding{code: CodeMixedScriptName, path: "SKILL.md", field: "name",
			msg: fmt.Sprintf("name %q mixes %s letters; it reads as %q: use one script (lowercase ASCII is what the spec allows)", name, strings.Join(sc, " and "), sk)})
	case isASCII(sk):
		c.out = append(c.out, finding{code: CodeConfusableName, path: "SKILL.md", field: "name",
			msg: fmt.Sprintf("name %q is written in %s lookalikes of %q: rename it in lowercase ASCII", name, strings.Join(sc, ""), sk)})
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// Similar checks the skills of one loadout against each other: names that
// look alike (Confusable) and descriptions so alike that a model cannot
// choose between them (cosine similarity of word and word-pair counts at
// or above Policy.SimilarityThreshold, default 0.85). Each pair is
// reported once, on the second skill of the pair, naming both with the
// score. An allow entry for either skill accepts the pair. Pairwise work
// is bounded by Policy.MaxSimilarSkills (default 2,000 skills); over it
// the description check is skipped with a CodeSimilarLimit info.
func Similar(skills []Input, p *Policy) []skill.Diagnostic {
	listed := make([]Listed, len(skills))
	for i, s := range skills {
		listed[i] = Listed{Name: s.Name, Description: s.Description}
	}
	return SimilarListed(listed, p)
}

// Listed is what Similar reads of a skill: its name and description.
type Listed struct {
	Name, Description string
}

// skeletonHash hashes a skeleton for SimilarListed (a test makes every
// skeleton collide).
var skeletonHash = maphash.String

// SimilarListed is Similar of the names and descriptions alone: a caller
// that checks a loadout of 50,000 skills need not make an Input of each.
func SimilarListed(skills []Listed, p *Policy) []skill.Diagnostic {
	p = p.orDefault()
	var out []skill.Diagnostic
	emit := func(code, a, b, msg string) {
		sev, on := p.Severity(code)
		if !on {
			return
		}
		f := finding{code: code, path: "SKILL.md", msg: msg}
		if why, ok := p.allowed(b, f); ok {
			sev, msg = skill.Info, "allowed ("+why+"): "+msg
		} else if why, ok := p.allowed(a, f); ok {
			sev, msg = skill.Info, "allowed ("+why+"): "+msg
		}
		out = append(out, skill.Diagnostic{Severity: sev, Code: code, Message: msg, Path: "SKILL.md", Skill: b, Field: fieldOf(code)})
	}
	// Names: one pass, grouping by skeleton. The map holds a hash of each
	// skeleton, not the skeleton: at 50,000 skills the strings and their
	// map were 2.8 MB at the peak of a check; a hash that two skeletons
	// share is told apart by comparing the skeletons.
	seed := maphash.MakeSeed()
	bySk := make(map[uint64]int32, len(skills)) // skeleton hash -> the first skill with it
	var clash map[string]int32                  // skeletons whose hash another took first
	for i, s := range skills {
		if s.Name == "" {
			continue
		}
		k := Skeleton(s.Name)
		h := skeletonHash(seed, k)
		at, ok := bySk[h]
		if ok && Skeleton(skills[at].Name) != k {
			if at, ok = clash[k]; !ok {
				if clash == nil {
					clash = map[string]int32{}
				}
				clash[k] = int32(i)
				continue
			}
		}
		if ok {
			if first := skills[at].Name; first != s.Name {
				emit(CodeConfusableName, first, s.Name, fmt.Sprintf("name %q looks like %q (both read as %q): a reviewer or a model can mistake one for the other; rename one", s.Name, first, k))
			}
			continue
		}
		bySk[h] = int32(i)
	}
	// Descriptions: pairwise cosine over sparse vectors.
	if len(skills) > p.maxSimilar() {
		emit(CodeSimilarLimit, "", "", fmt.Sprintf("%d skills is over Policy.MaxSimilarSkills (%d): similar descriptions were not checked; raise the limit or check each agent's loadout on its own", len(skills), p.maxSimilar()))
		return out
	}
	ids := map[string]int32{}
	vecs := make([]vector, len(skills))
	for i, s := range skills {
		vecs[i] = vectorize(s.Description, ids)
	}
	th := p.threshold()
	for j := range skills {
		for i := 0; i < j; i++ {
			if skills[i].Name == skills[j].Name || vecs[i].norm == 0 || vecs[j].norm == 0 {
				continue
			}
			if sim := cosine(vecs[i], vecs[j]); sim >= th {
				emit(CodeSimilar, skills[i].Name, skills[j].Name, fmt.Sprintf("the descriptions of %q and %q are %.2f alike (cosine similarity of word and word-pair counts; threshold %.2f): the model cannot tell which to use; say what each does that the other does not, and when to use it",
					skills[j].Name, skills[i].Name, sim, th))
			}
		}
	}
	return out
}

func fieldOf(code string) string {
	switch code {
	case CodeConfusableName:
		return "name"
	case CodeSimilar:
		return "description"
	}
	return ""
}

// vector is a sparse count vector: ids sorted ascending, with weights.
type vector struct {
	ids  []int32
	w    []float64
	norm float64
}

// stopwords carry no meaning for telling skills apart.
var stopwords = map[string]bool{
	"a": true, "an": true, "the": true, "and": true, "or": true, "of": true, "to": true, "in": true, "on": true,
	"for": true, "with": true, "is": true, "are": true, "be": true, "this": true, "that": true, "it": true,
	"as": true, "by": true, "from": true, "at": true, "its": true, "your": true, "you": true,
}

// Words splits a description into lower-case words without stopwords.
func words(s string) []string {
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	out := f[:0]
	for _, w := range f {
		if !stopwords[w] {
			out = append(out, w)
		}
	}
	return out
}

// vectorize counts a description's words and word pairs.
func vectorize(s string, ids map[string]int32) vector {
	ws := words(s)
	counts := map[int32]float64{}
	id := func(k string) int32 {
		v, ok := ids[k]
		if !ok {
			v = int32(len(ids))
			ids[k] = v
		}
		return v
	}
	for i, w := range ws {
		counts[id(w)]++
		if i > 0 {
			counts[id(ws[i-1]+" "+w)]++
		}
	}
	v := vector{ids: make([]int32, 0, len(counts))}
	for k := range counts {
		v.ids = append(v.ids, k)
	}
	sort.Slice(v.ids, func(i, j int) bool { return v.ids[i] < v.ids[j] })
	v.w = make([]float64, len(v.ids))
	var sq float64
	for i, k := range v.ids {
		v.w[i] = counts[k]
		sq += counts[k] * counts[k]
	}
	v.norm = math.Sqrt(sq)
	return v
}

// Cosine returns the cosine similarity of two descriptions' word and
// word-pair counts (stopwords dropped), from 0 (nothing shared) to 1.
func Cosine(a, b string) float64 {
	ids := map[string]int32{}
	va, vb := vectorize(a, ids), vectorize(b, ids)
	if va.norm == 0 || vb.norm == 0 {
		return 0
	}
	return cosine(va, vb)
}

func cosine(a, b vector) float64 {
	var dot float64
	i, j := 0, 0
	for i < len(a.ids) && j < len(b.ids) {
		switch {
		case a.ids[i] < b.ids[j]:
			i++
		case a.ids[i] > b.ids[j]:
			j++
		default:
			dot += a.w[i] * b.w[j]
			i++
			j++
		}
	}
	return dot / (a.norm * b.norm)
}
