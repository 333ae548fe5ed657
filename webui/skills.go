package webui

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

// The skills page (the UI's home): every skill the caller may see, with
// a server-side filter, sort and pages, each state a URL. skills.js
// fetches the same URL with ?partial=1 as the filter is typed, and the
// server sends only the results (skills_results).

// Bounds of the skills page.
const (
	// SkillsPageSize is how many skills one page of the list shows.
	SkillsPageSize = 100
	// MaxFacetOptions is how many tags and categories the filter offers
	// as suggestions (the most common first); any other can be typed.
	MaxFacetOptions = 200
	// MaxSourceOptions is how many sources the source filter offers (the
	// most skills first); a link can name any other.
	MaxSourceOptions = 50
	// maxRowCaches is how many loadouts' rows are kept (the global one
	// and a few agents' for agent tokens); a loadout is immutable, so its
	// rows are valid as long as it is current.
	maxRowCaches = 8
	// UsageTTL is how long the usage columns (loads in the last 7 days,
	// last used) are reused before the receipts are asked again.
	UsageTTL = 10 * time.Second
	// UsageLastDays is how far back "last used" looks in the daily counts;
	// older use shows as "not in 90 days".
	UsageLastDays = 90
	// usageRowLimit bounds the rows one usage query reads.
	usageRowLimit = 100_000
	// recentReceipts is how many recent receipts refine "last used" from
	// a day to the time of the last load.
	recentReceipts = 1000
)

// skillRow is one selected skill of a loadout, as the list shows it.
type skillRow struct {
	Name, Description string
	// Summary is the description on one line, cut to about what a row
	// shows (summaryRunes): the full text goes in the row's title only.
	Summary string
	Origin  skill.Origin
	Kind    string // folder, store, plugin, git, index
	Source  string // the folder path, "store", or the plugin id and trust (the badge's title)
	// SourceKey names the source the skill comes from, for ?source=
	// (sourceKey); SourceLabel is its short badge ("folder: examples").
	SourceKey, SourceLabel string
	Tags                   []string
	Category, Version      string
	Files                  int
	State                  string // listed, inline, hidden or blocked
	BlockReason            string // why, when blocked
	Diags                  int
	// Shadowed is set for a skill another source's skill of the same name
	// wins over; Winner says where the winner comes from.
	Shadowed bool
	Winner   string
	// Loads7 and LastUsed come from the receipts (admins only).
	Loads7   int64
	LastUsed time.Time
	hay      string // lowercased name and description, for the text filter
	order    int    // position in the loadout, for a stable sort
}

// rowSet is the rows of one loadout, with the filter's suggestions.
type rowSet struct {
	l *catalog.Loadout
	// report is the count of problems the rows were made with
	// (catalog.Report): a new one builds the rows again.
	report     *catalog.Report
	rows       []skillRow
	tags, cats []string
	// sources are the filter's source choices: the kinds with more than
	// one source, then each source, most skills first.
	sources []sourceOption
	// pending is set when the safety checks had not ended: the problem
	// counts leave their findings out (findingsFor).
	pending bool
	// hayOnce fills the rows' hay on the first text filter, not when the
	// rows are built: lowering 10,000 descriptions took a fifth of a build,
	// which the first page after every catalog change waited for.
	hayOnce sync.Once
}

// haystacks fills each row's hay (once per set) and returns the rows.
func (s *rowSet) haystacks() []skillRow {
	s.hayOnce.Do(func() {
		for i := range s.rows {
			r := &s.rows[i]
			r.hay = strings.ToLower(r.Name + "\x00" + r.Description)
		}
	})
	return s.rows
}

// sourceOption is one choice of the list's source filter.
type sourceOption struct {
	Value, Label string
	N            int // skills from it
}

// usageSnap is the usage columns, computed at most once per UsageTTL.
type usageSnap struct {
	at     time.Time
	loads  map[string]int64
	last   map[string]time.Time
	err    string
	filled bool
}

