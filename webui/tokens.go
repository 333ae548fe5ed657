package webui

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/store"
)

// The Tokens and receipts pages (admin only): the tokens, creating one
// (its secret shown once) and revoking one after a confirmation; the
// receipts, filtered by agent, skill, time and outcome, a page at a time.

// Receipt browsing bounds.
const (
	// receiptsPerPage is how many receipts a page shows.
	receiptsPerPage = 50
	// receiptScan is the most receipts one page view reads from the store
	// (the store's own cap): pages reach the newest receiptScan receipts
	// matching the agent, skill and time filters; the outcome filter is
	// applied to those.
	receiptScan = 10_000
)

type tokenRow struct {
	store.Token
	Created, LastUsed string
	Self              bool   // the token of the caller's session
	Role              string // its highest role, "" for an agent or link token
}

type tokensData struct {
	Tokens  []tokenRow
	Scopes  []string // what the create form offers
	Name    string   // the create form's values, kept on an error
	Scope   string
	Limit   string // a role's limit: a name glob or tag=TAG
	Error   string // the create form's refusal
	Field   string // the field it is about: name, scope or limit
	Created *createdToken
	Revoked string       // the name of a token just revoked
	Confirm *store.Token // the revoke confirmation
	// ConfirmSelf: the token to revoke is this session's own.
	ConfirmSelf bool
	Store       bool // the server has a token store
}

type createdToken struct {
	Secret string
	Token  store.Token
}

// scopeChoices are the scopes the create form offers: the roles, most
// first, the metrics scope (a Prometheus server's token) and each
// configured agent's.
func (u *ui) scopeChoices() []string {
	out := []string{service.RoleAdmin, service.RoleReviewer, service.RoleAuthor, service.RoleViewer, store.ScopeMetrics}
	for _, id := range u.svc.Catalog().AgentIDs() {
		out = append(out, "agent:"+id)
	}
	return out
}

