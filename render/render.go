// Package render turns skills into the text a model reads: the listing that
// goes into a system prompt (Prompt) and the result of activating one skill
// (Envelope).
//
// Everything here is a pure function of its arguments. Nothing reads files,
// nothing keeps state, so the same input always gives the same bytes, which
// the golden files under testdata/golden pin down.
//
// # Formats
//
// "pi" (the default) writes the <available_skills> block byte for byte as
// Pi's coding agent does, preamble included, followed by Pi-style inline
// <skill name="…" location="…"> blocks for preloaded skills. "catalog" writes
// a Markdown "## Agent Skills" section (skill catalog, rules for resolving
// relative paths, details of preloaded skills). "progressive" writes an
// "## Agent Skills" section listing only ids and descriptions, sorted by id,
// and asks the model to call the load tool for the rest.
//
// # Budget
//
// Options.Budget limits the listing part of the prompt: all the text that
// comes before the first preloaded (inline) skill. Bodies of inline skills
// are never cut, since the caller asked for them explicitly; they are counted
// in Report.Total but not in Report.Chars. Lengths are counted in Unicode
// code points. Options.BudgetTokens adds a budget in tokens, counted by
// ApproxTokens (code points / 4, rounded up); the smaller budget wins. See
// Prompt for how a listing is made to fit, in tiers.
package render

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/loadout/loadout/skill"
)

// Format names accepted in Options.Format.
const (
	FormatPi          = "pi"
	FormatCatalog     = "catalog"
	FormatProgressive = "progressive"
)

// Defaults for Options and EnvelopeInput.
const (
	DefaultBudget     = 8000
	DefaultLoadTool   = "load_skill"
	DefaultReadTool   = "read_skill_file"
	DefaultSearchTool = "search_skills"
	DefaultMaxFiles   = 200
)

// NoSearchTool, given as Options.SearchTool, says the model has no search
// tool: the note about skills left out of the listing then mentions only the
// `loadout list` command.
const NoSearchTool = "-"

// Ellipsis marks a description that was shortened to fit the budget.
const Ellipsis = "…"

// Entry is one skill as a prompt sees it.
type Entry struct {
	Name, Description string
	// Location is the absolute path of SKILL.md, or a virtual location.
	Location string
	// Dir is the skill folder (root path), or a virtual location.
	Dir string
	// Body is the Markdown after the frontmatter. Only inline (preloaded)
	// entries and envelopes use it.
	Body string
	// Virtual is true when the skill's files are not on the file system, so
	// the model must read them with the read tool (read_skill_file).
	Virtual bool
	// Origin is where the skill came from, shared with the skill (nil when
	// unknown). A pointer: a value was 120 of an entry's 224 bytes, 6 MB
	// of a 50,000-skill listing that only envelopes read.
	Origin *skill.Origin
	// Category is the skill's category (frontmatter `category`), if any.
	// Skills that do not fit the budget even by name are grouped by it.
	Category string
}

// NewEntry builds an Entry from a loaded skill. body is the skill's body
// when the entry is to be inlined or enveloped, else "". It reads nothing.
func NewEntry(s *skill.Skill, body string) Entry {
	return Entry{
		Name:        s.Name,
		Description: s.Description,
		Location:    s.Location,
		Dir:         s.Dir,
		Body:        body,
		Virtual:     s.Virtual,
		Origin:      s.Origin,
		Category:    category(s),
	}
}

func category(s *skill.Skill) string {
	if s.Meta == nil {
		return ""
	}
	return s.Meta.Category
}

