package webui

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/loadout/loadout/store"
)

// The Audit page (admin only): the audit trail, newest first, filtered by
// actor, action, target and time, a page at a time (each page starts
// below the last seq of the one before), and whether the chain verifies
// when asked (a walk of the whole trail, so only on a click).

// auditPerPage is how many records a page shows.
const auditPerPage = 50

type auditRow struct {
	store.AuditRecord
	When                    string
	BeforeShort, AfterShort string
}

// short is a digest's first 12 characters, its full text in the title.
func short(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}

type auditData struct {
	Actor, Action, Target, Since string
	Before                       int64
	Rows                         []auditRow
	Next, Newest                 string
	Error, Field                 string
	Verify                       *store.AuditVerify
	VerifyTook                   string
}

func (u *ui) auditPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := &auditData{Actor: strings.TrimSpace(q.Get("actor")), Action: strings.TrimSpace(q.Get("action")),
		Target: strings.TrimSpace(q.Get("target")), Since: strings.TrimSpace(q.Get("since"))}
	status := http.StatusOK
	since, err := parseSince(d.Since, time.Now())
	if err != nil {
		d.Error, d.Field = err.Error(), "since"
	}
	if s := q.Get("before"); s != "" && d.Error == "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			d.Error, d.Field = "This page of the list does not exist: start again from the newest records.", "before"
		}
		d.Before = n
	}
	if q.Get("verify") != "" && d.Error == "" {
		start := time.Now()
		v, err := u.svc.VerifyAudit(r.Context(), principal(r))
		if err != nil {
			u.failErr(w, r, err)
			return
		}
		d.Verify, d.VerifyTook = &v, time.Since(start).Round(time.Millisecond).String()
		if d.VerifyTook == "0s" {
			d.VerifyTook = "under 1ms"
		}
	}
	if d.Error != "" {
		status = http.StatusBadRequest
	} else {
		rs, err := u.svc.Audit(r.Context(), principal(r), store.AuditQuery{Actor: d.Actor, Action: d.Action, Target: d.Target,
			Since: since, Before: d.Before, Limit: auditPerPage + 1})
		if err != nil {
			u.failErr(w, r, err)
			return
		}
		more := len(rs) > auditPerPage
		rs = rs[:min(len(rs), auditPerPage)]
		for _, rc := range rs {
			d.Rows = append(d.Rows, auditRow{AuditRecord: rc, When: rc.Time.UTC().Format("2006-01-02 15:04:05"),
				BeforeShort: short(rc.Before), AfterShort: short(rc.After)})
		}
		link := func(before int64) string {
			v := url.Values{}
			for k, val := range map[string]string{"actor": d.Actor, "action": d.Action, "target": d.Target, "since": d.Since} {
				if val != "" {
					v.Set(k, val)
				}
			}
			if before > 0 {
				v.Set("before", strconv.FormatInt(before, 10))
			}
			if len(v) == 0 {
				return Prefix + "audit"
			}
			return Prefix + "audit?" + v.Encode()
		}
		if more {
			d.Next = link(rs[len(rs)-1].Seq)
		}
		if d.Before > 0 {
			d.Newest = link(0)
		}
	}
	if status != http.StatusOK {
		w = &statusWriter{ResponseWriter: w, status: status}
	}
	u.render(w, r, "audit.html", page{Title: "Audit", Active: "tokens", Data: d})
}
