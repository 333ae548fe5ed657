package httpapi

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/store"
)

// The audit trail's routes: a page of records (newest first, filtered),
// a verification of the whole chain, and an export as JSON lines.

// Audit pages: the default and the largest limit.
const (
	DefaultAuditLimit = 100
	MaxAuditLimit     = 1000
)

// auditQuery reads the filters and the page of GET /v1/audit.
func auditQuery(r *http.Request) (store.AuditQuery, *service.Error) {
	q := r.URL.Query()
	aq := store.AuditQuery{Actor: q.Get("actor"), Token: q.Get("token"), Action: q.Get("action"), Target: q.Get("target"), Limit: DefaultAuditLimit}
	if s := q.Get("since"); s != "" {
		t, err := sinceParam(s, time.Now())
		if err != nil {
			return aq, badRequest("since", "since=%q: give an RFC 3339 time (2026-01-02T15:04:05Z) or a duration back from now (1h)", s)
		}
		aq.Since = t
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return aq, badRequest("limit", "limit=%q: give 1 to %d", s, MaxAuditLimit)
		}
		aq.Limit = min(n, MaxAuditLimit)
	}
	if s := q.Get("page"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			return aq, badRequest("page", "page=%q is not a page of this list: give the nextPage of the previous answer, or leave it out for the first page", s)
		}
		aq.Before = n
	}
	return aq, nil
}

// sinceParam reads a since filter: an RFC 3339 time, or a duration back
// from now (1h, 72h).
func sinceParam(s string, now time.Time) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err == nil {
		return t, nil
	}
	d, derr := time.ParseDuration(s)
	if derr != nil || d < 0 {
		return time.Time{}, err
	}
	return now.Add(-d), nil
}

func (a *api) auditList(w http.ResponseWriter, r *http.Request) {
	aq, e := auditQuery(r)
	if e != nil {
		writeErr(w, e)
		return
	}
	limit := aq.Limit
	aq.Limit++ // one more, to know whether there is a next page
	rs, err := a.svc.Audit(r.Context(), principal(r), aq)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	body := map[string]any{"records": rs, "limit": limit, "hasMore": false}
	if len(rs) > limit {
		rs = rs[:limit]
		next := strconv.FormatInt(rs[limit-1].Seq, 10)
		body["records"], body["hasMore"], body["nextPage"] = rs, true, next
		v := r.URL.Query()
		v.Set("page", next)
		v.Set("limit", strconv.Itoa(limit))
		w.Header().Set("Link", "</v1/audit?"+v.Encode()+`>; rel="next"`)
	}
	writeJSON(w, http.StatusOK, body)
}

func (a *api) auditVerify(w http.ResponseWriter, r *http.Request) {
	v, err := a.svc.VerifyAudit(r.Context(), principal(r))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// auditExport streams every record as one JSON line, oldest first. The
// status is sent before the first record, so an error after it ends the
// stream with a last line {"error": …} instead.
func (a *api) auditExport(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	if !p.Admin() {
		writeErr(w, &service.Error{Code: service.CodeForbidden, Message: msgNeedsAdmin})
		return
	}
	h := w.Header()
	h["Content-Type"] = []string{"application/jsonl"}
	h["X-Content-Type-Options"] = nosniff
	h.Set("Content-Disposition", `attachment; filename="audit.jsonl"`)
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	started := false
	err := a.svc.ExportAudit(r.Context(), p, func(rec store.AuditRecord) error {
		if !started {
			w.WriteHeader(http.StatusOK)
			started = true
		}
		return enc.Encode(rec)
	})
	if err != nil && !started {
		delete(h, "Content-Disposition")
		a.fail(w, r, err)
		return
	}
	if !started {
		w.WriteHeader(http.StatusOK)
	}
	if err != nil {
		e := service.AsError(err)
		a.logger(r).Error("audit export failed", "err", e.Error())
		enc.Encode(map[string]any{"error": map[string]string{"code": string(service.CodeInternal), "message": "the export stopped: the server log says why"}})
	}
	bw.Flush()
}
