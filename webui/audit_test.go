package webui

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/store/sqlstore"
)

// The Audit page: records newest first, 50 a page with an Older link
// keeping the filters; the filters; a bad since named; the chain verified
// on a click; a name with control and bidi characters shown escaped; an
// agent's session refused.
func TestAuditPage(t *testing.T) {
	e := newAuthEnv(t, false)
	ctx := service.WithCaller(context.Background(), service.Caller{Addr: "192.0.2.7", Transport: "ui"})
	open := service.Principal{Open: true}
	st := e.svc.Store().(*sqlstore.Store)
	var many []store.AuditRecord
	for i := range 60 {
		many = append(many, store.AuditRecord{Time: time.Now(), Actor: "bulk", Action: "skill.save", Target: fmt.Sprintf("skill:s%02d", i), Transport: "http"})
	}
	if err := st.AddAuditChain(ctx, many); err != nil {
		t.Fatal(err)
	}
	evil := "eve\x1b]8;;http://x\x07\u202eevil"
	secret, _, err := e.svc.CreateToken(ctx, open, evil, []string{"admin"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.svc.StartSession(ctx, secret); err != nil {
		t.Fatal(err)
	}
	c := e.client(t)
	rows := func(body string) int { return max(0, strings.Count(body, "</tr>")-1) }
	res, body := send(t, c, "GET", e.srv.URL+"/ui/audit", nil)
	if res.StatusCode != 200 || rows(body) != 50 || !strings.Contains(body, `href="/ui/audit?before=13" rel="next"`) || !strings.Contains(body, `aria-current="page">Audit</a>`) {
		t.Fatalf("page 1: %d, %d rows\n%s", res.StatusCode, rows(body), body)
	}
	if strings.ContainsAny(body, "\x1b\x07\u202e") || !strings.Contains(body, `eve\x1b]8;;http://x\x07\u202eevil`) {
		t.Fatalf("the actor's name is not shown escaped:\n%q", body)
	}
	if !strings.Contains(body, "signin") || !strings.Contains(body, "192.0.2.7") || !strings.Contains(body, "<td class=\"hide-narrow\">ui</td>") {
		t.Fatalf("the sign-in record, its client and transport:\n%s", body)
	}
	res, body = send(t, c, "GET", e.srv.URL+"/ui/audit?before=13", nil)
	if res.StatusCode != 200 || rows(body) != 12 || strings.Contains(body, `rel="next"`) || !strings.Contains(body, `href="/ui/audit">Newest</a>`) {
		t.Fatalf("page 2: %d, %d rows\n%s", res.StatusCode, rows(body), body)
	}
	res, body = send(t, c, "GET", e.srv.URL+"/ui/audit?action=signin", nil)
	if res.StatusCode != 200 || rows(body) != 1 {
		t.Fatalf("action filter: %d, %d rows\n%s", res.StatusCode, rows(body), body)
	}
	res, body = send(t, c, "GET", e.srv.URL+"/ui/audit?"+url.Values{"target": {"skill:s07"}, "actor": {"bulk"}, "since": {"1h"}}.Encode(), nil)
	if res.StatusCode != 200 || rows(body) != 1 || !strings.Contains(body, "skill:s07") {
		t.Fatalf("target, actor and since: %d, %d rows\n%s", res.StatusCode, rows(body), body)
	}
	res, body = send(t, c, "GET", e.srv.URL+"/ui/audit?actor=nobody", nil)
	if res.StatusCode != 200 || rows(body) != 0 || !strings.Contains(body, "No audit records match") {
		t.Fatalf("no match: %d\n%s", res.StatusCode, body)
	}
	res, body = send(t, c, "GET", e.srv.URL+"/ui/audit?since=yesterday", nil)
	if res.StatusCode != 400 || !strings.Contains(body, "yesterday") || !strings.Contains(body, `aria-invalid="true"`) {
		t.Fatalf("a bad since: %d\n%s", res.StatusCode, body)
	}
	res, body = send(t, c, "GET", e.srv.URL+"/ui/audit?verify=1", nil)
	if res.StatusCode != 200 || !strings.Contains(body, "The audit trail verifies: 62 records") {
		t.Fatalf("verify: %d\n%s", res.StatusCode, body)
	}
	if _, err := st.DB().Exec(`DELETE FROM audit_log WHERE seq = 30`); err != nil {
		t.Fatal(err)
	}
	res, body = send(t, c, "GET", e.srv.URL+"/ui/audit?verify=1", nil)
	if res.StatusCode != 200 || !strings.Contains(body, "does not verify: record 31: it follows seq 29") {
		t.Fatalf("verify after a deletion: %d\n%s", res.StatusCode, body)
	}

	// An agent's session may not see it.
	agent, _, err := e.svc.CreateToken(ctx, open, "a", []string{"agent:dev"})
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := e.svc.StartSession(ctx, agent)
	if err != nil {
		t.Fatal(err)
	}
	ac := e.client(t)
	u, _ := url.Parse(e.srv.URL)
	ac.Jar.SetCookies(u, []*http.Cookie{{Name: service.SessionCookie, Value: id, Path: "/"}})
	if res, body := send(t, ac, "GET", e.srv.URL+"/ui/audit", nil); res.StatusCode != 403 || strings.Contains(body, "signin") {
		t.Fatalf("an agent: %d\n%s", res.StatusCode, body)
	}
}