func when(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// tokensData loads the token list into d.
func (u *ui) loadTokens(r *http.Request, d *tokensData) error {
	p := principal(r)
	toks, err := u.svc.Tokens(r.Context(), p)
	if err != nil {
		return err
	}
	d.Store = u.svc.Store() != nil
	d.Scopes = u.scopeChoices()
	d.Tokens = d.Tokens[:0]
	for _, t := range toks {
		row := tokenRow{Token: t, Created: when(t.CreatedAt), LastUsed: "never", Self: t.ID == p.TokenID && p.TokenID != "",
			Role: service.Principal{Scopes: t.Scopes}.Role()}
		if t.LastUsed != nil {
			row.LastUsed = when(*t.LastUsed) + " (" + ago(*t.LastUsed) + ")"
		}
		d.Tokens = append(d.Tokens, row)
	}
	return nil
}

func (u *ui) tokensPage(w http.ResponseWriter, r *http.Request) {
	d := &tokensData{Scope: "admin", Revoked: r.URL.Query().Get("revoked")}
	if err := u.loadTokens(r, d); err != nil {
		u.failErr(w, r, err)
		return
	}
	u.render(w, r, "tokens.html", page{Title: "Tokens", Active: "tokens", Data: d})
}

func (u *ui) createToken(w http.ResponseWriter, r *http.Request) {
	d := &tokensData{Name: strings.TrimSpace(r.PostFormValue("name")), Scope: r.PostFormValue("scope"), Limit: strings.TrimSpace(r.PostFormValue("limit"))}
	if err := u.loadTokens(r, d); err != nil {
		u.failErr(w, r, err)
		return
	}
	status := http.StatusUnprocessableEntity
	switch {
	case d.Name == "":
		d.Error, d.Field = "Name: give the token a name that says who or what uses it (like ci-deploy or alice).", "name"
	case len(d.Name) > 100:
		d.Error, d.Field = "Name: at most 100 characters.", "name"
	case !slices.Contains(d.Scopes, d.Scope):
		d.Error, d.Field = fmt.Sprintf("Scope: %q is not one of this server's scopes: choose a role (admin, reviewer, author, viewer), metrics, or the agent:ID of a configured agent.", d.Scope), "scope"
	case d.Limit != "" && !slices.Contains(store.Roles, d.Scope):
		d.Error, d.Field = fmt.Sprintf("Limit: only a role can be limited; %s is not a role. Clear the limit, or choose a role.", d.Scope), "limit"
	default:
		scopes := []string{d.Scope}
		if d.Limit != "" {
			// tag=TAG or a name glob; the one scope parser checks it.
			var globs, tags []string
			if t, ok := strings.CutPrefix(d.Limit, "tag="); ok {
				tags = []string{t}
			} else {
				globs = []string{d.Limit}
			}
			var err error
			if scopes, err = service.RoleScopes(d.Scope, globs, tags); err != nil {
				d.Error, d.Field = "Limit: "+service.AsError(err).Message, "limit"
				break
			}
		}
		secret, tok, err := u.svc.CreateToken(r.Context(), principal(r), d.Name, scopes)
		if err != nil {
			e := service.AsError(err)
			if e.Code == service.CodeInternal {
				u.log.Error("ui: creating a token failed", "err", e.Error())
			}
			d.Error, status = "The token was not created: "+e.Message, http.StatusConflict
			if e.Code == service.CodeInvalid || e.Field != "" {
				d.Field = e.Field
			}
			break
		}
		d.Created = &createdToken{Secret: secret, Token: tok}
		d.Name, d.Scope, d.Limit, status = "", "admin", "", http.StatusOK
		if err := u.loadTokens(r, d); err != nil {
			u.log.Warn("ui: listing tokens after creating one", "err", err)
		}
	}
	if status != http.StatusOK {
		w = &statusWriter{ResponseWriter: w, status: status}
	}
	u.render(w, r, "tokens.html", page{Title: "Tokens", Active: "tokens", Data: d})
}

// findToken returns the live token with id, or writes a page saying
// there is none.
func (u *ui) findToken(w http.ResponseWriter, r *http.Request) (*store.Token, bool) {
	id := r.PathValue("id")
	toks, err := u.svc.Tokens(r.Context(), principal(r))
	if err != nil {
		u.failErr(w, r, err)
		return nil, false
	}
	for _, t := range toks {
		if t.ID == id {
			return &t, true
		}
	}
	u.fail(w, r, http.StatusNotFound, "No such token", "There is no live token with the id "+id+" (it may have been revoked already): see the tokens list.")
	return nil, false
}

func (u *ui) confirmRevoke(w http.ResponseWriter, r *http.Request) {
	t, ok := u.findToken(w, r)
	if !ok {
		return
	}
	d := &tokensData{Confirm: t, ConfirmSelf: t.ID == principal(r).TokenID}
	u.render(w, r, "tokens.html", page{Title: "Revoke " + t.Name, Active: "tokens", Data: d})
}

func (u *ui) revokeToken(w http.ResponseWriter, r *http.Request) {
	t, ok := u.findToken(w, r)
	if !ok {
		return
	}
	if err := u.svc.RevokeToken(r.Context(), principal(r), t.ID); err != nil {
		u.failErr(w, r, err)
		return
	}
	http.Redirect(w, r, Prefix+"tokens?revoked="+url.QueryEscape(t.Name), http.StatusSeeOther)
}

// The receipts page.

type receiptsData struct {
	Agents   []string
	Outcomes []string
	// The filters as given.
	Agent, Skill, Since, Outcome string
	Error, Field                 string
	Rows                         []receiptRow
	Page                         int
	From, To                     int // 1-based positions shown
	Prev, Next                   string
	// Capped: the filters matched at least receiptScan receipts, of
	// which only the newest are browsed.
	Capped bool
}

type receiptRow struct {
	store.Receipt
	When string
}

var receiptOutcomes = []string{"ok", "not_found", "refused", "too_large", "blocked", "error"}

// parseSince reads the since filter: a duration back from now (90m, 24h,
// 7d) or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if days, err := strconv.Atoi(n); err == nil && days >= 0 {
			return now.Add(-time.Duration(days) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("Since: %q is neither a duration back from now (90m, 24h, 7d) nor a time like 2026-01-02T15:04:05Z", s)
}

func (u *ui) receiptsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := &receiptsData{Agents: u.svc.Catalog().AgentIDs(), Outcomes: receiptOutcomes,
		Agent: q.Get("agent"), Skill: strings.TrimSpace(q.Get("skill")), Since: q.Get("since"), Outcome: q.Get("outcome")}
	d.Page, _ = strconv.Atoi(q.Get("page"))
	d.Page = max(d.Page, 1)
	status := http.StatusOK
	since, err := parseSince(d.Since, time.Now())
	switch {
	case err != nil:
		d.Error, d.Field = err.Error(), "since"
	case d.Outcome != "" && !slices.Contains(receiptOutcomes, d.Outcome):
		d.Error, d.Field = fmt.Sprintf("Outcome: %q is not one of %s.", d.Outcome, strings.Join(receiptOutcomes, ", ")), "outcome"
	}
	if d.Error != "" {
		status = http.StatusBadRequest
	} else {
		end := d.Page * receiptsPerPage
		limit := receiptScan
		if d.Outcome == "" {
			limit = min(receiptScan, end+1)
		}
		rs, err := u.svc.Receipts(r.Context(), principal(r), store.ReceiptQuery{Agent: d.Agent, Skill: d.Skill, Since: since, Limit: limit})
		if err != nil {
			u.failErr(w, r, err)
			return
		}
		d.Capped = len(rs) >= receiptScan
		if d.Outcome != "" {
			rs = slices.DeleteFunc(rs, func(rc store.Receipt) bool { return rc.Outcome != d.Outcome })
		}
		start := end - receiptsPerPage
		for _, rc := range rs[min(start, len(rs)):min(end, len(rs))] {
			d.Rows = append(d.Rows, receiptRow{Receipt: rc, When: rc.Time.UTC().Format("2006-01-02 15:04:05")})
		}
		d.From, d.To = start+1, start+len(d.Rows)
		link := func(page int) string {
			v := url.Values{}
			for k, val := range map[string]string{"agent": d.Agent, "skill": d.Skill, "since": d.Since, "outcome": d.Outcome} {
				if val != "" {
					v.Set(k, val)
				}
			}
			if page > 1 {
				v.Set("page", strconv.Itoa(page))
			}
			if len(v) == 0 {
				return Prefix + "receipts"
			}
			return Prefix + "receipts?" + v.Encode()
		}
		if d.Page > 1 {
			d.Prev = link(d.Page - 1)
		}
		if len(rs) > end {
			d.Next = link(d.Page + 1)
		}
	}
	if status != http.StatusOK {
		w = &statusWriter{ResponseWriter: w, status: status}
	}
	u.render(w, r, "receipts.html", page{Title: "Receipts", Active: "tokens", Data: d})
}
