package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/httpbody"
	"github.com/loadout/loadout/internal/inert"
	"github.com/loadout/loadout/portable"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func principal(r *http.Request) service.Principal { return service.PrincipalFrom(r.Context()) }

// global returns the global catalog to a caller with a role over the
// route's skill {name} (a viewer of it at least), or over some skill on a
// route without one (the route's scope decided which skills: see
// requireScope). It checks again what requireScope checked, so a handler
// never reads the catalog for a caller the route would refuse, and a
// refusal says the same whether or not the skill exists.
func (a *api) global(w http.ResponseWriter, r *http.Request) (*catalog.Loadout, bool) {
	p := principal(r)
	var err error
	if name := r.PathValue("name"); name != "" {
		err = a.svc.RequireRole(r.Context(), p, service.RoleViewer, name)
	} else if !p.HoldsAnywhere(service.RoleViewer) {
		err = service.NeedsRole(p, service.RoleViewer, "")
	}
	if err != nil {
		a.fail(w, r, err)
		return nil, false
	}
	return a.svc.Catalog().Global(), true
}

// skillSummary is one row of GET /v1/skills.
type skillSummary struct {
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Source      skill.Origin `json:"source"`
	Version     int          `json:"version,omitempty"`
	Digest      string       `json:"digest,omitempty"`
	Mode        string       `json:"mode"`
	Shadowed    bool         `json:"shadowed,omitempty"`
	Files       int          `json:"files"`
	Enabled     bool         `json:"enabled"`
	ReadOnly    bool         `json:"readOnly"`
	// sk is the catalog's skill, whose digest (read from its files) is
	// filled in when a page shows the row.
	sk *skill.Skill
}

func modeOf(e *catalog.Entry) string {
	switch {
	case e.Inline:
		return "inline"
	case e.Skill.Hidden():
		return "hidden"
	case !e.Listed:
		return "hidden"
	}
	return "listed"
}

// listSkills: one page of the skill list. The list is every skill of the
// global catalog (shadowed ones marked, right after the one that wins)
// and the stored skills that are disabled (so not in the catalog), in
// name order. A page holds up to limit rows (DefaultListLimit, at most
// MaxListLimit) and never splits a name: the rows of one name (the
// winner, the skills it shadows, a disabled stored namesake) are on one
// page, even when they alone are over limit. nextPage, present when
// hasMore is true, is an opaque cursor for the page after it. It names
// the last name of this page, so it stays valid whatever changes in
// between: the next page starts at the first name after it, and a name
// present all along is listed exactly once.
//
// The list is kept encoded row by row (listCache): reading every stored
// record (to find the disabled ones) and encoding thousands of summaries
// took about 85 ms at 4,000 skills. It is used while the catalog
// generation and this API's own writes are unchanged and for at most
// MaxListAge, which bounds how late a change the catalog does not see (a
// stored skill disabled, or edited while disabled, by the web UI or
// another instance) shows here; past it, one request reads the list
// again while the others are answered from the old one, so a change of
// that kind shows within MaxListAge and one read. A read that comes out
// the same keeps the old list. Pages are kept too, each with its ETag and
// gzip form (at most MaxListPageBytes in all).
func (a *api) listSkills(w http.ResponseWriter, r *http.Request) {
	l, ok := a.global(w, r)
	if !ok {
		return
	}
	limit, after, ok := listParams(w, r)
	if !ok {
		return
	}
	ls, err := a.listing(r, l)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	b, err := ls.page(after, limit)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	b.Serve(w, r)
}

// listing is the skill list kept (listCache), read again when it is not
// for the current catalog and writes or is older than MaxListAge.
func (a *api) listing(r *http.Request, l *catalog.Loadout) (*listing, error) {
	k := listKey{l: l, gen: a.svc.Generation(), writes: a.writes.Load()}
	ls, stale := a.lists.get(k)
	if stale != nil && !a.lists.mu.TryLock() {
		// Only older than MaxListAge, and another request is reading it
		// again: answer from it rather than wait.
		return stale, nil
	} else if ls == nil {
		if stale == nil {
			a.lists.mu.Lock() // one listing at a time builds; the others wait for it
		}
		defer a.lists.mu.Unlock()
		if ls, stale = a.lists.get(k); ls == nil {
			var err error
			if ls, err = a.relist(r, l, stale); err != nil {
				return nil, err
			}
			a.lists.put(k, ls)
		}
	}
	return ls, nil
}

// The page size of GET /v1/skills: limit's default and its largest value.
// A larger limit is served as MaxListLimit (the answer's "limit" says so,
// and nextPage goes on). A page is bound by its bytes (about 600 a row at
// 10,000 skills): against the cached load, spread and hot, a page of 1,000
// ran at 0.36x and 0.15x, one of 200 at 0.73x and 0.44x, one of 100 (61 KB)
// at 0.91x and 0.55x (bench/routes.sh, docs/http-api.md).
const (
	DefaultListLimit = 100
	MaxListLimit     = 100
)

// MaxListPageBytes bounds the encoded pages GET /v1/skills keeps (their
// bytes counted twice, for the gzip form each may add); past it the page
// cache starts afresh. The list itself is kept once besides, row by row.
const MaxListPageBytes = 16 << 20

// listCursorPrefix starts every nextPage cursor (before base64): a cursor
// format of later versions can be told apart.
const listCursorPrefix = "n1:"

// maxCursorLen bounds a page cursor: a skill name (skill.MaxNameLen runes
// of up to 4 bytes) in base64, with room to spare.
const maxCursorLen = 512

func listCursor(name string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(listCursorPrefix + name))
}

// listParams reads limit and page: 400 naming the parameter when either
// is not one this server could have made or accepts.
func listParams(w http.ResponseWriter, r *http.Request) (limit int, after string, ok bool) {
	limit = DefaultListLimit
	if r.URL.RawQuery == "" {
		return limit, "", true
	}
	q := r.URL.Query()
	if s := q.Get("limit"); s != "" {
		n, ok := pageLimit(s, MaxListLimit)
		if !ok {
			writeErr(w, badRequest("limit", "limit=%q: give a number of skills from 1 (default %d; a larger limit than %d is served as %d, the answer's limit)", s, DefaultListLimit, MaxListLimit, MaxListLimit))
			return 0, "", false
		}
		limit = n
	}
	if s, present := q["page"]; present {
		bad := func() (int, string, bool) {
			writeErr(w, badRequest("page", "page=%q is not a page cursor of this server: pass the nextPage value of the previous answer as it is, or leave page out for the first page", truncate(s[0], 80)))
			return 0, "", false
		}
		if len(s[0]) > maxCursorLen {
			return bad()
		}
		raw, err := base64.RawURLEncoding.DecodeString(s[0])
		name, found := strings.CutPrefix(string(raw), listCursorPrefix)
		if err != nil || !found || name == "" || !utf8.ValidString(name) {
			return bad()
		}
		after = name
	}
	return limit, after, true
}

// pageLimit reads a page's limit parameter: a whole number from 1 on,
// served as at most max (a larger one, however large, is max: the answer
// names the limit it was served with, and its next page goes on). Not a
// whole number, or below 1: false.
func pageLimit(s string, max int) (int, bool) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false // a sign, a fraction, anything but digits
	}
	n, err := strconv.Atoi(s)
	if errors.Is(err, strconv.ErrRange) {
		return max, true // digits only: too large
	}
	if err != nil || n < 1 {
		return 0, false
	}
	return min(n, max), true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// relist reads the list again. When the list kept (stale, nil if none)
