package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/httpbody"
	"github.com/loadout/loadout/internal/inert"
	"github.com/loadout/loadout/render"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

func (a *api) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, struct {
		Status     string `json:"status"`
		Skills     int    `json:"skills"`
		Generation uint64 `json:"generation"`
		// Ready: what first requests would build is built (GET /readyz).
		Ready bool `json:"ready"`
		// Draining: shutdown has begun (GET /readyz is 503); this
		// liveness check stays 200 until the process exits.
		Draining bool `json:"draining"`
	}{"ok", len(a.svc.Catalog().Global().Names()), a.svc.Generation(), a.ready.Ready(), a.ready.Draining()})
}

type agentView struct {
	ID          string `json:"id"`
	DisplayName string `json:"displayName,omitempty"`
	Description string `json:"description,omitempty"`
	Skills      int    `json:"skills"`
	Format      string `json:"format"`
	// Budget is the budget the agent's prompt is rendered with: the
	// agent's, else the server's default, else render.DefaultBudget; -1
	// for none. Never 0 (which means "the default" in the config).
	Budget int `json:"budget"`
}

// listAgents lists the agents the caller may read (all of them for admin).
func (a *api) listAgents(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	out := []agentView{}
	for _, l := range a.svc.Catalog().Agents() {
		if !p.CanAgent(l.Spec.AgentID) {
			continue
		}
		f := l.Spec.Format
		if f == "" {
			f = render.FormatPi
		}
		out = append(out, agentView{ID: l.Spec.AgentID, DisplayName: l.Spec.DisplayName, Description: l.Spec.Description,
			Skills: len(l.Names()), Format: f, Budget: render.EffectiveBudget(l.Spec.Budget)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": out})
}

func intParam(w http.ResponseWriter, r *http.Request, name string) (int64, bool) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		writeErr(w, badRequest(name, "%s=%q is not an integer", name, s))
		return 0, false
	}
	return n, true
}

func wantsText(r *http.Request) bool {
	acc := r.Header.Get("Accept")
	return strings.Contains(acc, "text/plain") && !strings.Contains(acc, "application/json")
}

func (a *api) agentPrompt(w http.ResponseWriter, r *http.Request) {
	l, err := a.svc.Loadout(principal(r), r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	format := r.URL.Query().Get("format")
	if !render.ValidFormat(format) {
		writeErr(w, badRequest("format", "format %q: use pi, catalog or progressive", format))
		return
	}
	budget, ok := intParam(w, r, "budget")
	if !ok {
		return
	}
	if budget < -1 || budget > 1<<30 {
		writeErr(w, badRequest("budget", "budget %d: use a number of characters, or -1 for none", budget))
		return
	}
	budgetTokens, ok := intParam(w, r, "budgetTokens")
	if !ok {
		return
	}
	if budgetTokens < 0 || budgetTokens > 1<<28 {
		writeErr(w, badRequest("budgetTokens", "budgetTokens %d: use a number of tokens (about 4 characters each), or leave it out", budgetTokens))
		return
	}
	full, ok := reportParam(w, r)
	if !ok {
		return
	}
	// The prompt depends on the loadout (a value replaced, never changed,
	// when its skills change), the options and the usage counts: rendered
	// and encoded once per key (a few milliseconds at thousands of skills).
	text := wantsText(r)
	k := promptKey{l: l, gen: a.svc.Generation(), usage: a.svc.UsageGeneration(), format: format, budget: budget, budgetTokens: budgetTokens, text: text, full: full && !text}
	if body := a.prompts.get(k); body != nil {
		body.Serve(w, r)
		return
	}
	out, rep, diags := a.svc.Prompt(l, catalog.PromptOptions{Format: format, Budget: int(budget), BudgetTokens: int(budgetTokens)})
	var body []byte
	if text {
		body = []byte(out)
	} else {
		var err error
		body, err = marshal(struct {
			Prompt      string             `json:"prompt"`
			Report      promptReport       `json:"report"`
			Diagnostics []skill.Diagnostic `json:"diagnostics"`
		}{out, newPromptReport(&rep, full), orEmpty(diags)})
		if err != nil {
			a.fail(w, r, err)
			return
		}
	}
	b := httpbody.New(body, promptType(text)[0])
	a.prompts.put(k, b)
	b.Serve(w, r)
}

func promptType(text bool) []string {
	if text {
		return ctText
	}
	return ctJSON
}

// MaxPromptCache is how many rendered prompts GET
// /v1/agents/{id}/prompt keeps (one per agent, options and form), and
// MaxPromptCacheBytes how many bytes they may hold (each counted twice,
// for the gzip form it may add); past either, the cache starts afresh.
const (
	MaxPromptCache      = 256
	MaxPromptCacheBytes = 32 << 20
)

// promptKey is everything a prompt answer depends on.
type promptKey struct {
	l                    *catalog.Loadout
	gen, usage           uint64
	format               string
	budget, budgetTokens int64
	text, full           bool
}

// promptCache keeps encoded prompt answers (answerCache).
type promptCache = answerCache[promptKey]

func (k promptKey) versions() (gen, usage uint64) { return k.gen, k.usage }
func (k promptKey) bounds() (entries, bytes int)  { return MaxPromptCache, MaxPromptCacheBytes }
func (k promptKey) keyBytes() int                 { return 0 }

// promptReport is render.Report as the API gives it. By default it
// counts the skills of each tier; ?report=full adds every skill's tier by
// name (promptDetail). The counts are what a platform checks on every
// fetch ("was anything cut?"), and the budget diagnostics beside them name
// up to catalog.MaxNamesInDiagnostic skills of each kind; the names of
// every skill are for whoever investigates, and at thousands of skills
// they were 97% of the answer (300 KB for 4,000 skills at the default
// budget, where the prompt itself is 8 KB).
type promptReport struct {
	Format        string     `json:"format"`
	Budget        int        `json:"budget"`
	BudgetTokens  int        `json:"budgetTokens"`
	Chars         int        `json:"chars"`
	Tokens        int        `json:"tokens"`
	Total         int        `json:"total"`
	Listed        int        `json:"listed"`
	Inlined       int        `json:"inlined"`
	Counts        tierCounts `json:"counts"`
	Plan          planReport `json:"plan"`
	Detail        string     `json:"detail"` // "summary" or "full"
	*promptDetail            // nil (no fields) unless ?report=full
}

// planReport says whether the listing was kept on the plan of an earlier
// render (render.Basis) and what changed since: at most render.MaxChanges
// names each.
type planReport struct {
	Kept    bool     `json:"kept"`
	Replan  string   `json:"replan,omitempty"` // why it was planned afresh
	Changed []string `json:"changed"`
	Removed []string `json:"removed"`
}

// tierCounts counts the listing's skills by tier; the keys are the
// render.Tier values.
type tierCounts struct {
	Full      int `json:"full"`
	Shortened int `json:"shortened"`
	Name      int `json:"name"`
	Grouped   int `json:"grouped"`
	Omitted   int `json:"omitted"`
}

// promptDetail is what ?report=full adds: every listing skill's tier, and
// the names of each tier but full, in listing order.
type promptDetail struct {
	Tiers     map[string]render.Tier `json:"tiers"`
	Shortened []string               `json:"shortened"`
	NameOnly  []string               `json:"nameOnly"`
	Grouped   []string               `json:"grouped"`
	Omitted   []string               `json:"omitted"`
	// Groups are the domains the listing names, with the skills each
	// counts.
	Groups []render.Group `json:"groups"`
}

func newPromptReport(rep *render.Report, full bool) promptReport {
	p := promptReport{Format: rep.Format, Budget: rep.Budget, BudgetTokens: rep.BudgetTokens, Chars: rep.Chars, Tokens: rep.Tokens,
		Total: rep.Total, Listed: rep.Listed, Inlined: rep.Inlined, Detail: "summary",
		Plan: planReport{Kept: rep.Replan == "", Replan: rep.Replan, Changed: orEmpty(rep.Changed), Removed: orEmpty(rep.Removed)}}
	for _, t := range rep.Tiers {
		switch t {
		case render.TierFull:
			p.Counts.Full++
		case render.TierShortened:
			p.Counts.Shortened++
		case render.TierName:
			p.Counts.Name++
		case render.TierGrouped:
			p.Counts.Grouped++
		case render.TierOmitted:
			p.Counts.Omitted++
		}
	}
	if full {
		p.Detail = "full"
		p.promptDetail = &promptDetail{Tiers: rep.TierMap(), Shortened: orEmpty(rep.Shortened),
			NameOnly: orEmpty(rep.NameOnly), Grouped: orEmpty(rep.Grouped), Omitted: orEmpty(rep.Omitted), Groups: orEmpty(rep.Groups)}
	}
	return p
}

// reportParam reads ?report=: summary (the default) or full.
func reportParam(w http.ResponseWriter, r *http.Request) (full, ok bool) {
	switch v := r.URL.Query().Get("report"); v {
	case "", "summary":
		return false, true
	case "full":
		return true, true
	default:
		writeErr(w, badRequest("report", "report=%q: use summary (the default: how many skills of each tier) or full (also every skill's tier, by name)", v))
		return false, false
	}
}

// loadCache keeps the encoded JSON of successful loads. An entry is used
// only when the catalog generation and the rendered text both match, so a
// folder skill edited on disk is never answered from a stale entry; what
// it saves is encoding the envelope (escaping kilobytes of text) on every
// request. Only ok results are kept, and at most MaxLoadCacheBytes of
// encoded bodies (the texts are the catalog's envelopes, shared): past
// it, entries picked at random make room, so a spread load over more
// than fits still finds most of what it asks for, where starting afresh
// would miss everything for a while.
type loadCache struct {
	mu    sync.RWMutex
	gen   uint64 // the newest generation put; older entries are dropped
	m     map[loadKey]*loadEntry
	bytes int
	max   int // MaxLoadCacheBytes; tests set less
}

// MaxLoadCacheBytes bounds the load cache's encoded bodies: 10,000 skills
// of the benchmark tree (with findings) take about 72 MiB for one agent.
const MaxLoadCacheBytes = 128 << 20

type loadKey struct{ agent, name string }

type loadEntry struct {
	gen  uint64
	text string
	body []byte
	// length is the Content-Length header's value, encoded once: a
	// cached load then allocates nothing for its headers (net/http
	// copies the handler's header values when it writes them).
	length []string
}

func (c *loadCache) get(k loadKey, gen uint64, text string) *loadEntry {
	c.mu.RLock()
	e := c.m[k]
	c.mu.RUnlock()
	if e != nil && e.gen == gen && e.text == text {
		return e
	}
	return nil
}

func (c *loadCache) put(k loadKey, gen uint64, text string, body []byte) *loadEntry {
	e := &loadEntry{gen: gen, text: text, body: body, length: []string{strconv.Itoa(len(body))}}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen < c.gen || len(body) > c.max {
		return e
	}
	if gen > c.gen {
		// A reload: skills may have gone, so start afresh.
		c.gen = gen
		clear(c.m)
		c.bytes = 0
	}
	if old := c.m[k]; old != nil {
		delete(c.m, k)
		c.bytes -= len(old.body)
	}
	for victim, ve := range c.m { // map order is random: random victims
		if c.bytes+len(body) <= c.max {
			break
		}
		delete(c.m, victim)
		c.bytes -= len(ve.body)
	}
	c.m[k] = e
	c.bytes += len(body)
	return e
}

// loadStatus maps a load or read status to an HTTP status.
func loadStatus(s string) int {
	switch s {
	case catalog.StatusOK:
		return http.StatusOK
	case catalog.StatusNotFound:
		return http.StatusNotFound
	case catalog.StatusRefused:
		return http.StatusBadRequest
	case catalog.StatusTooLarge:
		return http.StatusRequestEntityTooLarge
	case catalog.StatusChanged:
		return http.StatusConflict
	case catalog.StatusBlocked:
		return http.StatusForbidden
	}
	return http.StatusInternalServerError
}

type loadBody struct {
	Status      string   `json:"status"`
	Name        string   `json:"name"`
	Text        string   `json:"text"`
	Suggestions []string `json:"suggestions"`
}

// agentLoad is load_skill over HTTP: the envelope as JSON, 404 (with the
// closest names) for an unknown skill. It is the hot path.
func (a *api) agentLoad(w http.ResponseWriter, r *http.Request) {
	id, name := r.PathValue("id"), r.PathValue("name")
	gen := a.svc.Generation()
	res, err := a.svc.Load(r.Context(), principal(r), id, name, service.TransportHTTP)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	status := loadStatus(res.Status)
	if res.Status == catalog.StatusOK {
		k := loadKey{id, name}
		e := a.loads.get(k, gen, res.Text)
		if e == nil {
			body, err := marshal(loadBody{res.Status, res.Name, res.Text, []string{}})
			if err != nil {
				a.fail(w, r, err)
				return
			}
			e = a.loads.put(k, gen, res.Text, body)
		}
		h := w.Header()
		h["Content-Type"] = ctJSON
		h["X-Content-Type-Options"] = nosniff
		h["Content-Length"] = e.length
		w.WriteHeader(status)
		w.Write(e.body)
		return
	}
	writeJSON(w, status, loadBody{res.Status, res.Name, res.Text, orEmpty(res.Suggestions)})
}

// agentReadFile is read_skill_file over HTTP: the FileResult as JSON (its
// status mapped to the HTTP status), or with raw=1 the bytes themselves
// (206 with Content-Range for a part of the file). A path the path check
// refuses still goes to the service, which records the refusal as a
// receipt (outcome refused), and is answered as before: 400 refused.
func (a *api) agentReadFile(w http.ResponseWriter, r *http.Request) {
	path := r.PathValue("path")
	if _, err := skill.CleanPath(path); err != nil {
		if _, err := a.svc.ReadFile(r.Context(), principal(r), r.PathValue("id"), r.PathValue("name"), path,
			catalog.ReadOptions{}, service.TransportHTTP); err != nil {
			a.fail(w, r, err)
			return
		}
		writeErr(w, pathError(err))
		return
	}
	off, ok := intParam(w, r, "offset")
	if !ok {
		return
	}
	length, ok := intParam(w, r, "length")
	if !ok {
		return
	}
	raw := false
	if s := r.URL.Query().Get("raw"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			writeErr(w, badRequest("raw", "raw=%q: use 1 or 0", s))
			return
		}
		raw = b
	}
	res, err := a.svc.ReadFile(r.Context(), principal(r), r.PathValue("id"), r.PathValue("name"), path,
		catalog.ReadOptions{Offset: off, Length: length}, service.TransportHTTP)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	status := loadStatus(res.Status)
	if !raw {
		writeJSON(w, status, res)
		return
	}
	if res.Status != catalog.StatusOK {
		writeErr(w, fileError(res))
		return
	}
	h := w.Header()
	h.Set("X-Skill-Size", strconv.FormatInt(res.Size, 10))
	if res.Offset > 0 || res.More {
		end := res.Offset + int64(len(res.Data)) - 1
		if len(res.Data) == 0 {
			end = res.Offset
		}
		h.Set("Content-Range", "bytes "+strconv.FormatInt(res.Offset, 10)+"-"+strconv.FormatInt(end, 10)+"/"+strconv.FormatInt(res.Size, 10))
		status = http.StatusPartialContent
	}
	// The bytes go out under internal/inert's headers (their manifest
	// type is in the JSON form): nothing in a skill runs in this origin.
	inert.Set(h, r, res.Path, res.ContentType, isText(res))
	h.Set("Content-Length", strconv.Itoa(len(res.Data)))
	w.WriteHeader(status)
	w.Write(res.Data)
}

// isText says whether the file read is text: by its manifest, so that
// every range of a file gets the same headers (a range cut inside a
// character is base64 in the JSON form).
func isText(res catalog.FileResult) bool {
	if sk := res.Entry; sk != nil {
		if res.Path == sk.Entry {
			return true
		}
		if f, ok := sk.File(res.Path); ok {
			return !f.Binary
		}
	}
	return res.Encoding == "utf-8"
}

// defaultSearchLimit is the number of hits without a limit parameter, as
// MCP's search_skills.
const defaultSearchLimit = 10

// searchBody is GET /v1/agents/{id}/search's answer. Its "skills" and the
// hits' fields are those of MCP's search_skills result.
type searchBody struct {
	Query  string        `json:"query"`
	Skills []catalog.Hit `json:"skills"`
}

func (a *api) agentSearch(w http.ResponseWriter, r *http.Request) {
	limit, ok := intParam(w, r, "limit")
	if !ok {
		return
	}
	if limit < 0 || limit > 1000 {
		writeErr(w, badRequest("limit", "limit %d: use 1 to 1000", limit))
		return
	}
	q := r.URL.Query().Get("q")
	if strings.TrimSpace(q) == "" {
		writeErr(w, badRequest("q", "q is required: give a few words describing the task, e.g. ?q=pdf+forms"))
		return
	}
	if err := catalog.CheckQuery(q); err != nil {
		writeErr(w, badRequest("q", "q: %v", err))
		return
	}
	if limit == 0 {
		limit = defaultSearchLimit
	}
	// The answer depends on the loadout (a value replaced, never changed,
	// when a skill changes), the catalog's generation, the usage counts,
	// the query and the limit: a repeated search is answered from the
	// encoded answer kept for them (searchCache). The loadout is read
	// here, so the access check is made on every request.
	id := r.PathValue("id")
	gen, usage := a.svc.Generation(), a.svc.UsageGeneration()
	l, err := a.svc.Loadout(principal(r), id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	k := searchKey{l: l, gen: gen, usage: usage, q: q, limit: int(limit)}
	if body := a.searches.get(k); body != nil {
		body.Serve(w, r)
		return
	}
	hits := a.svc.SearchIn(l, q, int(limit)) // the query was checked above
	// The same shape as MCP's search_skills ({"skills": [hits]}), plus the
	// query.
	body, err := marshal(searchBody{Query: q, Skills: orEmpty(hits)})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	b := httpbody.New(body, ctJSON[0])
	a.searches.put(k, b)
	b.Serve(w, r)
}

// MaxSearchCache is how many search answers GET /v1/agents/{id}/search
// keeps (one per agent, query and limit), and MaxSearchCacheBytes how many
// bytes they may hold, queries included (each answer counted twice, for
// the gzip form it may add); past either, the cache starts afresh. A
// search at 10,000 skills costs a few hundred microseconds, its answer
// about 3 KB at the default limit: 4 MiB keeps a thousand of them.
const (
	MaxSearchCache      = 1024
	MaxSearchCacheBytes = 4 << 20
)

// searchKey is everything a search answer depends on.
type searchKey struct {
	l          *catalog.Loadout
	gen, usage uint64
	q          string
	limit      int
}

// searchCache keeps encoded search answers (answerCache).
type searchCache = answerCache[searchKey]

func (k searchKey) versions() (gen, usage uint64) { return k.gen, k.usage }
func (k searchKey) bounds() (entries, bytes int)  { return MaxSearchCache, MaxSearchCacheBytes }
func (k searchKey) keyBytes() int                 { return len(k.q) }

// answerKey is the key of an answerCache: everything an answer depends
// on, the catalog and usage generations it was made at among them, and
// the bounds of the cache it goes in.
type answerKey interface {
	comparable
	versions() (gen, usage uint64)
	bounds() (entries, bytes int)
	keyBytes() int // what the key itself holds, counted against the bytes
}

// answerCache keeps encoded answers (prompts, searches) of one catalog
// generation and one usage generation. A newer generation drops every
// answer kept, so no old loadout stays referenced and a write's skill is
// in the next answer; an answer made at an older one (a request that read
// the generations before a change) is not kept. At most the key's bounds
// of entries and bytes (the key's bytes, and each answer twice, for the
// gzip form it may add): past either it starts afresh, and an answer over
// the byte bound by itself is never kept.
type answerCache[K answerKey] struct {
	mu         sync.RWMutex
	gen, usage uint64
	m          map[K]*httpbody.Body
	bytes      int
}

func (c *answerCache[K]) get(k K) *httpbody.Body {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[k]
}

func (c *answerCache[K]) put(k K, body *httpbody.Body) {
	maxLen, maxBytes := k.bounds()
	n := k.keyBytes() + 2*len(body.Bytes())
	if n > maxBytes {
		return
	}
	gen, usage := k.versions()
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen < c.gen || usage < c.usage {
		return
	}
	if c.m == nil || gen > c.gen || usage > c.usage || len(c.m) >= maxLen || c.bytes+n > maxBytes {
		c.gen, c.usage, c.m, c.bytes = gen, usage, map[K]*httpbody.Body{}, 0
	}
	if _, ok := c.m[k]; ok {
		return
	}
	c.m[k] = body
	c.bytes += n
}

func (a *api) diagnostics(w http.ResponseWriter, r *http.Request) {
	if _, ok := a.global(w, r); !ok {
		return
	}
	// The report is kept by the catalog; its JSON is encoded once here.
	rep := a.svc.Report(r.Context())
	if name := r.URL.Query().Get("skill"); name != "" {
		// One skill's: small, made per request (with its ETag, as the
		// whole list).
		body, err := marshal(map[string]any{"diagnostics": orEmpty(rep.Of(name)), "counts": tallyJSON(rep.Skill(name))})
		if err != nil {
			a.fail(w, r, err)
			return
		}
		httpbody.New(body, ctJSON[0]).Serve(w, r)
		return
	}
	// A page at a time (diagpage.go), each page encoded once per report.
	e, err := a.diagEntry(rep)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	offset, limit, ok := diagParams(w, r, e)
	if !ok {
		return
	}
	b, next, err := e.page(offset, limit)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if next > 0 {
		w.Header().Set("Link", "</v1/diagnostics?limit="+strconv.Itoa(limit)+"&page="+e.cursor(next)+`>; rel="next"`)
	}
	b.Serve(w, r)
}

// tallyJSON is a tally as GET /v1/diagnostics says it; problems is the
// count every page shows (catalog.Tally.Problems).
func tallyJSON(t catalog.Tally) map[string]int {
	return map[string]int{"errors": t.Errors, "warnings": t.Warnings, "infos": t.Infos, "problems": t.Problems()}
}

func (a *api) reload(w http.ResponseWriter, r *http.Request) {
	if _, ok := a.global(w, r); !ok {
		return
	}
	start := time.Now()
	if err := a.svc.Reload(r.Context(), "POST /v1/reload"); err != nil {
		// The config file does not load: the running one is kept.
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"generation": a.svc.Generation(),
		"skills":     len(a.svc.Catalog().Global().Names()),
		"took":       time.Since(start).Round(time.Microsecond).String(),
	})
}

func (a *api) sources(w http.ResponseWriter, r *http.Request) {
	list, err := a.svc.Sources(r.Context(), principal(r))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"sources": list})
}