// Options control Prompt.
type Options struct {
	// Format is "pi" (default), "catalog" or "progressive". An unknown name
	// falls back to "pi"; Report.Format says which was used, and
	// ValidFormat lets callers reject bad names earlier.
	Format string
	// Budget is the listing budget in characters (code points): 0 means
	// DefaultBudget, a negative value means unlimited.
	Budget int
	// Tool names to mention. Empty means the default: "load_skill",
	// "read_skill_file", "search_skills". SearchTool NoSearchTool ("-")
	// means there is no search tool.
	LoadTool, ReadTool, SearchTool string
	// Priority names skills in the order they should keep their
	// descriptions when not everything fits (pinned skills first, then the
	// most used, then by name); skills it does not name come after, by
	// name. It changes which skills keep how much, never the order of the
	// listing. Nil: by name.
	Priority []string
	// Preface is text the caller puts before the listing (an MCP server's
	// note on its tools, say). It is written first and counted in the
	// budget and in Report.Chars, so that the budget covers everything
	// the model receives.
	Preface string
	// Stable plans a fresh listing for keeping (see Basis): it leaves
	// 1/ReserveShare of the budget unused, for the changes to come.
	// Without it a fresh plan fills the budget, and the first change
	// after it re-plans.
	Stable bool
	// NoBasis says the caller keeps no Basis (a one-shot command): the
	// report's Basis is left nil, and the text is the same. At 50,000
	// skills a Basis was 5 MB, made at the peak of loadout prompt.
	NoBasis bool
	// Domains are the listing's domains (NewDomains of this listing),
	// when the caller keeps them; nil computes them when some skill must
	// be grouped.
	Domains *Domains
	// Basis is the Report.Basis of an earlier render, to keep its
	// listing's text and write only what changed after it (see Basis).
	// Nil plans afresh.
	Basis *Basis
	// Pinned names the skills that must be described whole whenever
	// their whole descriptions fit the budget (with the frame and the line
	// about the skills left out): they are described before any other
	// skill is named. When they do not fit, they still come first in
	// every tier. Pinned skills rank before Priority's.
	Pinned []string
	// BudgetTokens, when positive, also limits the listing to about this
	// many tokens (see ApproxTokens); the smaller of the two budgets wins.
	// Since ApproxTokens is ceil(code points / 4), it is a budget of
	// 4 × BudgetTokens characters.
	BudgetTokens int
	// DescriptionFloor is the least a shortened description keeps, in
	// characters (or its whole first sentence if that is shorter): 0 means
	// DefaultDescriptionFloor. A skill whose description cannot keep this
	// much is listed by name only.
	DescriptionFloor int
}

// Report says what Prompt rendered and what the budget cost.
type Report struct {
	// Format is the format used.
	Format string
	// Budget is the character budget applied: DefaultBudget for 0, -1 for
	// unlimited, and at most 4 × BudgetTokens when that is set (the smaller
	// budget wins).
	Budget int
	// BudgetTokens is Options.BudgetTokens (0: none).
	BudgetTokens int
	// Chars is the length of the listing part in code points; it never
	// exceeds a non-negative Budget unless TooSmall.
	Chars int
	// Tokens is ApproxTokens of the listing part.
	Tokens int
	// Total is the length of the whole output, inline skills included.
	Total int
	// Listed is how many listing skills are named, with a description or
	// by name only.
	Listed int
	// Inlined is how many inline entries were rendered.
	Inlined int
	// Names and Tiers give every listing skill's tier (TierFull …
	// TierOmitted): Tiers[i] is the tier of Names[i], in listing order.
	// Tier and TierMap look them up by name.
	Names []string
	Tiers []Tier
	// Shortened names the listed skills whose descriptions were cut
	// (TierShortened), in listing order.
	Shortened []string
	// NameOnly names the skills listed by name only (TierName).
	NameOnly []string
	// Grouped names the skills counted in a domain, not named (TierGrouped).
	Grouped []string
	// Omitted names the skills whose names are not in the listing (grouped,
	// or only counted in the note), in listing order.
	Omitted []string
	// MinBudget is the budget that always suffices: the listing's frame
	// text and the line saying how many skills are not listed and how to
	// find them (0 with no listing entries). A smaller budget is met only
	// when a few short names happen to take less than that line.
	MinBudget int
	// Groups are the domains the listing names on its groups line, with
	// the skills it counts in each (TierGrouped), in the line's order.
	// Skills grouped but not in one of these are counted as "in other
	// domains".
	Groups []Group
	// Basis is the plan this listing was written on, to pass as
	// Options.Basis next time: the one given, when it was kept, or a new
	// one. Nil when the listing is empty or too small, or when neither
	// Stable nor Basis was given (no plan is kept).
	Basis *Basis
	// Replan says why the listing was planned afresh ("" when the Basis
	// given was kept): "no basis", "the options changed", or why the
	// changes did not fit.
	Replan string
	// Changed names the skills added or changed since the Basis given,
	// shown after its text, in listing order; Removed the skills it
	// planned that are no longer listed, by name. Both empty on a fresh
	// plan.
	Changed, Removed []string
	// TooSmall is true when no listing fits the budget (it is then below
	// MinBudget): the listing names no skill but still has its frame and
	// that line, so Chars is MinBudget, over the budget. Callers should
	// refuse such a budget.
	TooSmall bool
}