// is for the same catalog and the store's stamps (names, versions,
// digests, states: no content) are those it was built from, it is the
// answer: reading the stamps costs a fraction of reading every record.
func (a *api) relist(r *http.Request, l *catalog.Loadout, stale *listing) (*listing, error) {
	sum, err := a.stampSum(r)
	if err != nil {
		return nil, err
	}
	if stale != nil && sum != nil && stale.stamps != nil && *sum == *stale.stamps {
		return stale, nil
	}
	ls, err := a.buildListing(r, l)
	if err != nil {
		return nil, err
	}
	ls.stamps = sum // read before the list: a change in between shows at the next read
	return ls, nil
}

// stampSum is a digest of every stored skill's stamp, or nil when the
// store cannot list stamps (or there is no store).
func (a *api) stampSum(r *http.Request) (*[sha256.Size]byte, error) {
	st, ok := a.svc.Store().(store.Stamper)
	if !ok || a.svc.Store() == nil {
		return nil, nil
	}
	stamps, err := st.Stamps(r.Context())
	if err != nil {
		return nil, err
	}
	sort.Slice(stamps, func(i, j int) bool { return stamps[i].Name < stamps[j].Name })
	h := sha256.New()
	for _, s := range stamps {
		fmt.Fprintf(h, "%q %d %q %t %q %q %d\n", s.Name, s.Version, s.Digest, s.Enabled, s.Source, s.Provenance, s.UpdatedAt.UnixMicro())
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return &sum, nil
}

// buildListing reads the list: the catalog's entries and the disabled
// stored skills, sorted by name (stable: within a name, the catalog's
// order, the winner first, then a disabled stored namesake), each row
// encoded.
func (a *api) buildListing(r *http.Request, l *catalog.Loadout) (*listing, error) {
	out := make([]skillSummary, 0, len(l.Entries()))
	seenStored := map[string]bool{}
	for _, e := range l.Entries() {
		sk := e.Skill
		win, _ := l.Lookup(sk.Name)
		out = append(out, skillSummary{Name: sk.Name, Description: sk.Description, Source: sk.OriginValue(),
			Version: sk.Origin.Version, Mode: modeOf(e), Shadowed: win != e,
			Files: len(sk.Files), Enabled: true, ReadOnly: sk.Origin.Kind != "store", sk: sk})
		if sk.Origin.Kind == "store" {
			seenStored[sk.Name] = true
		}
	}
	// A blocked skill is listed to the admin with mode "blocked", not left
	// out (nor taken for a disabled stored one).
	for _, b := range l.Blocked() {
		sk := b.Skill
		out = append(out, skillSummary{Name: sk.Name, Description: sk.Description, Source: sk.OriginValue(),
			Version: sk.Origin.Version, Mode: "blocked", Files: len(sk.Files), Enabled: true, ReadOnly: sk.Origin.Kind != "store", sk: sk})
		if sk.Origin.Kind == "store" {
			seenStored[sk.Name] = true
		}
	}
	if st := a.svc.Store(); st != nil {
		recs, err := st.List(r.Context())
		if err != nil {
			return nil, err
		}
		for _, rec := range recs {
			if seenStored[rec.Name] {
				continue
			}
			out = append(out, skillSummary{Name: rec.Name, Description: rec.Description, Source: storeOrigin(rec),
				Version: rec.Version, Digest: rec.Digest, Mode: "disabled", Files: len(rec.Files), Enabled: rec.Enabled})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Mode != "disabled" && out[j].Mode == "disabled"
	})
	ls := &listing{items: out, names: make([]string, len(out))}
	for i := range out {
		ls.names[i] = out[i].Name
	}
	return ls, nil
}

// listing is the whole skill list: row i is items[i], of skill names[i].
// Pages are encoded from it on demand and kept (bounded by
// MaxListPageBytes); a row's digest is read then too. Encoding every row
// up front, with every skill's digest read from its files, held 49 MB and
// took 4-8 s of the warm-up at 50,000 skills for the first page's sake.
type listing struct {
	items  []skillSummary
	names  []string
	stamps *[sha256.Size]byte // the store's stamps it was read with (relist)

	mu        sync.RWMutex
	pages     map[pageKey]*httpbody.Body
	pageBytes int
}

type pageKey struct{ start, limit int }

// page is the page of at most limit rows after the name after ("" for the
// first page), never splitting a name.
func (ls *listing) page(after string, limit int) (*httpbody.Body, error) {
	n := len(ls.names)
	start := 0
	if after != "" {
		start = sort.Search(n, func(i int) bool { return ls.names[i] > after })
	}
	k := pageKey{start, limit}
	ls.mu.RLock()
	b := ls.pages[k]
	ls.mu.RUnlock()
	if b != nil {
		return b, nil
	}
	end := min(start+limit, n)
	if end < n && end > start && ls.names[end] == ls.names[end-1] {
		// A name straddles the limit: end the page before it, or, when it
		// is the page's only name, after all of its rows.
		g := end - 1
		for g > start && ls.names[g-1] == ls.names[end] {
			g--
		}
		if g > start {
			end = g
		} else {
			for end < n && ls.names[end] == ls.names[start] {
				end++
			}
		}
	}
	var buf bytes.Buffer
	buf.WriteString(`{"skills":[`)
	for i := start; i < end; i++ {
		if i > start {
			buf.WriteByte(',')
		}
		row := ls.items[i]
		if row.sk != nil {
			row.Digest = row.sk.ContentDigest()
		}
		b, err := marshal(&row)
		if err != nil {
			return nil, err
		}
		buf.Write(bytes.TrimSuffix(b, []byte("\n")))
	}
	buf.WriteString(`],"limit":`)
	buf.WriteString(strconv.Itoa(limit))
	buf.WriteString(`,"hasMore":`)
	if end < n {
		buf.WriteString(`true,"nextPage":"`)
		buf.WriteString(listCursor(ls.names[end-1]))
		buf.WriteString("\"}\n")
	} else {
		buf.WriteString("false}\n")
	}
	body := httpbody.New(buf.Bytes(), "application/json")
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if b := ls.pages[k]; b != nil { // another request built it meanwhile
		return b, nil
	}
	if ls.pages == nil || ls.pageBytes+2*buf.Len() > MaxListPageBytes {
		ls.pages, ls.pageBytes = map[pageKey]*httpbody.Body{}, 0
	}
	ls.pages[k] = body
	ls.pageBytes += 2 * buf.Len()
	return body, nil
}

// MaxListAge is the longest GET /v1/skills answers from its cache (see
// listSkills).
const MaxListAge = time.Second

// listKey is what the skill list depends on that this server sees change.
type listKey struct {
	l      *catalog.Loadout
	gen    uint64
	writes uint64
}

// listCache keeps the last skill list; mu is held while one is built.
type listCache struct {
	mu   sync.Mutex
	last atomic.Pointer[listEntry]
}

type listEntry struct {
	key listKey
	at  time.Time
	ls  *listing
}

// get returns the list for k, or, when the list kept is for k but older
// than MaxListAge, nil and that list (stale).
func (c *listCache) get(k listKey) (ls, stale *listing) {
	e := c.last.Load()
	switch {
	case e == nil || e.key != k:
		return nil, nil
	case time.Since(e.at) >= MaxListAge:
		return nil, e.ls
	}
	return e.ls, nil
}

// put keeps ls for k. A list read again that came out the same (row by
// row, the same skill values: a skill read again is a new one) keeps the
// old one, whose pages (and their gzip forms) are built already.
func (c *listCache) put(k listKey, ls *listing) {
	if e := c.last.Load(); e != nil && e.ls != ls && slices.Equal(e.ls.items, ls.items) {
		ls = e.ls
	}
	c.last.Store(&listEntry{key: k, at: time.Now(), ls: ls})
}

func storeOrigin(rec *store.Record) skill.Origin {
	prov := rec.Provenance
	switch {
	case rec.Source != "" && rec.Provenance != "":
		prov = rec.Source + ": " + rec.Provenance
	case rec.Source != "":
		prov = rec.Source
	}
	return skill.Origin{Kind: "store", Version: rec.Version, Provenance: prov}
}

// skillDetail is GET /v1/skills/{name} and the answer to every write.
type skillDetail struct {
	Name          string             `json:"name"`
	Description   string             `json:"description"`
	Source        skill.Origin       `json:"source"`
	Version       int                `json:"version,omitempty"`
	Digest        string             `json:"digest,omitempty"`
	Enabled       bool               `json:"enabled"`
	ReadOnly      bool               `json:"readOnly"`
	Reason        string             `json:"reason,omitempty"`
	ShadowedBy    *skill.Origin      `json:"shadowedBy,omitempty"`
	Category      string             `json:"category,omitempty"`
	SkillVersion  string             `json:"skillVersion,omitempty"`
	Tags          []string           `json:"tags,omitempty"`
	RequiresTools []string           `json:"requiresTools,omitempty"`
	Frontmatter   skill.Fields       `json:"frontmatter,omitempty"`
	Entry         string             `json:"entry"`
	Files         []skill.File       `json:"files"`
	Size          int64              `json:"size"`
	Content       string             `json:"content"`
	CreatedAt     *time.Time         `json:"createdAt,omitempty"`
	UpdatedAt     *time.Time         `json:"updatedAt,omitempty"`
	Warnings      []skill.Diagnostic `json:"warnings,omitempty"`
}

func recordDetail(rec *store.Record, l *catalog.Loadout) skillDetail {
	d := skillDetail{Name: rec.Name, Description: rec.Description, Source: storeOrigin(rec), Version: rec.Version,
		Digest: rec.Digest, Enabled: rec.Enabled, Category: rec.Category, SkillVersion: rec.SkillVersion,
		Tags: rec.Tags, RequiresTools: rec.RequiresTools, Frontmatter: rec.Frontmatter, Entry: "SKILL.md",
		Files: rec.Files, Size: rec.Size, Content: string(rec.Content), Warnings: rec.Warnings}
	if !rec.CreatedAt.IsZero() {
		c, u := rec.CreatedAt, rec.UpdatedAt
		d.CreatedAt, d.UpdatedAt = &c, &u
	}
	if d.Files == nil {
		d.Files = []skill.File{}
	}
	if l != nil {
		if e, ok := l.Lookup(rec.Name); ok && e.Skill.Origin.Kind != "store" {
			o := e.Skill.OriginValue()
			d.ShadowedBy = &o
		}
	}
	return d
}

// readOnlyReason says why a folder or plugin skill cannot be written here.
func readOnlyReason(sk *skill.Skill) string {
	if sk.Origin.Kind == "plugin" {
		return fmt.Sprintf("contributed by plugin %s (trust %s): change the plugin, or disable the skill with 'loadout disable plugin:%s/%s'", sk.Origin.Plugin, sk.Origin.Trust, sk.Origin.Plugin, sk.Name)
	}
	return fmt.Sprintf("a folder skill at %s: edit its files on disk", sk.Dir)
}

func catalogDetail(sk *skill.Skill) (skillDetail, error) {
	content, err := sk.ReadFile(sk.Entry)
	if err != nil {
		return skillDetail{}, err
	}
	size := int64(len(content))
	for _, f := range sk.Files {
		size += f.Size
	}
	d := skillDetail{Name: sk.Name, Description: sk.Description, Source: sk.OriginValue(), Version: sk.Origin.Version,
		Digest: sk.ContentDigest(), Enabled: true, ReadOnly: sk.Origin.Kind != "store", Entry: sk.Entry,
		Files: sk.Files, Size: size, Content: string(content)}
	if d.ReadOnly {
		d.Reason = readOnlyReason(sk)
	}
	if m := sk.Meta; m != nil {
		d.Category, d.SkillVersion, d.Tags, d.RequiresTools, d.Frontmatter = m.Category, m.Version, m.Tags, m.RequiresTools, m.Raw
	}
	if d.Files == nil {
		d.Files = []skill.File{}
	}
	return d, nil
}

func etag(version int) string { return `"v` + strconv.Itoa(version) + `"` }

// notFound answers a name that is neither stored nor in the global
// catalog, with the closest names. The message is for the person at the
// admin API: the catalog's own not-found text is written for a model
// ("available to this agent", "Call search_skills").
func notFound(w http.ResponseWriter, l *catalog.Loadout, name string) {
	res := l.Load(name)
	msg := fmt.Sprintf("no skill named %q in the store or the global catalog", name)
	if utf8.RuneCountInString(name) > skill.MaxNameLen {
		msg = fmt.Sprintf("no skill has that name: it has %d characters and skill names have at most %d", utf8.RuneCountInString(name), skill.MaxNameLen)
	}
	if len(res.Suggestions) > 0 {
		msg += "; did you mean " + strings.Join(res.Suggestions, ", ") + "?"
	} else {
		msg += "; GET /v1/skills lists every skill, a page at a time"
	}
	e := &service.Error{Code: service.CodeNotFound, Message: msg}
	writeJSON(w, http.StatusNotFound, struct {
		Error       *service.Error `json:"error"`
		Suggestions []string       `json:"suggestions"`
	}{e, orEmpty(res.Suggestions)})
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// lookup finds a skill for the admin routes: the store first (disabled
// skills too), then the global catalog. It writes the error itself.
func (a *api) lookup(w http.ResponseWriter, r *http.Request, l *catalog.Loadout, name string) (*store.Record, *skill.Skill, bool) {
	e, inCatalog := l.Lookup(name)
	if inCatalog && a.unstored.has(name, a.writes.Load()) {
		return nil, e.Skill, true
	}
	writes := a.writes.Load()
	rec, err := a.record(r, name, writes)
	if err == nil {
		return rec, nil, true
	}
	if service.AsError(err).Code != service.CodeNotFound {
		a.fail(w, r, err)
		return nil, nil, false
	}
	if inCatalog {
		a.unstored.put(name, writes)
		return nil, e.Skill, true
	}
	notFound(w, l, name)
	return nil, nil, false
}

func (a *api) getSkill(w http.ResponseWriter, r *http.Request) {
	gen := a.svc.Generation()
	l, ok := a.global(w, r)
	if !ok {
		return
	}
	rec, sk, ok := a.lookup(w, r, l, r.PathValue("name"))
	if !ok {
		return
	}
	if rec != nil {
		w.Header().Set("ETag", etag(rec.Version))
		k := storedKey{rec.ID, rec.Version, rec.Enabled, rec.UpdatedAt.UnixMicro()}
		if len(rec.Warnings) > 0 {
			writeJSON(w, http.StatusOK, recordDetail(rec, l))
			return
		}
		if body := a.details.get(k, gen); body != nil {
			writeRaw(w, http.StatusOK, ctJSON, body)
			return
		}
		body, err := marshal(recordDetail(rec, l))
		if err != nil {
			a.fail(w, r, err)
			return
		}
		a.details.put(k, gen, body)
		writeRaw(w, http.StatusOK, ctJSON, body)
		return
	}
	if body := a.details.get(sk, gen); body != nil {
		writeRaw(w, http.StatusOK, ctJSON, body)
		return
	}
	d, err := catalogDetail(sk)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	body, err := marshal(d)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.details.put(sk, gen, body)
	writeRaw(w, http.StatusOK, ctJSON, body)
}

// MaxRecordAge is how long the admin read routes (GET
// /v1/skills/{name}, its files, export and versions) use a stored
// skill's record read from the store before they read it again, unless
// this API writes meanwhile (recordCache): a change by the web UI of
// another instance or the CLI shows within it. Writes always read the
// store (If-Match is checked there), so a stale ETag costs a 409 at
// worst. MaxRecords bounds the records kept; past it, the cache starts
// afresh.
const (
	MaxRecordAge = time.Second
	MaxRecords   = 1000
)

// recordCache keeps stored skills' records read recently.
type recordCache = bounded[string, cachedRecord]

type cachedRecord struct {
	rec    *store.Record
	at     time.Time
	writes uint64
}

// record is the service's Get through recordCache; writes is the API's
// write count read before.
func (a *api) record(r *http.Request, name string, writes uint64) (*store.Record, error) {
	c, ok := a.records.get(name)
	if ok && c.writes == writes && time.Since(c.at) < MaxRecordAge {
		return c.rec, nil
	}
	at := time.Now()
	rec, err := a.svc.Get(r.Context(), principal(r), name)
	if err != nil {
		return nil, err
	}
	a.records.put(name, cachedRecord{rec: rec, at: at, writes: writes})
	return rec, nil
}

// MaxUnstoredAge is how long the admin routes trust that a skill of the
// catalog (a folder, plugin or remote skill) has no stored namesake,
// which would win: they ask the store first, and its "no" is kept this
// long (unstoredCache) unless this API writes meanwhile. A namesake
// stored by the web UI of another instance or the CLI shows within it.
const MaxUnstoredAge = time.Second

// MaxUnstored bounds the names unstoredCache keeps; past it, it starts
// afresh.
const MaxUnstored = 10_000

// unstoredCache keeps the store's recent "no such skill" for names the
// catalog has, so GET /v1/skills/{name} and its files of a folder skill
// cost no store query per request.
type unstoredCache struct{ b bounded[string, unstored] }

type unstored struct {
	at     time.Time
	writes uint64 // the API's write count when the store was asked
}

func (c *unstoredCache) has(name string, writes uint64) bool {
	u, ok := c.b.get(name)
	return ok && u.writes == writes && time.Since(u.at) < MaxUnstoredAge
}

func (c *unstoredCache) put(name string, writes uint64) {
	c.b.put(name, unstored{at: time.Now(), writes: writes})
}

// MaxStoredFileBytes bounds the bytes of stored files GET
// /v1/skills/{name}/files/{path} keeps (storedFiles), and
// MaxStoredFileSize the size of one kept file; past the bound, the cache
// starts afresh.
const (
	MaxStoredFileBytes = 32 << 20
	MaxStoredFileSize  = 256 << 10
)

// fileDigestKey names a stored file by content: the digest of its skill's
// version (which fixes every byte of it) and its path.
type fileDigestKey struct{ version, path string }

// storedFile is a stored file's bytes (nil when over MaxStoredFileSize)
// and digest (its ETag).
type storedFile struct {
	data   []byte
	digest string
}

// storedFileCache keeps stored files by content.
type storedFileCache struct {
	b bounded[fileDigestKey, storedFile]
}

func (c *storedFileCache) get(k fileDigestKey) ([]byte, string, bool) {
	f, ok := c.b.get(k)
	return f.data, f.digest, ok && f.data != nil
}

func (c *storedFileCache) put(k fileDigestKey, data []byte, digest string) {
	if len(data) > MaxStoredFileSize {
		return
	}
	if data == nil {
		data = []byte{}
	}
	c.b.put(k, storedFile{data: data, digest: digest})
}

// MaxDetailCache is how many answers of GET /v1/skills/{name} the server
// keeps encoded (see detailCache); past it, the cache starts afresh.
const MaxDetailCache = 1024

// detailCache keeps the answers of GET /v1/skills/{name}, encoded, per
// catalog generation (a reload drops them all):
//   - for the catalog's own skills (folder, plugin and remote ones), keyed
//     by the skill value, which is immutable: their entry file is read and
//     the answer encoded once per skill and generation, not per request;
//   - for stored skills, keyed by what the answer depends on besides the
//     catalog (storedKey): the store is still read on every request (it is
//     the truth, and its version is the ETag), but an unchanged version is
//     not encoded again.
type detailCache struct {
	mu  sync.RWMutex
	gen uint64
	m   map[any][]byte
}

// storedKey identifies a stored skill's answer: a version fixes its bytes
// and metadata; enabling or disabling it changes Enabled and UpdatedAt.
type storedKey struct {
	id      string
	version int
	enabled bool
	updated int64
}

func (c *detailCache) get(sk any, gen uint64) []byte {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.gen != gen {
		return nil
	}
	return c.m[sk]
}

func (c *detailCache) put(sk any, gen uint64, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen < c.gen {
		return
	}
	if gen > c.gen || len(c.m) >= MaxDetailCache {
		c.gen = gen
		c.m = nil
	}
	if c.m == nil {
		c.m = map[any][]byte{}
	}
	c.m[sk] = body
}

// weakIfMatch is ifMatch's version for a weak ETag: If-Match compares
// strongly (RFC 9110), so W/"vN" matches no version.
const weakIfMatch = -2

// ifMatch parses If-Match: "vN" gives N, * gives -1 (no check), and a weak
// W/"vN" gives weakIfMatch.
func ifMatch(r *http.Request) (v int, present bool, err *service.Error) {
	h := strings.TrimSpace(r.Header.Get("If-Match"))
	if h == "" {
		return 0, false, nil
	}
	if h == "*" {
		return -1, true, nil
	}
	t, weak := strings.CutPrefix(h, "W/")
	if len(t) >= 4 && t[0] == '"' && t[1] == 'v' && t[len(t)-1] == '"' {
		if n, e := strconv.Atoi(t[2 : len(t)-1]); e == nil && n > 0 {
			if weak {
				return weakIfMatch, true, nil
			}
			return n, true, nil
		}
	}
	return 0, true, badRequest("If-Match", "If-Match %q is not a version ETag: send the ETag of the skill as you read it, like \"v3\", or *", h)
}

// weakConflict answers an update whose If-Match is a weak ETag: 409 with
// the current version, as for a stale one, and nothing changes.
func (a *api) weakConflict(w http.ResponseWriter, r *http.Request, name string) {
	h := strings.TrimSpace(r.Header.Get("If-Match"))
	e := &service.Error{Code: service.CodeConflict, Field: "If-Match",
		Message: fmt.Sprintf("If-Match %s is a weak ETag, which never matches (If-Match compares strongly, RFC 9110): send the strong ETag %s as the skill's ETag header gave it", h, strings.TrimPrefix(h, "W/"))}
	if rec, err := a.svc.Get(r.Context(), principal(r), name); err == nil {
		e.Current = rec.Version
	} else if c := service.AsError(err).Code; c != service.CodeNotFound {
		a.fail(w, r, err)
		return
	}
	writeErr(w, e)
}

// precondition decides the ifVersion of an update of an existing skill:
// If-Match when given; else 428 if the store holds the skill, and -1 when
// it does not (the service then refuses a folder or plugin skill as
// read-only, or an unknown one as not found).
func (a *api) precondition(w http.ResponseWriter, r *http.Request, name string) (int, bool) {
	v, present, e := ifMatch(r)
	if e != nil {
		writeErr(w, e)
		return 0, false
	}
	if v == weakIfMatch {
		a.weakConflict(w, r, name)
		return 0, false
	}
	if present {
		return v, true
	}
	rec, err := a.svc.Get(r.Context(), principal(r), name)
	if err == nil {
		writeErr(w, &service.Error{Code: CodePreconditionRequired, Current: rec.Version,
			Message: fmt.Sprintf("updating stored skill %q needs If-Match: send the ETag you read (its current version is %s), or * to overwrite", name, etag(rec.Version))})
		return 0, false
	}
	if c := service.AsError(err).Code; c != service.CodeNotFound {
		a.fail(w, r, err)
		return 0, false
	}
	return -1, true
}

// readBody reads a request body of at most limit bytes; more is too_large.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, what string) ([]byte, *service.Error) {
	tooLarge := &service.Error{Code: service.CodeTooLarge, Message: fmt.Sprintf("%s is over the limit of %d bytes", what, limit)}
	if r.ContentLength > limit {
		return nil, tooLarge
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return nil, tooLarge
		}
		if isTimeout(err) {
			return nil, &service.Error{Code: CodeRequestTimeout, Message: fmt.Sprintf("%s did not arrive within the server's read timeout: send it faster, or ask the operator to raise --read-timeout", what)}
		}
		return nil, badRequest("", "the request body could not be read: %v", err)
	}
	return data, nil
}