type skillsCache struct {
	mu   sync.Mutex // guards sets and scan
	sets []*rowSet
	// scan is the safety run this UI started, while it runs (findingsFor).
	scan *scanRun
	// usageMu guards usage, and is held while it is refreshed, so one
	// request asks the receipts and the others wait for its answer.
	usageMu sync.Mutex
	usage   usageSnap
}

// cache is this UI's skills-list cache (ui.skills): per UI, so two UIs
// in one process share nothing, and it goes when the UI goes.
func (u *ui) cache() *skillsCache { return &u.skills }

// sourceText is how the list and the skill page name where a skill comes
// from.
func sourceText(o skill.Origin) string {
	switch o.Kind {
	case "store":
		if o.Version > 0 {
			return fmt.Sprintf("store v%d", o.Version)
		}
		return "store"
	case "plugin":
		s := "plugin " + o.Plugin
		if o.Trust != "" {
			s += " · " + o.Trust
		}
		return s
	case "git", "index", "oci":
		return o.Kind + " " + o.RemoteText()
	}
	return o.Root
}

// sourceKey names the source a skill comes from, for the list's source
// filter: the kind and what tells two sources of that kind apart (the
// folder, the plugin, the remote's URL and ref). The store is one source.
func sourceKey(o skill.Origin) string {
	switch o.Kind {
	case "store":
		return "store"
	case "plugin":
		return "plugin:" + o.Plugin
	case "git", "index", "oci":
		if o.Ref != "" {
			return o.Kind + ":" + o.Root + "@" + o.Ref
		}
		return o.Kind + ":" + o.Root
	}
	return cmp.Or(o.Kind, "folder") + ":" + o.Root
}

// sourceKinds are the kinds ?source= takes as well as a sourceKey.
var sourceKinds = []string{"folder", "store", "plugin", "git", "index", "oci"}

// sourceBadge is a source's short badge: its kind and the last part of its
// folder or URL ("folder: examples", "git: skills"); long is 1 for a
// longer one (two parts, and the ref), used where short ones collide.
func sourceBadge(o skill.Origin, long int) string {
	tail := func(p string, n int) string {
		p = strings.TrimSuffix(strings.TrimRight(strings.ReplaceAll(p, "\\", "/"), "/"), ".git")
		parts := strings.Split(p, "/")
		return strings.Join(parts[max(0, len(parts)-n):], "/")
	}
	switch o.Kind {
	case "store":
		return "store"
	case "plugin":
		return "plugin: " + o.Plugin
	case "git", "index", "oci":
		s := o.Kind + ": " + tail(o.Root, 1+long)
		if long > 0 && o.Ref != "" {
			s += "@" + o.Ref
		}
		return s
	}
	return cmp.Or(o.Kind, "folder") + ": " + tail(o.Root, 1+long)
}

// summaryRunes is about what one row shows of a description at 1280
// pixels; the rest is clipped by the stylesheet anyway, and sending it
// twice (text and title) would double the page.
const summaryRunes = 120

// summary is a description on one line, cut at a word near summaryRunes.
func summary(desc string) string {
	s := strings.Join(strings.Fields(desc), " ")
	if utf8.RuneCountInString(s) <= summaryRunes {
		return s
	}
	cut := 0
	for i := range s {
		if cut >= summaryRunes {
			s = s[:i]
			break
		}
		cut++
	}
	if sp := strings.LastIndexByte(s, ' '); sp > len(s)*2/3 {
		s = s[:sp]
	}
	return strings.TrimRight(s, " ,;:.") + "…"
}

// scanRun is a report of problems being made; done closes when it ends,
// rep set.
type scanRun struct {
	done chan struct{}
	rep  *catalog.Report
}

// safetyWait is how long the list waits for the report of problems (the
// safety checks) before it shows the rows without the checks' findings: a
// reload's few changed skills are checked within it; the first check of
// 10,000 skills (seconds) is not.
const safetyWait = 100 * time.Millisecond