// Group is one domain a listing names on its groups line.
type Group struct {
	Label  string   `json:"label"`
	Words  []string `json:"words,omitempty"`
	Skills []string `json:"skills"`
}

// MinBudget is the least budget for a listing of n entries under opt: the
// frame text of the format and the line that says how many skills are not
// listed and how to find them. The line must always fit, since without it
// a model would not know the skills exist. It is 0 for n = 0.
func MinBudget(n int, opt Options) int {
	if n <= 0 {
		return 0
	}
	s := opt.settings()
	return utf8.RuneCountInString(opt.Preface) + minFrame(layoutFor(s.format), frameCtx{s: s}, n)
}

// ValidFormat reports whether name is a format Prompt knows ("" included,
// meaning the default).
func ValidFormat(name string) bool {
	switch name {
	case "", FormatPi, FormatCatalog, FormatProgressive:
		return true
	}
	return false
}

// settings are Options with defaults applied.
type settings struct {
	format             string
	budget             int
	floor              int
	load, read, search string // search is "" when there is no search tool
}

func (o Options) settings() settings {
	s := settings{
		format: o.Format,
		budget: o.Budget,
		load:   o.LoadTool,
		read:   o.ReadTool,
		search: o.SearchTool,
	}
	if s.format != FormatCatalog && s.format != FormatProgressive {
		s.format = FormatPi
	}
	switch {
	case s.budget == 0:
		s.budget = DefaultBudget
	case s.budget < 0:
		s.budget = -1
	}
	if o.BudgetTokens > 0 && (s.budget < 0 || 4*o.BudgetTokens < s.budget) {
		s.budget = 4 * o.BudgetTokens
	}
	s.floor = o.DescriptionFloor
	if s.floor <= 0 {
		s.floor = DefaultDescriptionFloor
	}
	if s.load == "" {
		s.load = DefaultLoadTool
	}
	if s.read == "" {
		s.read = DefaultReadTool
	}
	switch s.search {
	case "":
		s.search = DefaultSearchTool
	case NoSearchTool:
		s.search = ""
	}
	return s
}