// importError turns a portable refusal into an API error: malformed JSON is
// bad_request, a path refusal refused, a size refusal too_large, anything
// else the document says invalid.
func importError(err error) *service.Error {
	var ce *skill.CheckError
	if errors.As(err, &ce) {
		e := service.AsError(ce)
		var pe *portable.Error
		if errors.As(err, &pe) {
			e.Message = pe.Error()
		}
		return e
	}
	var pe *portable.Error
	if errors.As(err, &pe) {
		code := service.CodeInvalid
		switch {
		case pe.Code == portable.CodeJSONInvalid:
			code = CodeBadRequest
		case strings.HasPrefix(pe.Code, "path-"):
			code = service.CodeRefused
		case pe.Code == skill.CodeTooLarge, pe.Code == skill.CodeTooManyFiles, pe.Code == portable.CodeTooManyEntries, pe.Code == portable.CodeUploadTooLarge:
			code = service.CodeTooLarge
		}
		return &service.Error{Code: code, Message: pe.Error(), Field: pe.Entry,
			Problems: []skill.Diagnostic{{Severity: skill.Error, Code: pe.Code, Message: pe.Msg, Path: pe.Entry}}}
	}
	return service.AsError(err)
}

// readDoc reads a body holding one portable JSON document.
func (a *api) readDoc(w http.ResponseWriter, r *http.Request) (*skill.Bundle, *skill.Document, bool) {
	data, e := readBody(w, r, a.docCap, "the skill document")
	if e != nil {
		writeErr(w, e)
		return nil, nil, false
	}
	b, err := portable.ImportJSON(data)
	if err != nil {
		writeErr(w, importError(err))
		return nil, nil, false
	}
	doc, _, err := b.Check(a.lim)
	if err != nil {
		writeErr(w, service.AsError(err))
		return nil, nil, false
	}
	return b, doc, true
}