// listReport returns the report of problems of the current catalog, or,
// when it is not made within safetyWait, one of the catalog's own
// diagnostics without the safety checks' findings, and pending: the
// report is then made in the background (waiting behind the server's if
// that one is under way), and the list says its counts leave the findings
// out until it is.
func (u *ui) listReport(r *http.Request) (rep *catalog.Report, pending bool) {
	c := u.cache()
	c.mu.Lock()
	run := c.scan
	if run == nil {
		run = &scanRun{done: make(chan struct{})}
		c.scan = run
		go func() {
			// Not the request's context: the run outlives the request that
			// started it, and serves the next.
			run.rep = u.svc.Report(context.Background())
			c.mu.Lock()
			c.scan = nil
			c.mu.Unlock()
			close(run.done)
		}()
	}
	c.mu.Unlock()
	t := time.NewTimer(safetyWait)
	defer t.Stop()
	select {
	case <-run.done:
		// Its counts, even when the report was not kept (a skill it could
		// not read is read again by the next): they are all there are.
		return run.rep, false
	case <-t.C:
	case <-r.Context().Done():
	}
	return catalog.NewReport(u.svc.Catalog().Diagnostics()), true
}

// rowsFor returns the rows of l, built once per loadout and report of
// problems.
func (u *ui) rowsFor(r *http.Request, l *catalog.Loadout) *rowSet {
	c := u.cache()
	rep, ready := u.svc.ReportReady()
	c.mu.Lock()
	for _, s := range c.sets {
		// Rows without the safety findings serve while the report is made;
		// once it is, they are built again, with them.
		if s.l == l && (ready && !s.pending && s.report == rep || !ready && s.pending && c.scan != nil) {
			c.mu.Unlock()
			return s
		}
	}
	c.mu.Unlock()
	pending := false
	if !ready {
		rep, pending = u.listReport(r)
	}
	s := buildRows(l, rep.ForLoadout(l))
	s.report, s.pending = rep, pending
	c.mu.Lock()
	// Drop the sets of loadouts of the same agent (replaced by a reload)
	// and keep at most maxRowCaches.
	keep := c.sets[:0]
	for _, o := range c.sets {
		if o.l.Spec.AgentID != l.Spec.AgentID {
			keep = append(keep, o)
		}
	}
	c.sets = append(keep, s)
	if len(c.sets) > maxRowCaches {
		c.sets = c.sets[len(c.sets)-maxRowCaches:]
	}
	c.mu.Unlock()
	return s
}