// Prompt renders the skills part of a system prompt: a listing of the
// listing entries, in the order given (the progressive format sorts by
// name), followed by the full bodies of the inline entries. The caller has
// already removed hidden skills. With no entries at all it returns "".
//
// When the listing does not fit in the budget, each skill gets a tier
// (Report.Tiers), never changing the order of the listing:
//
//  1. TierFull: name and whole description;
//  2. TierShortened: the description cut at a word boundary (or after a
//     sentence) plus "…", never below the floor: Options.DescriptionFloor
//     code points (DefaultDescriptionFloor), or the whole first sentence if
//     that is shorter;
//  3. TierName: the name only, after the block, in the format's compact
//     form: one "Also available (load by name): a, b, c" line (catalog,
//     progressive), or the names under the folder that holds their skill
//     folders, with the rule <folder>/<name>/SKILL.md stated once (pi);
//  4. TierGrouped: when even the names do not fit, the least preferred
//     skills are counted in groups (by category, else shared name prefix,
//     else folder) on one line that says how to find them (the search tool,
//     `loadout list`); TierOmitted: when not even that line fits, only the
//     count.
//
// The budget goes, in the order of Options.Priority (then by name): first a
// name for every skill, as many as fit; then a description at the floor, to
// as many as fit; then whole descriptions. The note about skills not named
// is counted in the budget and never dropped: if the budget cannot hold
// even the frame and that note (Report.MinBudget), nothing is named, the
// listing goes over the budget and Report.TooSmall says so. The same input
// always gives the same bytes.
//
// The budget covers the listing part: everything written before the inline
// part, frame text included (Pi's preamble; the catalog's heading, load
// sentence and Critical Rules; the progressive heading and intro). With no
// listing entries, the frame the inline part needs goes with it, unbudgeted.
func Prompt(listing, inline []Entry, opt Options) (string, Report) {
	s := opt.settings()
	rep := Report{Format: s.format, Budget: s.budget, BudgetTokens: max(opt.BudgetTokens, 0)}
	if len(listing) == 0 && len(inline) == 0 {
		return "", rep
	}
	lay := layoutFor(s.format)
	if lay.sorted() {
		var perm []int
		listing, perm = sortedPerm(listing)
		if d := opt.Domains; perm != nil && d != nil && len(d.Of) == len(perm) {
			// The domains index the listing as given: follow the sort.
			of := make([]int, len(perm))
			for i, j := range perm {
				of[i] = d.Of[j]
			}
			opt.Domains = &Domains{Keys: d.Keys, Words: d.Words, Of: of}
		}
		inline = sortedByName(inline)
	}
	// The preface takes its length from the listing's budget.
	pre := utf8.RuneCountInString(opt.Preface)
	if s.budget >= 0 {
		s.budget = max(s.budget-pre, 0)
	}
	c := frameCtx{s: s, hasInline: len(inline) > 0, inlineVirtual: anyVirtual(inline)}

	var b strings.Builder
	b.Grow(estimate(listing, inline, s.budget) + len(opt.Preface))
	b.WriteString(opt.Preface)
	if len(listing) > 0 {
		least := minFrame(lay, c, len(listing))
		if s.budget >= 0 {
			rep.MinBudget = pre + least
		}
		key := basisKey(s, opt, c)
		var tiers []Tier
		switch {
		case opt.Basis == nil:
			rep.Replan = "no basis"
		case opt.Basis.key != key:
			rep.Replan = "the options changed"
		default:
			k, why := keep(lay, listing, c, opt, opt.Basis)
			if why != "" {
				rep.Replan = why
				break
			}
			b.WriteString(opt.Basis.text)
			b.WriteString(k.tail)
			tiers, rep.Basis, rep.Changed, rep.Removed = k.tiers, opt.Basis, k.changed, k.removed
			rep.Groups = opt.Basis.groups
		}
		if tiers == nil {
			// A fresh plan leaves the reserve for the changes to come.
			pc := c
			if opt.Stable {
				pc.s.budget -= reserve(s.budget, least)
			}
			p := fit(lay, listing, pc, s.floor, opt.Priority, opt.Pinned, opt.Domains)
			rep.TooSmall = s.budget >= 0 && p.tooSmall
			start := b.Len()
			writeListing(&b, lay, listing, c, p)
			tiers = p.tiers
			rep.Groups = namedGroups(listing, p)
			if !p.tooSmall && (opt.Stable || opt.Basis != nil) && !opt.NoBasis {
				// A plan to keep: only callers that keep one pay for it.
				rep.Basis = newBasis(key, b.String()[start:], listing, tiers, p.virt)
				rep.Basis.groups = rep.Groups
			}
		}
		c.hasListing = true
		rep.Names, rep.Tiers = make([]string, len(listing)), tiers
		grouped := 0
		for _, t := range tiers {
			if t == TierGrouped || t == TierOmitted {
				grouped++
			}
		}
		rep.Omitted = make([]string, 0, grouped)
		for i, t := range tiers {
			name := listing[i].Name
			rep.Names[i] = name
			switch t {
			case TierFull:
				rep.Listed++
			case TierShortened:
				rep.Listed++
				rep.Shortened = append(rep.Shortened, name)
			case TierName:
				rep.Listed++
				rep.NameOnly = append(rep.NameOnly, name)
			case TierGrouped:
				rep.Grouped = append(rep.Grouped, name)
				rep.Omitted = append(rep.Omitted, name)
			default:
				rep.Omitted = append(rep.Omitted, name)
			}
		}
	}
	rep.Chars = utf8.RuneCountInString(b.String())
	rep.Tokens = (rep.Chars + 3) / 4
	rep.Total = rep.Chars
	if len(inline) > 0 {
		start := b.Len()
		lay.inline(&b, inline, c)
		rep.Inlined = len(inline)
		rep.Total += utf8.RuneCountInString(b.String()[start:])
	}
	return b.String(), rep
}

