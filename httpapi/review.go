package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/store"
)

// Drafts and review, exact versions per agent, withdrawal and "where
// used" (docs/review.md).

// maxSmallBody bounds the JSON bodies of these routes: a comment
// (service.MaxReviewComment) with room for escaping.
const maxSmallBody = 4*service.MaxReviewComment + 1024

// smallJSON reads an optional JSON object body into v; an empty body
// leaves v as it is.
func smallJSON(w http.ResponseWriter, r *http.Request, v any, what string) bool {
	data, e := readBody(w, r, maxSmallBody, what)
	if e != nil {
		writeErr(w, e)
		return false
	}
	if len(data) == 0 {
		return true
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeErr(w, badRequest("", "the body is not %s: %v", what, err))
		return false
	}
	return true
}

func (a *api) listReviews(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := store.ReviewFilter{State: q.Get("state"), Skill: q.Get("skill")}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 10000 {
			writeErr(w, badRequest("limit", "limit %q: give a number from 1 to 10000", s))
			return
		}
		f.Limit = n
	}
	rs, err := a.svc.Reviews(r.Context(), principal(r), f)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"reviews": rs})
}

func (a *api) getReview(w http.ResponseWriter, r *http.Request) {
	d, err := a.svc.Review(r.Context(), principal(r), r.PathValue("review"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

type decisionRequest struct {
	Comment string `json:"comment"`
}

func (a *api) approveReview(w http.ResponseWriter, r *http.Request) { a.decide(w, r, true) }
func (a *api) rejectReview(w http.ResponseWriter, r *http.Request)  { a.decide(w, r, false) }

func (a *api) decide(w http.ResponseWriter, r *http.Request, approve bool) {
	var req decisionRequest
	if !smallJSON(w, r, &req, `a JSON object {"comment": "..."}`) {
		return
	}
	id := r.PathValue("review")
	var got *store.Review
	var err error
	if approve {
		got, err = a.svc.Approve(r.Context(), principal(r), id, req.Comment)
	} else {
		got, err = a.svc.Reject(r.Context(), principal(r), id, req.Comment)
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, got)
}

// pinRequest is {"version": N | "published" | "latest"}.
type pinRequest struct {
	Version *catalog.VersionPin `json:"version"`
}

func (a *api) setPin(w http.ResponseWriter, r *http.Request) {
	var req pinRequest
	if !smallJSON(w, r, &req, `a JSON object {"version": N | "published" | "latest"}`) {
		return
	}
	if req.Version == nil {
		writeErr(w, badRequest("version", `give "version": a version number, "published" or "latest"`))
		return
	}
	p, err := a.svc.SetPin(r.Context(), principal(r), r.PathValue("id"), r.PathValue("name"), *req.Version)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (a *api) pendingPins(w http.ResponseWriter, r *http.Request) {
	ps, err := a.svc.PendingPins(r.Context(), principal(r))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"pending": ps})
}

type advanceRequest struct {
	Agent string `json:"agent"`
	Skill string `json:"skill"`
}

func (a *api) advancePins(w http.ResponseWriter, r *http.Request) {
	var req advanceRequest
	if !smallJSON(w, r, &req, `a JSON object {"agent": "...", "skill": "..."} (both optional: all pending pins)`) {
		return
	}
	moved, err := a.svc.AdvancePins(r.Context(), principal(r), req.Agent, req.Skill)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"moved": moved})
}

type withdrawRequest struct {
	Withdrawn *bool `json:"withdrawn"`
}

func (a *api) withdrawSkill(w http.ResponseWriter, r *http.Request) {
	var req withdrawRequest
	if !smallJSON(w, r, &req, `a JSON object {"withdrawn": true | false} (default true)`) {
		return
	}
	on := req.Withdrawn == nil || *req.Withdrawn
	name := r.PathValue("name")
	if err := a.svc.Withdraw(r.Context(), principal(r), name, on); err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"name": name, "withdrawn": on})
}

func (a *api) skillUsage(w http.ResponseWriter, r *http.Request) {
	u, err := a.svc.WhereUsed(r.Context(), principal(r), r.PathValue("name"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, u)
}

// sourceDecision is the body of a source's approve or reject.
type sourceDecision struct {
	Revision string `json:"revision"`
	Comment  string `json:"comment"`
}

func (a *api) sourceReviews(w http.ResponseWriter, r *http.Request) {
	list, err := a.svc.SourceReviews(r.Context(), principal(r))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"changes": list})
}

func (a *api) approveSource(w http.ResponseWriter, r *http.Request) {
	var req sourceDecision
	if !smallJSON(w, r, &req, `a JSON object {"revision": "...", "comment": "..."}`) {
		return
	}
	res, err := a.svc.ApproveSource(r.Context(), principal(r), r.PathValue("source"), req.Revision, req.Comment)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (a *api) rejectSource(w http.ResponseWriter, r *http.Request) {
	var req sourceDecision
	if !smallJSON(w, r, &req, `a JSON object {"revision": "...", "comment": "..."}`) {
		return
	}
	id := r.PathValue("source")
	if err := a.svc.RejectSource(r.Context(), principal(r), id, req.Revision, req.Comment); err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "state": "rejected", "note": req.Comment})
}