func buildRows(l *catalog.Loadout, rep *catalog.Report) *rowSet {
	entries := l.Entries()
	s := &rowSet{l: l, rows: make([]skillRow, 0, len(entries))}
	tagN, catN := map[string]int{}, map[string]int{}
	srcs, srcOrigin := map[string]*sourceOption{}, map[string]skill.Origin{}
	type srcID struct{ kind, root, plugin, ref string }
	keys := map[srcID]string{}
	for i, e := range entries {
		sk := e.Skill
		o := sk.OriginValue()
		r := skillRow{Name: sk.Name, Description: sk.Description, Origin: o, Kind: o.Kind, Source: sourceText(o),
			Files: len(sk.Files), Diags: rep.Skill(sk.Name).Problems(), order: i}
		// One key string per source, not per skill.
		id := srcID{o.Kind, o.Root, o.Plugin, o.Ref}
		r.SourceKey = keys[id]
		if r.SourceKey == "" {
			r.SourceKey = sourceKey(o)
			keys[id] = r.SourceKey
		}
		if sk.Meta != nil {
			r.Tags, r.Category, r.Version = sk.Meta.Tags, sk.Meta.Category, sk.Meta.Version
		}
		switch {
		case e.Inline:
			r.State = "inline"
		case sk.Hidden() || !e.Listed:
			r.State = "hidden"
		default:
			r.State = "listed"
		}
		if w, ok := l.Lookup(sk.Name); ok && w != e {
			r.Shadowed = true
			r.Winner = sourceText(w.Skill.OriginValue())
			r.Diags = 0 // the name's diagnostics are the winner's
		}
		for _, t := range r.Tags {
			tagN[t]++
		}
		if r.Category != "" {
			catN[r.Category]++
		}
		if _, ok := srcs[r.SourceKey]; !ok {
			srcs[r.SourceKey] = &sourceOption{Value: r.SourceKey}
			srcOrigin[r.SourceKey] = o
		}
		srcs[r.SourceKey].N++
		s.rows = append(s.rows, r)
	}
	// The skills a block leaves out are marked, not hidden: an admin
	// finds them here, and their page says why and how to unblock.
	for i, b := range l.Blocked() {
		sk := b.Skill
		o := sk.OriginValue()
		r := skillRow{Name: sk.Name, Description: sk.Description, Origin: o, Kind: o.Kind, Source: sourceText(o),
			Files: len(sk.Files), State: "blocked", BlockReason: b.Block.Reason, order: len(entries) + i}
		r.SourceKey = sourceKey(o)
		if sk.Meta != nil {
			r.Tags, r.Category, r.Version = sk.Meta.Tags, sk.Meta.Category, sk.Meta.Version
		}
		if _, ok := srcs[r.SourceKey]; !ok {
			srcs[r.SourceKey] = &sourceOption{Value: r.SourceKey}
			srcOrigin[r.SourceKey] = o
		}
		srcs[r.SourceKey].N++
		s.rows = append(s.rows, r)
	}
	s.sources = sourceOptions(srcs, srcOrigin)
	labels := map[string]string{}
	for _, o := range s.sources {
		labels[o.Value] = o.Label
	}
	for i := range s.rows {
		s.rows[i].SourceLabel = labels[s.rows[i].SourceKey]
	}
	// By name, then source order (a shadowed skill after its winner): the
	// default sort, done once (a folder's skills mostly come sorted).
	byName := func(a, b skillRow) int { return strings.Compare(a.Name, b.Name) }
	if !slices.IsSortedFunc(s.rows, byName) {
		slices.SortStableFunc(s.rows, byName)
	}
	s.tags, s.cats = facet(tagN), facet(catN)
	return s
}

// sourceOptions are the source filter's choices: the sources, most skills
// first, each with a short label, made longer where two would read alike,
// after one "every KIND" choice per kind that has several.
func sourceOptions(srcs map[string]*sourceOption, origin map[string]skill.Origin) []sourceOption {
	list := make([]sourceOption, 0, len(srcs))
	for _, o := range srcs {
		list = append(list, *o)
	}
	// Short labels first; those that collide get two parts of the path
	// and the ref, and any still alike the whole source text.
	for long := 0; long <= 2; long++ {
		n := map[string]int{}
		for _, o := range list {
			n[o.Label]++
		}
		for i := range list {
			if long > 0 && n[list[i].Label] < 2 {
				continue
			}
			if long == 2 {
				list[i].Label = sourceText(origin[list[i].Value])
			} else {
				list[i].Label = sourceBadge(origin[list[i].Value], long)
			}
		}
	}
	slices.SortFunc(list, func(a, b sourceOption) int {
		return cmp.Or(cmp.Compare(b.N, a.N), strings.Compare(a.Label, b.Label))
	})
	kinds := map[string]int{}
	for _, o := range list {
		kinds[origin[o.Value].Kind]++
	}
	var out []sourceOption
	for _, k := range sourceKinds {
		if kinds[k] > 1 {
			n := 0
			for _, o := range list {
				if origin[o.Value].Kind == k {
					n += o.N
				}
			}
			out = append(out, sourceOption{Value: k, Label: "every " + k + " source", N: n})
		}
	}
	// Bounded, as every option is sent with every page: the kind choices
	// and the largest sources (a link can name any other).
	return append(out, list[:min(len(list), MaxSourceOptions)]...)
}