// Tier is the tier of the listing skill called name ("" if none): a scan
// of Names, for a single look-up; TierMap is quicker for many.
func (r *Report) Tier(name string) Tier {
	for i, n := range r.Names {
		if n == name {
			return r.Tiers[i]
		}
	}
	return ""
}

// TierMap is every listing skill's tier by name.
func (r *Report) TierMap() map[string]Tier {
	m := make(map[string]Tier, len(r.Names))
	for i, n := range r.Names {
		m[n] = r.Tiers[i]
	}
	return m
}

func sortedByName(es []Entry) []Entry {
	out, _ := sortedPerm(es)
	return out
}

// sortedPerm is es sorted by name, stable by position, and where each
// came from (nil when es was sorted already: es itself is returned).
func sortedPerm(es []Entry) ([]Entry, []int) {
	if slices.IsSortedFunc(es, byName) {
		return es, nil
	}
	// Sort indexes, not the large structs, stable by position.
	idx := make([]int, len(es))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := strings.Compare(es[a].Name, es[b].Name); c != 0 {
			return c
		}
		return a - b
	})
	out := make([]Entry, len(es))
	for i, j := range idx {
		out[i] = es[j]
	}
	return out, idx
}

func byName(a, b Entry) int { return strings.Compare(a.Name, b.Name) }

func anyVirtual(es []Entry) bool {
	for _, e := range es {
		if e.Virtual {
			return true
		}
	}
	return false
}

// estimate guesses the output size in bytes, to allocate once. Escaping
// makes text longer, so it allows a quarter more; a budget bounds the
// listing part (at two bytes per character, generous for most text).
func estimate(listing, inline []Entry, budget int) int {
	n := 1024
	for _, e := range listing {
		n += 100 + len(e.Name) + len(e.Description) + len(e.Location)
	}
	n += n / 4
	if budget >= 0 {
		n = min(n, 2*budget+256)
	}
	for _, e := range inline {
		n += 200 + len(e.Name) + len(e.Location) + len(e.Dir) + len(e.Body)
	}
	return n
}

// writeListing writes the listing as planned: the described entries, the
// names-only section, the groups and the note, in that order; each section
// lists its skills in listing order.
func writeListing(b *strings.Builder, lay layout, listing []Entry, c frameCtx, p plan) {
	fc := c
	fc.hasListing = true
	fc.listVirtual = p.virt
	b.WriteString(lay.head(fc))
	kept, grouped, omitted := 0, 0, 0
	var named []int
	for i, e := range listing {
		switch p.tiers[i] {
		case TierFull:
			lay.entry(b, e, lay.prepDesc(e.Description), false)
			kept++
		case TierShortened:
			lay.entry(b, e, cut(lay.prepDesc(e.Description), p.caps[i]), true)
			kept++
		case TierName:
			named = append(named, i)
		case TierGrouped:
			grouped++ // counts: a list of the 50,000 grouped was 2 MB
		default:
			omitted++
		}
	}
	b.WriteString(lay.closeBlock(kept))
	pre, post := lay.affixes()
	if len(named) > 0 {
		b.WriteString(pre)
		writeNames(b, lay, fc, listing, named)
		b.WriteString(post)
	}
	if grouped > 0 {
		b.WriteString(pre)
		b.WriteString(groupSection(c.s, p.groups, p.tiers))
		b.WriteString(post)
	}
	if omitted > 0 {
		b.WriteString(pre)
		b.WriteString(omittedNote(c.s, omitted))
		b.WriteString(post)
	}
	b.WriteString(lay.after(fc))
}

