package webui

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

// The review queue (docs/review.md): every pending draft with its diff
// against the published version and its safety findings, approve and
// reject buttons (a form post checked for CSRF, with a comment), and the
// agents whose pins lag the published version, with the action that
// moves them.

type reviewsData struct {
	Reviews []reviewItem
	// Sources are the remote sources' changes awaiting review (a sync
	// that would move a pin records one when review is required).
	Sources []service.SourceReview
	Pending []service.PendingPin
	Done    string // what the last post did
	Err     string
	CSRF    string
}

type reviewItem struct {
	service.ReviewDetail
	Diff    []fileDiff
	DiffErr string
	Same    bool
}

func (u *ui) reviewsPage(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	d := &reviewsData{CSRF: csrfToken(r), Done: r.URL.Query().Get("done")}
	rs, err := u.svc.Reviews(r.Context(), p, store.ReviewFilter{State: store.ReviewPending, Limit: 200})
	if err != nil {
		d.Err = service.AsError(err).Message
	}
	for _, rv := range rs {
		det, err := u.svc.Review(r.Context(), p, rv.ID)
		if err != nil {
			d.Reviews = append(d.Reviews, reviewItem{ReviewDetail: service.ReviewDetail{Review: rv}, DiffErr: service.AsError(err).Message})
			continue
		}
		it := reviewItem{ReviewDetail: *det}
		it.Diff, it.DiffErr = u.reviewDiff(r, rv.Skill, det.Published, rv.Version)
		it.Same = it.DiffErr == "" && len(it.Diff) == 0
		d.Reviews = append(d.Reviews, it)
	}
	if srcs, err := u.svc.SourceReviews(r.Context(), p); err == nil {
		for _, c := range srcs {
			if c.State == "pending" {
				d.Sources = append(d.Sources, c)
			}
		}
	} else if e := service.AsError(err); e.Code != service.CodeNotFound && d.Err == "" {
		d.Err = e.Message // not found: this server has no remote sources
	}
	if d.Pending, err = u.svc.PendingPins(r.Context(), p); err != nil && d.Err == "" {
		d.Err = service.AsError(err).Message
	}
	u.render(w, r, "reviews.html", page{Title: "Review", Active: "reviews", Data: d, Review: true})
}

// reviewDiff is the Versions tab's diff of the published version (none:
// empty) against the draft.
func (u *ui) reviewDiff(r *http.Request, name string, published, draft int) ([]fileDiff, string) {
	p := principal(r)
	a := &skill.Bundle{}
	if published > 0 {
		var err error
		if a, _, err = u.svc.Bundle(r.Context(), p, name, published); err != nil {
			return nil, fmt.Sprintf("version %d: %s", published, service.AsError(err).Message)
		}
	}
	b, _, err := u.svc.Bundle(r.Context(), p, name, draft)
	if err != nil {
		return nil, fmt.Sprintf("version %d: %s", draft, service.AsError(err).Message)
	}
	return diffBundles(a, b), ""
}

func (u *ui) decideReview(w http.ResponseWriter, r *http.Request) {
	if err := u.checkCSRF(r); err != nil {
		u.fail(w, r, http.StatusForbidden, "Request refused", err.Error())
		return
	}
	id, verb := r.PathValue("id"), r.PathValue("verb")
	comment := r.PostFormValue("comment")
	var rv *store.Review
	var err error
	switch verb {
	case "approve":
		rv, err = u.svc.Approve(r.Context(), principal(r), id, comment)
	case "reject":
		rv, err = u.svc.Reject(r.Context(), principal(r), id, comment)
	default:
		u.notFound(w, r)
		return
	}
	if err != nil {
		e := service.AsError(err)
		switch e.Code {
		case service.CodeConflict:
			u.fail(w, r, http.StatusConflict, "Not "+pastOf(verb)+": the skill moved on", e.Message+". Nothing was published: reload the review queue.")
		case service.CodeForbidden:
			u.fail(w, r, http.StatusForbidden, "Not "+pastOf(verb), e.Message)
		default:
			u.failErr(w, r, err)
		}
		return
	}
	done := fmt.Sprintf("%s %s version %d", pastOf(verb), rv.Skill, rv.Version)
	http.Redirect(w, r, "/ui/reviews?done="+url.QueryEscape(done), http.StatusSeeOther)
}