func (a *api) writeRecord(w http.ResponseWriter, r *http.Request, status int, rec *store.Record) {
	w.Header().Set("ETag", etag(rec.Version))
	if status == http.StatusCreated {
		w.Header().Set("Location", "/v1/skills/"+rec.Name)
	}
	writeJSON(w, status, recordDetail(rec, a.svc.Catalog().Global()))
}

// createSkill: POST /v1/skills creates a stored skill (409 if the store
// has one of that name). A folder or plugin skill of the same name keeps
// winning the name; the stored copy is reported as shadowed.
func (a *api) createSkill(w http.ResponseWriter, r *http.Request) {
	if _, ok := a.global(w, r); !ok {
		return
	}
	b, _, ok := a.readDoc(w, r)
	if !ok {
		return
	}
	rec, err := a.svc.Put(r.Context(), principal(r), b, 0, "api", "POST /v1/skills")
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeRecord(w, r, http.StatusCreated, rec)
}

// putSkill: PUT /v1/skills/{name} replaces a stored skill (If-Match
// required) or creates it (If-None-Match: * or no header). A name served by
// a folder or plugin skill is refused as read-only.
func (a *api) putSkill(w http.ResponseWriter, r *http.Request) {
	l, ok := a.global(w, r)
	if !ok {
		return
	}
	name := r.PathValue("name")
	v, present, e := ifMatch(r)
	if e != nil {
		writeErr(w, e)
		return
	}
	if v == weakIfMatch {
		a.weakConflict(w, r, name)
		return
	}
	b, doc, ok := a.readDoc(w, r)
	if !ok {
		return
	}
	if doc.Name != name {
		writeErr(w, &service.Error{Code: service.CodeInvalid, Field: "name",
			Message: fmt.Sprintf("the document is skill %q but the URL names %q: PUT it to /v1/skills/%s", doc.Name, name, doc.Name)})
		return
	}
	status := http.StatusOK
	if !present {
		rec, err := a.svc.Get(r.Context(), principal(r), name)
		switch {
		case err == nil:
			if strings.TrimSpace(r.Header.Get("If-None-Match")) == "*" {
				writeErr(w, &service.Error{Code: service.CodeConflict, Current: rec.Version,
					Message: fmt.Sprintf("skill %q exists (version %d) and If-None-Match: * asked to create it", name, rec.Version)})
				return
			}
			writeErr(w, &service.Error{Code: CodePreconditionRequired, Current: rec.Version,
				Message: fmt.Sprintf("skill %q exists: updating it needs If-Match: %s (the version you read), or * to overwrite", name, etag(rec.Version))})
			return
		case service.AsError(err).Code != service.CodeNotFound:
			a.fail(w, r, err)
			return
		}
		if e, ok := l.Lookup(name); ok && e.Skill.Origin.Kind != "store" {
			// Let the service refuse it: a write that is not a creation
			// of a name it holds read-only.
			v = -1
		} else {
			v, status = 0, http.StatusCreated
		}
	}
	rec, err := a.svc.Put(r.Context(), principal(r), b, v, "api", "PUT /v1/skills/"+name)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeRecord(w, r, status, rec)
}