// writeNames writes the section of skills named without a description:
// the format's header, then the names under the folders that hold them
// (folders in order of first appearance, names in listing order).
func writeNames(b *strings.Builder, lay layout, fc frameCtx, listing []Entry, named []int) {
	b.WriteString(lay.namesHeader(fc))
	type item struct {
		text string
		loc  bool
	}
	var folders []string
	byFolder := map[string][]item{}
	for _, i := range named {
		f, n, loc := compactName(lay, listing[i])
		if _, ok := byFolder[f]; !ok {
			folders = append(folders, f)
		}
		byFolder[f] = append(byFolder[f], item{n, loc})
	}
	for _, f := range folders {
		b.WriteString(lay.folderPrefix(f))
		for j, it := range byFolder[f] {
			if j > 0 {
				if it.loc {
					b.WriteString(", ")
				} else {
					b.WriteByte(' ')
				}
			}
			b.WriteString(it.text)
		}
	}
}

// compactName is how e is named in the names-only section, and under which
// folder. Names are separated by a space (one character, and no token of
// its own); a name with a space, comma or quote in it (not a valid name,
// but lenient loading keeps it) is quoted. A name shown with its location
// (loc: not under a folder) has spaces in it, so those are separated by
// ", ".
func compactName(lay layout, e Entry) (folder, text string, loc bool) {
	folder, text = lay.compact(e)
	if text != e.Name {
		return folder, text, true
	}
	if strings.ContainsAny(text, " ,\"\t\r\n") {
		text = strconv.Quote(text)
	}
	return folder, text, false
}

// cut keeps the first L code points of s and drops trailing white space;
// the caller appends the ellipsis. Cutting on code points keeps UTF-8 valid; a
// combining mark may lose its base character, which is harmless here.
func cut(s string, L int) string {
	i, n := 0, 0
	for i < len(s) && n < L {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
	}
	return strings.TrimRight(s[:i], " \t\r\n")
}

// omittedNote is the line that says how many skills the listing leaves out.
func omittedNote(s settings, n int) string {
	what := "skills are"
	if n == 1 {
		what = "skill is"
	}
	var b strings.Builder
	b.Grow(160 + len(s.search))
	b.WriteString(strconv.Itoa(n))
	b.WriteString(" more ")
	b.WriteString(what)
	b.WriteString(" not listed here. ")
	if s.search != "" {
		b.WriteString("Find them with the `")
		b.WriteString(s.search)
		b.WriteString("` tool or the `loadout list` command.")
	} else {
		b.WriteString("Find them with the `loadout list` command.")
	}
	return b.String()
}

// groupsNote starts the line that counts the skills not named, by domain.
func groupsNote(s settings, n int) string {
	what := "skills are"
	if n == 1 {
		what = "skill is"
	}
	if s.search == "" {
		return strconv.Itoa(n) + " more " + what + " not named here; list them with `loadout list`. By domain: "
	}
	return strconv.Itoa(n) + " more " + what + " not named here: search for them with the `" + s.search +
		"` tool, by what the task needs. By domain, with words the search matches: "
}

// EffectiveBudget is the listing budget Prompt applies for a configured
// one: DefaultBudget for 0, -1 (no limit) for any negative value, else the
// budget itself. It is never 0, which in a config means "the default".
func EffectiveBudget(b int) int {
	switch {
	case b == 0:
		return DefaultBudget
	case b < 0:
		return -1
	}
	return b
}