// facet is the most common values first, at most MaxFacetOptions.
func facet(n map[string]int) []string {
	out := make([]string, 0, len(n))
	for k := range n {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b string) int {
		if c := cmp.Compare(n[b], n[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	if len(out) > MaxFacetOptions {
		out = out[:MaxFacetOptions]
	}
	return out
}

// usageFor returns the usage columns, asking the receipts at most once
// per UsageTTL. Only admins may read receipts; others get none.
func (u *ui) usageFor(r *http.Request, p service.Principal) usageSnap {
	if !canRead(p) {
		return usageSnap{}
	}
	c := u.cache()
	c.usageMu.Lock()
	defer c.usageMu.Unlock()
	now := time.Now()
	if c.usage.filled && now.Sub(c.usage.at) < UsageTTL {
		return c.usage
	}
	s := usageSnap{at: now, filled: true, loads: map[string]int64{}, last: map[string]time.Time{}}
	ctx := r.Context()
	week, err := u.svc.Usage(ctx, p, store.UsageQuery{Since: now.AddDate(0, 0, -6), Limit: usageRowLimit})
	if err != nil {
		s.err = service.AsError(err).Message
	}
	for _, x := range week {
		if x.Action == "load" && x.Outcome == catalog.StatusOK {
			s.loads[x.Skill] += x.Count
		}
	}
	days, err := u.svc.Usage(ctx, p, store.UsageQuery{Since: now.AddDate(0, 0, -UsageLastDays), Daily: true, Limit: usageRowLimit})
	if err != nil && s.err == "" {
		s.err = service.AsError(err).Message
	}
	for _, x := range days { // newest day first
		if _, ok := s.last[x.Skill]; !ok && x.Outcome == catalog.StatusOK {
			s.last[x.Skill] = x.Day
		}
	}
	recent, err := u.svc.Receipts(ctx, p, store.ReceiptQuery{Limit: recentReceipts})
	if err != nil && s.err == "" {
		s.err = service.AsError(err).Message
	}
	for _, x := range recent { // newest first
		if x.Outcome != catalog.StatusOK {
			continue
		}
		if t, ok := s.last[x.Skill]; !ok || x.Time.After(t) {
			s.last[x.Skill] = x.Time
		}
	}
	c.usage = s
	return s
}

// skillsQuery is the list's state, from the URL.
type skillsQuery struct {
	Q, Tag, Category, Source string
	Problems, Shadowed       bool
	Sort                     string // name, usage, last, files
	Desc                     bool
	Page                     int
}

var sortKeys = []struct{ ID, Label string }{{"name", "Name"}, {"usage", "Loads (7 days)"}, {"last", "Last used"}, {"files", "Files"}}

func parseSkillsQuery(v url.Values) skillsQuery {
	q := skillsQuery{Q: strings.TrimSpace(v.Get("q")), Tag: strings.TrimSpace(v.Get("tag")), Category: strings.TrimSpace(v.Get("category")),
		Source: v.Get("source"), Problems: v.Get("problems") == "1", Shadowed: v.Get("shadowed") == "1", Sort: v.Get("sort")}
	// A kind, or one source (sourceKey: a kind, ":" and what tells it
	// apart); anything else is no filter.
	if k, _, _ := strings.Cut(q.Source, ":"); !slices.Contains(sourceKinds, k) {
		q.Source = ""
	}
	switch q.Sort {
	case "usage", "last", "files":
		q.Desc = v.Get("order") != "asc"
	default:
		q.Sort = "name"
		q.Desc = v.Get("order") == "desc"
	}
	q.Page, _ = strconv.Atoi(v.Get("page"))
	q.Page = max(q.Page, 1)
	return q
}

// values is the query as URL parameters, leaving out the defaults.
func (q skillsQuery) values() url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("q", q.Q)
	set("tag", q.Tag)
	set("category", q.Category)
	set("source", q.Source)
	if q.Problems {
		v.Set("problems", "1")
	}
	if q.Shadowed {
		v.Set("shadowed", "1")
	}
	if q.Sort != "name" {
		v.Set("sort", q.Sort)
		if !q.Desc {
			v.Set("order", "asc")
		}
	} else if q.Desc {
		v.Set("order", "desc")
	}
	if q.Page > 1 {
		v.Set("page", strconv.Itoa(q.Page))
	}
	return v
}

// SortParam and OrderParam are the sort's URL parameters ("" for the
// default), for the filter form to keep.
func (q skillsQuery) SortParam() string  { return q.values().Get("sort") }
func (q skillsQuery) OrderParam() string { return q.values().Get("order") }

func (q skillsQuery) url() string {
	if e := q.values().Encode(); e != "" {
		return Prefix + "?" + e
	}
	return Prefix
}

// SortURL is the list sorted by key: the other direction when it is
// already sorted by it. Page 1.
func (q skillsQuery) SortURL(key string) string {
	n := q
	n.Page = 1
	if q.Sort == key {
		n.Desc = !q.Desc
	} else {
		n.Sort = key
		n.Desc = key != "name"
	}
	return n.url()
}

// AriaSort is the aria-sort value of a column header.
func (q skillsQuery) AriaSort(key string) string {
	if q.Sort != key {
		return "none"
	}
	if q.Desc {
		return "descending"
	}
	return "ascending"
}

func (q skillsQuery) PageURL(n int) string {
	c := q
	c.Page = n
	return c.url()
}

// skillsData is what skills.html renders.
type skillsData struct {
	Query          skillsQuery
	Rows           []skillRow
	Total, Matched int
	Page, Pages    int
	From, To       int
	Tags, Cats     []string
	Sources        []sourceOption
	Sorts          []struct{ ID, Label string }
	Usage          bool // the caller may see usage
	UsageErr       string
	Cols           columns
	// Pending: the safety checks are still running, and the problem
	// counts leave their findings out.
	Pending bool
}

// columns says which of the optional columns the page shows: each only
// when a row of the page has a value for it (or the page is sorted by it),
// so a catalog without tags, versions or use spends no width on them.
type columns struct {
	Tags, Version, Loads, Last bool
}

// columnsOf is the optional columns rows fill; usage only for a caller
// who may see it.
func columnsOf(rows []skillRow, q skillsQuery, usage bool) columns {
	c := columns{Loads: usage && q.Sort == "usage", Last: usage && q.Sort == "last"}
	for i := range rows {
		r := &rows[i]
		c.Tags = c.Tags || len(r.Tags) > 0 || r.Category != ""
		c.Version = c.Version || r.Version != ""
		c.Loads = c.Loads || usage && r.Loads7 > 0
		c.Last = c.Last || usage && !r.LastUsed.IsZero()
	}
	return c
}

func (d *skillsData) PrevURL() string { return d.Query.PageURL(d.Page - 1) }
func (d *skillsData) NextURL() string { return d.Query.PageURL(d.Page + 1) }

// match is a row that passes the filter, with its sort keys.
type match struct {
	row   *skillRow
	loads int64
	last  int64 // Unix microseconds, 0 for never
}

// filterRows applies the query to the rows: the matching rows, sorted.
// It sorts pointers with their keys beside them, so 10,000 rows sort
// without copying a row or looking a map up per comparison.
func filterRows(all []skillRow, q skillsQuery, us usageSnap) []match {
	needle := strings.ToLower(q.Q)
	out := make([]match, 0, len(all))
	for i := range all {
		r := &all[i]
		if needle != "" && !strings.Contains(r.hay, needle) {
			continue
		}
		if q.Source != "" && r.SourceKey != q.Source && r.Kind != q.Source {
			continue
		}
		if q.Category != "" && !strings.EqualFold(r.Category, q.Category) {
			continue
		}
		if q.Tag != "" && !slices.ContainsFunc(r.Tags, func(t string) bool { return strings.EqualFold(t, q.Tag) }) {
			continue
		}
		if q.Problems && r.Diags == 0 {
			continue
		}
		if q.Shadowed && !r.Shadowed {
			continue
		}
		m := match{row: r}
		if !r.Shadowed && (q.Sort == "usage" || q.Sort == "last") {
			m.loads = us.loads[r.Name]
			if t, ok := us.last[r.Name]; ok {
				m.last = t.UnixMicro()
			}
		}
		out = append(out, m)
	}
	var by func(a, b match) int
	switch q.Sort {
	case "usage":
		by = func(a, b match) int { return cmp.Compare(a.loads, b.loads) }
	case "last":
		by = func(a, b match) int { return cmp.Compare(a.last, b.last) }
	case "files":
		by = func(a, b match) int { return cmp.Compare(a.row.Files, b.row.Files) }
	}
	sign := 1
	if q.Desc {
		sign = -1
	}
	if by == nil && !q.Desc {
		return out // the rows are kept sorted by name (buildRows)
	}
	slices.SortStableFunc(out, func(a, b match) int {
		if by != nil {
			if c := by(a, b); c != 0 {
				return sign * c
			}
		}
		// Ties (and the name sort) go by name, then by source order;
		// only the name sort reverses them.
		c := strings.Compare(a.row.Name, b.row.Name)
		if c == 0 {
			c = cmp.Compare(a.row.order, b.row.order)
		}
		if by == nil {
			return sign * c
		}
		return c
	})
	return out
}

// pageRows copies one page of matches, with their usage.
func pageRows(ms []match, us usageSnap) []skillRow {
	rows := make([]skillRow, len(ms))
	for i, m := range ms {
		rows[i] = *m.row
		rows[i].Summary = summary(m.row.Description)
		if !m.row.Shadowed {
			rows[i].Loads7, rows[i].LastUsed = us.loads[m.row.Name], us.last[m.row.Name]
		}
	}
	return rows
}

func (u *ui) skillsPage(w http.ResponseWriter, r *http.Request) {
	l, err := u.visible(r)
	if err != nil {
		u.failErr(w, r, err)
		return
	}
	p := principal(r)
	set := u.rowsFor(r, l)
	q := parseSkillsQuery(r.URL.Query())
	us := u.usageFor(r, p)
	all := set.rows
	if q.Q != "" {
		all = set.haystacks()
	}
	rows := filterRows(all, q, us)
	d := &skillsData{Query: q, Total: len(set.rows), Matched: len(rows), Tags: set.tags, Cats: set.cats, Sources: set.sources, Usage: canRead(p), UsageErr: us.err}
	d.Sorts, d.Pending = sortKeys, set.pending
	if !d.Usage {
		d.Sorts = sortKeys[:1:1]
		d.Sorts = append(d.Sorts, sortKeys[3])
	}
	if q.Source != "" && !slices.ContainsFunc(d.Sources, func(o sourceOption) bool { return o.Value == q.Source }) {
		// A source the catalog no longer has (an old link): still shown as
		// the filter in force, matching nothing.
		d.Sources = append(slices.Clip(d.Sources), sourceOption{Value: q.Source, Label: q.Source})
	}
	d.Pages = max(1, (len(rows)+SkillsPageSize-1)/SkillsPageSize)
	d.Page = min(q.Page, d.Pages)
	d.Query.Page = d.Page
	lo := (d.Page - 1) * SkillsPageSize
	hi := min(lo+SkillsPageSize, len(rows))
	d.Rows = pageRows(rows[lo:hi], us)
	d.Cols = columnsOf(d.Rows, q, d.Usage)
	d.From, d.To = lo+1, hi
	if hi == 0 {
		d.From = 0
	}
	if r.URL.Query().Get("partial") == "1" {
		u.partial(w, r, "skills.html", "skills_results", d)
		return
	}
	u.render(w, r, "skills.html", page{Title: "Skills", Active: "skills", Data: d})
}

// partial writes one named template of a page alone (no layout), for a
// script that swaps it into the page.
func (u *ui) partial(w http.ResponseWriter, r *http.Request, pageName, tmpl string, data any) {
	var b bytes.Buffer
	if err := u.pages[pageName].ExecuteTemplate(&b, tmpl, page{P: principal(r), CSRF: csrfToken(r), Data: data}); err != nil {
		u.log.Error("ui: rendering a fragment failed", "template", tmpl, "err", err)
		http.Error(w, "This part of the page could not be rendered; the server's log says why.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}