func (a *api) deleteSkill(w http.ResponseWriter, r *http.Request) {
	if _, ok := a.global(w, r); !ok {
		return
	}
	v, present, e := ifMatch(r)
	if e != nil {
		writeErr(w, e)
		return
	}
	if v == weakIfMatch {
		a.weakConflict(w, r, r.PathValue("name"))
		return
	}
	if !present {
		v = -1
	}
	if err := a.svc.Delete(r.Context(), principal(r), r.PathValue("name"), v); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type manifest struct {
	Name    string       `json:"name"`
	Version int          `json:"version,omitempty"`
	Entry   string       `json:"entry"`
	Files   []skill.File `json:"files"`
}

func (a *api) listFiles(w http.ResponseWriter, r *http.Request) {
	l, ok := a.global(w, r)
	if !ok {
		return
	}
	rec, sk, ok := a.lookup(w, r, l, r.PathValue("name"))
	if !ok {
		return
	}
	if rec != nil {
		w.Header().Set("ETag", etag(rec.Version))
		writeJSON(w, http.StatusOK, manifest{Name: rec.Name, Version: rec.Version, Entry: "SKILL.md", Files: orEmpty(rec.Files)})
		return
	}
	writeJSON(w, http.StatusOK, manifest{Name: sk.Name, Version: sk.Origin.Version, Entry: sk.Entry, Files: orEmpty(sk.Files)})
}

// cleanParam runs the path parameter through the one path check.
func cleanParam(w http.ResponseWriter, r *http.Request) (string, bool) {
	p, err := skill.CleanPath(r.PathValue("path"))
	if err != nil {
		writeErr(w, pathError(err))
		return "", false
	}
	return p, true
}

// pathError is the API error of a path skill.CleanPath refused.
func pathError(err error) *service.Error {
	e := &service.Error{Code: service.CodeRefused, Field: "path", Message: err.Error()}
	var pe *skill.PathError
	if errors.As(err, &pe) {
		e.Problems = []skill.Diagnostic{{Severity: skill.Error, Code: pe.Code, Message: pe.Reason, Path: pe.Path}}
	}
	return e
}

// getFile serves one file of a skill raw, streamed (with Range support):
// a stored skill's from the store, a folder or plugin skill's through the
// catalog, whose checks refuse links out of the skill, special files, a
// swapped skill folder and files over the size cap before reading. Its
// headers are internal/inert's: nothing in a skill runs in this origin.
func (a *api) getFile(w http.ResponseWriter, r *http.Request) {
	path, ok := cleanParam(w, r)
	if !ok {
		return
	}
	l, ok := a.global(w, r)
	if !ok {
		return
	}
	name := r.PathValue("name")
	rec, sk, ok := a.lookup(w, r, l, name)
	if !ok {
		return
	}
	var c skill.Content
	ct := "application/octet-stream"
	text := false
	var storedDigest string
	if rec != nil {
		// A stored version's files never change: small ones are kept
		// (storedFiles), so a repeated read costs the record's query only.
		k := fileDigestKey{rec.Digest, path}
		data, d, ok := a.storedFiles.get(k)
		if !ok || rec.Digest == "" {
			var err error
			if data, err = a.svc.Store().ReadFile(r.Context(), name, rec.Version, path); err != nil {
				a.fail(w, r, err)
				return
			}
			d = skill.DigestBytes(data)
			if rec.Digest != "" {
				a.storedFiles.put(k, data, d)
			}
		}
		storedDigest = d
		c = skill.BytesContent(data)
		if path == "SKILL.md" {
			ct, text = "text/markdown; charset=utf-8", true
		}
		for _, f := range rec.Files {
			if f.Path == path {
				ct, text = f.ContentType, !f.Binary
			}
		}
		w.Header().Set("X-Skill-Version", strconv.Itoa(rec.Version))
	} else {
		res, open := l.OpenFile(name, path, a.lim.MaxTotalSize)
		if res.Status != catalog.StatusOK {
			writeErr(w, fileError(res))
			return
		}
		if res.Entry != sk {
			open.Close()
			// The catalog's winner is what the admin view describes.
			writeErr(w, &service.Error{Code: service.CodeNotFound, Message: "the skill changed while it was read; retry"})
			return
		}
		c, ct = open, res.ContentType
		if f, ok := sk.File(res.Path); ok {
			text = !f.Binary
		}
		if path == sk.Entry {
			ct, text = "text/markdown; charset=utf-8", true
		}
	}
	defer c.Close()
	// The ETag is the file's digest, hashed once: a stored version's files
	// never change (the digest is kept per version digest and path), and
	// a folder skill's digests are kept by its Skill value, which a change
	// on disk replaces (a file whose size no longer matches its manifest is
	// refused above). Before, every request hashed the file (12% of the
	// route's CPU).
	var digest string
	var err error
	if rec != nil {
		digest = storedDigest
	} else {
		digest, err = sk.Digest(path)
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	tag := `"` + digest + `"`
	h := w.Header()
	h.Set("ETag", tag)
	// Set before a 304 too: a browser keeps the headers of the answer it
	// revalidates, and these say how the bytes may be used.
	inert.Set(h, r, path, ct, text)
	if noneMatch(r.Header.Get("If-None-Match"), tag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	http.ServeContent(w, r, "", time.Time{}, io.NewSectionReader(c, 0, c.Size()))
}

// noneMatch reports whether If-None-Match holds tag (or *). It compares
// weakly, as RFC 9110 asks for If-None-Match: W/"x" matches "x".
func noneMatch(h, tag string) bool {
	for _, t := range strings.Split(h, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t != "" && t == tag {
			return true
		}
	}
	return false
}

// fileError maps a FileResult that is not ok to an error.
func fileError(res catalog.FileResult) *service.Error {
	e := &service.Error{Message: res.Message, Path: res.Path}
	switch res.Status {
	case catalog.StatusNotFound:
		e.Code = service.CodeNotFound
	case catalog.StatusRefused:
		e.Code = service.CodeRefused
		if res.Code == "range-invalid" {
			e.Code = CodeBadRequest
		}
	case catalog.StatusTooLarge:
		e.Code = service.CodeTooLarge
	case catalog.StatusChanged:
		e.Code = service.CodeConflict
	case catalog.StatusBlocked:
		e.Code = service.CodeBlocked
	default:
		e.Code = service.CodeInternal
	}
	if res.Code != "" && res.Code != "range-invalid" {
		e.Problems = []skill.Diagnostic{{Severity: skill.Error, Code: res.Code, Message: res.Message, Path: res.Path}}
	}
	return e
}

func (a *api) putFile(w http.ResponseWriter, r *http.Request) {
	path, ok := cleanParam(w, r)
	if !ok {
		return
	}
	if _, ok := a.global(w, r); !ok {
		return
	}
	name := r.PathValue("name")
	exec := false
	if x := r.Header.Get("X-Executable"); x != "" {
		b, err := strconv.ParseBool(x)
		if err != nil {
			writeErr(w, badRequest("X-Executable", "X-Executable %q is not true or false", x))
			return
		}
		exec = b
	}
	v, ok := a.precondition(w, r, name)
	if !ok {
		return
	}
	data, e := readBody(w, r, a.fileCap, "the file")
	if e != nil {
		writeErr(w, e)
		return
	}
	rec, err := a.svc.PutFile(r.Context(), principal(r), name, path, data, exec, v)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeRecord(w, r, http.StatusOK, rec)
}

func (a *api) deleteFile(w http.ResponseWriter, r *http.Request) {
	path, ok := cleanParam(w, r)
	if !ok {
		return
	}
	a.guardedWrite(w, r, func(name string, v int) (*store.Record, error) {
		return a.svc.DeleteFile(r.Context(), principal(r), name, path, v)
	})
}

// guardedWrite is the shape of every conditional write to one stored skill:
// an admin check, the If-Match precondition on {name}, the write, and the
// record (with its new ETag) or the error.
func (a *api) guardedWrite(w http.ResponseWriter, r *http.Request, write func(name string, ifVersion int) (*store.Record, error)) {
	if _, ok := a.global(w, r); !ok {
		return
	}
	name := r.PathValue("name")
	v, ok := a.precondition(w, r, name)
	if !ok {
		return
	}
	rec, err := write(name, v)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeRecord(w, r, http.StatusOK, rec)
}

type versionView struct {
	Version    int       `json:"version"`
	Digest     string    `json:"digest"`
	Size       int64     `json:"size"`
	Files      int       `json:"files"`
	Note       string    `json:"note,omitempty"`
	Source     string    `json:"source,omitempty"`
	Provenance string    `json:"provenance,omitempty"`
	CreatedAt  time.Time `json:"createdAt"`
}

func (a *api) listVersions(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	// The list is kept with the exports (exportCache), keyed by the
	// current stored record: a new version, a restore or a switch makes
	// a new key. Without it each request ran the versions query.
	l, ok := a.global(w, r)
	if !ok {
		return
	}
	key, ok := a.exportKeyOf(w, r, l, name, 0, "versions")
	if !ok {
		return
	}
	if e := a.exports.get(key); e != nil {
		writeRaw(w, http.StatusOK, ctJSON, e.body)
		return
	}
	vs, err := a.svc.Versions(r.Context(), principal(r), name)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]versionView, len(vs))
	for i, v := range vs {
		out[i] = versionView(v)
	}
	data, err := marshal(map[string]any{"name": name, "versions": out})
	if err != nil {
		writeErr(w, &service.Error{Code: service.CodeInternal, Message: "the response could not be encoded"})
		return
	}
	a.exports.put(key, &exportEntry{body: data})
	writeRaw(w, http.StatusOK, ctJSON, data)
}

func versionParam(w http.ResponseWriter, r *http.Request) (int, bool) {
	s := r.PathValue("v")
	n, err := strconv.Atoi(strings.TrimPrefix(s, "v"))
	if err != nil || n < 1 {
		writeErr(w, badRequest("v", "version %q is not a version number (1, 2, …)", s))
		return 0, false
	}
	return n, true
}

func (a *api) getVersion(w http.ResponseWriter, r *http.Request) {
	n, ok := versionParam(w, r)
	if !ok {
		return
	}
	name := r.PathValue("name")
	var key exportKey
	if l, ok := a.global(w, r); !ok {
		return
	} else if key, ok = a.exportKeyOf(w, r, l, name, n, "version"); !ok {
		return
	}
	if e := a.exports.get(key); e != nil {
		w.Header().Set("ETag", e.etag)
		writeRaw(w, http.StatusOK, ctJSON, e.body)
		return
	}
	b, rec, err := a.svc.Bundle(r.Context(), principal(r), name, n)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	o := storeOrigin(rec)
	data, err := portable.ExportJSON(b, portable.ExportMeta{ExportedAt: time.Now().UTC(), ExportedFrom: "loadout", Origin: &o})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	tag := etag(rec.Version)
	a.exports.put(key, &exportEntry{body: data, etag: tag})
	w.Header().Set("ETag", tag)
	writeRaw(w, http.StatusOK, ctJSON, data)
}

func (a *api) restoreVersion(w http.ResponseWriter, r *http.Request) {
	n, ok := versionParam(w, r)
	if !ok {
		return
	}
	a.guardedWrite(w, r, func(name string, v int) (*store.Record, error) {
		return a.svc.Restore(r.Context(), principal(r), name, n, v)
	})
}

// exportSkill exports a stored skill (any version) or else any skill of
// the global catalog, with its origin in the metadata.
func (a *api) exportSkill(w http.ResponseWriter, r *http.Request) {
	l, ok := a.global(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	format := q.Get("format")
	if format == "" {
		format = "json"
	}
	if format != "json" && format != "zip" {
		writeErr(w, badRequest("format", "format %q: use json or zip", format))
		return
	}
	version := 0
	if s := q.Get("version"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			writeErr(w, badRequest("version", "version %q is not a version number (1, 2, …)", s))
			return
		}
		version = n
	}
	name := r.PathValue("name")
	if b, blocked := a.svc.Blocked(l, name, 0, ""); blocked && version == 0 {
		writeErr(w, service.BlockedError(name, b)) // the kill switch
		return
	}
	// A JSON export is kept for MaxExportAge (see exportCache): the key
	// is the stored record (one query, not the whole bundle) or the
	// catalog's skill value.
	var key exportKey
	if format == "json" {
		key, ok = a.exportKeyOf(w, r, l, name, version, "export")
		if !ok {
			return
		}
		// A stored version a block may name is checked below, first.
		if e := a.exports.get(key); e != nil && (version == 0 || !a.svc.MayBlock(name)) {
			writeRaw(w, http.StatusOK, ctJSON, e.body)
			return
		}
	}
	var b *skill.Bundle
	var origin skill.Origin
	sb, rec, err := a.svc.Bundle(r.Context(), principal(r), name, version)
	switch {
	case err == nil:
		if bl, blocked := a.svc.Blocked(l, name, rec.Version, rec.Digest); blocked && version != 0 {
			writeErr(w, service.BlockedError(name, bl))
			return
		}
		b, origin = sb, storeOrigin(rec)
	case service.AsError(err).Code != service.CodeNotFound:
		a.fail(w, r, err)
		return
	default:
		e, found := l.Lookup(name)
		if !found || version != 0 {
			if version != 0 && found {
				writeErr(w, &service.Error{Code: service.CodeNotFound, Field: "version",
					Message: fmt.Sprintf("skill %q is a %s skill, which has no stored versions: export it without version", name, e.Skill.Origin.Kind)})
				return
			}
			notFound(w, l, name)
			return
		}
		// The manifest's sizes are checked against the export's limits
		// before a byte is read; a link out of the skill, a special file or
		// a file changed since the scan is a 4xx refusal with its code.
		if b, err = e.Skill.BundleWithin(skill.Limits{}); err != nil {
			a.fail(w, r, err)
			return
		}
		origin = e.Skill.OriginValue()
	}
	if format == "zip" {
		var buf bytes.Buffer
		if err := portable.ExportZip(&buf, name, b); err != nil {
			a.fail(w, r, importError(err))
			return
		}
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.zip"`)
		writeRaw(w, http.StatusOK, []string{"application/zip"}, buf.Bytes())
		return
	}
	data, err := portable.ExportJSON(b, portable.ExportMeta{ExportedAt: time.Now().UTC(), ExportedFrom: "loadout", Origin: &origin})
	if err != nil {
		a.fail(w, r, importError(err))
		return
	}
	a.exports.put(key, &exportEntry{body: data})
	writeRaw(w, http.StatusOK, ctJSON, data)
}

// exportKeyOf is the cache key of an export (what "export") or a
// version's document (what "version"): the current stored record when
// there is one (read from the store: the truth), else the catalog's skill
// of that name in this generation. ok is false when a store error was
// answered; a skill found nowhere gets the zero key (never cached), and the
// caller's own lookup answers it.
func (a *api) exportKeyOf(w http.ResponseWriter, r *http.Request, l *catalog.Loadout, name string, version int, what string) (exportKey, bool) {
	e, inCatalog := l.Lookup(name)
	catalogKey := func() exportKey {
		if version == 0 && what == "export" {
			return exportKey{what: what, sk: e.Skill, gen: a.svc.Generation()}
		}
		return exportKey{}
	}
	if inCatalog && a.unstored.has(name, a.writes.Load()) {
		return catalogKey(), true
	}
	writes := a.writes.Load()
	rec, err := a.record(r, name, writes)
	switch {
	case err == nil:
		return exportKey{what: what, stored: storedKey{rec.ID, rec.Version, rec.Enabled, rec.UpdatedAt.UnixMicro()}, digest: rec.Digest, version: version}, true
	case service.AsError(err).Code != service.CodeNotFound:
		a.fail(w, r, err)
		return exportKey{}, false
	}
	if inCatalog {
		a.unstored.put(name, writes)
		return catalogKey(), true
	}
	return exportKey{}, true
}

// MaxExportAge is how long an export's JSON (GET
// /v1/skills/{name}/export, and …/versions/{v}) is answered from the
// cache: its exportedAt is at most this old. Reading the whole bundle
// and encoding it took most of the route's time.
const MaxExportAge = time.Second

// MaxExportCacheBytes bounds the bytes of the exports kept; past it, the
// cache starts afresh.
const MaxExportCacheBytes = 32 << 20

// exportKey is what an export's bytes depend on; the zero key is never
// cached.
type exportKey struct {
	what    string
	stored  storedKey
	digest  string
	version int
	sk      *skill.Skill
	gen     uint64
}

type exportEntry struct {
	body []byte
	etag string
	at   time.Time
}

type exportCache struct {
	b bounded[exportKey, *exportEntry]
}

func (c *exportCache) get(k exportKey) *exportEntry {
	if k == (exportKey{}) {
		return nil
	}
	e, _ := c.b.get(k)
	if e == nil || time.Since(e.at) >= MaxExportAge {
		return nil
	}
	return e
}

func (c *exportCache) put(k exportKey, e *exportEntry) {
	if k == (exportKey{}) || len(e.body) > MaxExportCacheBytes/4 {
		return
	}
	e.at = time.Now()
	c.b.put(k, e)
}

// importResult is one row of POST /v1/import's answer.
type importResult struct {
	Name     string             `json:"name"`
	Action   string             `json:"action"`
	Version  int                `json:"version,omitempty"`
	Error    string             `json:"error,omitempty"`
	Problems []skill.Diagnostic `json:"problems,omitempty"`
}

// importSkills: POST /v1/import with one portable JSON document or an
// array of them (application/json), or one zip (application/zip) of one
// skill or of several (one per top-level folder), read by
// portable.ReadUpload with the limits the UI and the CLI use too. Every
// document is checked; the import is all or nothing: when any is refused,
// none is written and the others are "skipped". With ?partial=1 the
// accepted ones are written anyway. 200 when nothing was refused, else 422
// with the same body (a result for every document, in order).
func (a *api) importSkills(w http.ResponseWriter, r *http.Request) {
	if _, ok := a.global(w, r); !ok {
		return
	}
	var opt service.ImportOptions
	if s := r.URL.Query().Get("partial"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			writeErr(w, badRequest("partial", "partial=%q: use 1 (write the accepted skills when some are refused) or 0 (all or nothing, the default)", s))
			return
		}
		opt.Partial = b
	}
	ct := r.Header.Get("Content-Type")
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.ToLower(strings.TrimSpace(ct))
	var (
		items []store.ImportItem
		// early are the refusals of documents that did not parse, by item.
		early = map[int]*service.Error{}
	)
	add := func(b *skill.Bundle, err error, provenance string) {
		if err != nil {
			e := importError(err)
			early[len(items)] = e
			items = append(items, store.ImportItem{Err: e, Provenance: provenance})
			return
		}
		items = append(items, store.ImportItem{Bundle: b, Source: "import", Provenance: provenance})
	}
	var kind portable.Kind
	switch ct {
	case "application/json":
		kind = portable.KindJSON
	case "application/zip", "application/x-zip-compressed":
		kind = portable.KindZip
	default:
		// requireType lets only the route's types through; this is the
		// same refusal, should the two lists ever differ.
		writeErr(w, &service.Error{Code: CodeUnsupportedMediaType, Field: "Content-Type",
			Message: fmt.Sprintf("Content-Type %q: send application/json (a portable document or an array of them) or application/zip", ct)})
		return
	}
	// The file's name, for the refusals: Content-Disposition's filename
	// when the client sends one (curl -H 'Content-Disposition:
	// attachment; filename=x.zip'), else the request body.
	name := "the request body"
	if _, params, err := mime.ParseMediaType(r.Header.Get("Content-Disposition")); err == nil && params["filename"] != "" {
		name = params["filename"]
	}
	data, e := readBody(w, r, a.imp.MaxUploadBytes, "the import")
	if e != nil {
		if e.Code == service.CodeTooLarge {
			e = importError(portable.TooLargeError(name, -1, a.imp))
		}
		writeErr(w, e)
		return
	}
	ups, err := portable.ReadUpload(name, kind, data, a.imp)
	if err != nil {
		writeErr(w, importError(err))
		return
	}
	for i, u := range ups {
		prov := fmt.Sprintf("POST /v1/import [%d]", i)
		if kind == portable.KindZip {
			prov = "POST /v1/import (zip)"
			if len(ups) > 1 {
				prov = "POST /v1/import (zip: " + u.Name + "/)"
			}
		}
		add(u.Bundle, u.Err, prov)
	}
	results := []importResult{}
	if len(items) > 0 {
		res, err := a.svc.Import(r.Context(), principal(r), items, opt)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		for i, ir := range res {
			out := importResult{Name: ir.Name, Action: ir.Action, Version: ir.Version, Problems: ir.Problems}
			if e := early[i]; e != nil {
				out.Error, out.Problems = e.Message, e.Problems
			} else if ir.Error != nil {
				out.Error = ir.Error.Error()
			}
			results = append(results, out)
		}
	}
	refused, skipped := 0, 0
	for _, res := range results {
		switch res.Action {
		case store.ActionRefused:
			refused++
		case store.ActionSkipped:
			skipped++
		}
	}
	if refused == 0 {
		writeJSON(w, http.StatusOK, map[string]any{"results": results})
		return
	}
	msg := fmt.Sprintf("%d of %s refused; the accepted ones were imported (partial=1)", refused, skillCount(len(results)))
	if !opt.Partial {
		msg = fmt.Sprintf("nothing was written: %d of %s refused", refused, skillCount(len(results)))
		if skipped > 0 {
			them, ones := "them", "ones"
			if refused == 1 {
				them = "it"
			}
			if skipped == 1 {
				ones = "one"
			}
			msg += fmt.Sprintf("; fix %s, or send ?partial=1 to import the %d accepted %s", them, skipped, ones)
		}
	}
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"results": results, "message": msg})
}

// skillCount is "1 skill", "2 skills".
func skillCount(n int) string {
	if n == 1 {
		return "1 skill"
	}
	return strconv.Itoa(n) + " skills"
}