func (a *api) syncSource(w http.ResponseWriter, r *http.Request) {
	res, err := a.svc.SyncSources(r.Context(), principal(r), r.PathValue("source"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res[0])
}

// MaxReceiptsAge is the longest GET /v1/receipts answers from its cache:
// an answer is kept while this instance records no receipt, for at most
// this long (receipts other instances write to a shared store, and a
// since given as a duration, show within it).
const MaxReceiptsAge = time.Second

// receiptsEntry is the last answer of GET /v1/receipts.
type receiptsEntry struct {
	query string
	added uint64
	at    time.Time
	body  []byte
}

func (a *api) receipts(w http.ResponseWriter, r *http.Request) {
	if p := principal(r); !p.Allows(service.RoleViewer, "", nil) {
		writeErr(w, service.NeedsRole(p, service.RoleViewer, ""))
		return
	}
	added := a.svc.ReceiptsAdded()
	if e := a.rcpts.Load(); e != nil && e.query == r.URL.RawQuery && e.added == added && time.Since(e.at) < MaxReceiptsAge {
		writeRaw(w, http.StatusOK, ctJSON, e.body)
		return
	}
	q := r.URL.Query()
	rq := store.ReceiptQuery{Agent: q.Get("agent"), Skill: q.Get("skill")}
	if s := q.Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			d, derr := time.ParseDuration(s)
			if derr != nil || d < 0 {
				writeErr(w, badRequest("since", "since=%q: give an RFC 3339 time (2026-01-02T15:04:05Z) or a duration back from now (1h)", s))
				return
			}
			t = time.Now().Add(-d)
		}
		rq.Since = t
	}
	limit, ok := intParam(w, r, "limit")
	if !ok {
		return
	}
	if limit < 0 || limit > 10_000 {
		writeErr(w, badRequest("limit", "limit %d: use 1 to 10000", limit))
		return
	}
	rq.Limit = int(limit)
	at := time.Now()
	rs, err := a.svc.Receipts(r.Context(), principal(r), rq)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	body, err := marshal(map[string]any{"receipts": orEmpty(rs)})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.rcpts.Store(&receiptsEntry{query: r.URL.RawQuery, added: added, at: at, body: body})
	writeRaw(w, http.StatusOK, ctJSON, body)
}

func (a *api) openAPI(w http.ResponseWriter, r *http.Request) {
	a.openapi.Serve(w, r)
}