// decideSource approves or rejects a remote source's change awaiting
// review: exactly the revision the page showed.
func (u *ui) decideSource(w http.ResponseWriter, r *http.Request) {
	if err := u.checkCSRF(r); err != nil {
		u.fail(w, r, http.StatusForbidden, "Request refused", err.Error())
		return
	}
	id, verb := r.PathValue("id"), r.PathValue("verb")
	rev, comment := r.PostFormValue("revision"), r.PostFormValue("comment")
	var err error
	switch verb {
	case "approve":
		_, err = u.svc.ApproveSource(r.Context(), principal(r), id, rev, comment)
	case "reject":
		err = u.svc.RejectSource(r.Context(), principal(r), id, rev, comment)
	default:
		u.notFound(w, r)
		return
	}
	if err != nil {
		if e := service.AsError(err); e.Code == service.CodeConflict {
			u.fail(w, r, http.StatusConflict, "Not "+pastOf(verb)+": the source moved on", e.Message+". The pin did not move: reload the review queue.")
			return
		}
		u.failErr(w, r, err)
		return
	}
	http.Redirect(w, r, "/ui/reviews?done="+url.QueryEscape(fmt.Sprintf("%s the change of source %s", pastOf(verb), id)), http.StatusSeeOther)
}

// pastOf is a review verb's past tense, for what the page says was done.
func pastOf(verb string) string {
	if verb == "reject" {
		return "rejected"
	}
	return verb + "d"
}

func (u *ui) advancePins(w http.ResponseWriter, r *http.Request) {
	if err := u.checkCSRF(r); err != nil {
		u.fail(w, r, http.StatusForbidden, "Request refused", err.Error())
		return
	}
	moved, err := u.svc.AdvancePins(r.Context(), principal(r), r.PostFormValue("agent"), r.PostFormValue("skill"))
	if err != nil {
		u.failErr(w, r, err)
		return
	}
	back := r.PostFormValue("back")
	if back != "skill" {
		http.Redirect(w, r, "/ui/reviews?done="+url.QueryEscape(fmt.Sprintf("moved %d pin(s) to the published version", len(moved))), http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/ui/skills/"+url.PathEscape(r.PostFormValue("skill"))+"?tab=agents", http.StatusSeeOther)
}

// pinsData is the Agents tab's pin column of a stored skill.
type pinsData struct {
	Name              string
	Admin             bool
	CSRF              string
	Versions          []int // newest first
	Published, Latest int
	Withdrawn         bool
	// Uses is where each version is used: listed, pinned or loaded
	// lately, by agent (service.WhereUsed).
	Uses []service.VersionUse
}

// pinCellData is one row of the pin column.
type pinCellData struct {
	Pins *pinsData
	Row  agentMode
}

// agentPins fills the Agents tab's pin column for a stored skill: the
// version each agent is served and its pin.
func (u *ui) agentPins(r *http.Request, sp *skillPage, d *agentsData) {
	p := principal(r)
	if sp.Skill.OriginValue().Kind != "store" || !p.Admin() {
		return
	}
	rec, err := u.svc.Get(r.Context(), p, sp.Name)
	if err != nil {
		return
	}
	vs, err := u.svc.Versions(r.Context(), p, sp.Name)
	if err != nil {
		return
	}
	pd := &pinsData{Name: sp.Name, Admin: true, CSRF: csrfToken(r), Published: rec.Published, Latest: rec.Version, Withdrawn: rec.Withdrawn}
	for _, v := range vs {
		pd.Versions = append(pd.Versions, v.Version)
	}
	pins := u.svc.Catalog().Pins()
	for i := range d.Agents {
		a := &d.Agents[i]
		a.Pin = pins[a.Agent][sp.Name].String()
		if l, err := u.svc.Loadout(p, a.Agent); err == nil {
			if e, ok := l.Lookup(sp.Name); ok && e.Skill.OriginValue().Kind == "store" {
				a.Served = e.Skill.OriginValue().Version
			}
		}
	}
	if wu, err := u.svc.WhereUsed(r.Context(), p, sp.Name); err == nil {
		pd.Uses = wu.Uses
	}
	d.Pins = pd
}

func (u *ui) setPinForm(w http.ResponseWriter, r *http.Request) {
	if err := u.checkCSRF(r); err != nil {
		u.fail(w, r, http.StatusForbidden, "Request refused", err.Error())
		return
	}
	name := r.PathValue("name")
	pin, err := catalog.ParseVersionPin(r.PostFormValue("version"))
	if err != nil {
		u.fail(w, r, http.StatusBadRequest, "No such version", "The field version "+err.Error()+".")
		return
	}
	if _, err := u.svc.SetPin(r.Context(), principal(r), r.PostFormValue("agent"), name, pin); err != nil {
		e := service.AsError(err)
		if e.Code == service.CodeConflict {
			u.fail(w, r, http.StatusConflict, "Not pinned", e.Message)
			return
		}
		u.failErr(w, r, err)
		return
	}
	http.Redirect(w, r, "/ui/skills/"+url.PathEscape(name)+"?tab=agents", http.StatusSeeOther)
}
