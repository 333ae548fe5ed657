package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

// The audit routes: a write through the API is one record with the
// token's name and id, the role, the client's address and transport
// http, and the skill's digests; the list pages newest first with a Link;
// verify; export streams JSON lines; none of it for an agent's token.
func TestAuditRoutes(t *testing.T) {
	e := newEnv(t, baseFiles)
	want(t, e.do(t, "POST", "/v1/skills", e.admin, doc(t, "gamma", "G.", "g", skill.BundleFile{Path: "notes.md", Data: []byte("notes")})), 201)
	want(t, e.do(t, "PUT", "/v1/skills/gamma/files/notes.md", e.admin, []byte("more"), "If-Match", `"v1"`, "Content-Type", "application/octet-stream"), 200)
	// A refused write (a stale version) records nothing.
	wantErr(t, e.do(t, "PUT", "/v1/skills/gamma/files/notes.md", e.admin, []byte("stale"), "If-Match", `"v1"`, "Content-Type", "application/octet-stream"), 409, "conflict")
	want(t, e.do(t, "DELETE", "/v1/skills/gamma", e.admin, nil), 204)
	want(t, e.do(t, "POST", "/v1/reload", e.admin, nil), 200)

	r := e.do(t, "GET", "/v1/audit?limit=2", e.admin, nil)
	want(t, r, 200)
	var page struct {
		Records  []store.AuditRecord
		Limit    int
		HasMore  bool
		NextPage string
	}
	if err := json.Unmarshal(r.body, &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Records) != 2 || !page.HasMore || page.NextPage != "3" || page.Records[0].Action != "config.reload" || page.Records[1].Action != "skill.delete" {
		t.Fatalf("page 1: %s", r.body)
	}
	if l := r.h.Get("Link"); l != `</v1/audit?limit=2&page=3>; rel="next"` {
		t.Errorf("Link: %q", l)
	}
	del := page.Records[1]
	if del.Actor != "admin" || del.ActorToken == "" || del.Role != "admin" || del.Transport != "http" || del.Client != "127.0.0.1" || del.Before == "" || del.After != "" || del.Target != "skill:gamma" {
		t.Errorf("the delete's record: %+v", del)
	}
	r = e.do(t, "GET", "/v1/audit?page=3", e.admin, nil)
	page.Records = nil // json.Unmarshal would keep the fields a record leaves out
	json.Unmarshal(r.body, &page)
	if len(page.Records) != 2 || page.HasMore || page.Records[0].Action != "skill.file.put" || page.Records[1].Action != "skill.save" {
		t.Fatalf("page 2: %s", r.body)
	}
	put, save := page.Records[0], page.Records[1]
	if save.Before != "" || save.After == "" || put.Before != save.After || put.After == put.Before || put.Detail != "notes.md" || del.Before != put.After {
		t.Errorf("the digests do not chain: save %+v put %+v del %+v", save, put, del)
	}
	r = e.do(t, "GET", "/v1/audit?action=skill.save&target=skill:gamma&since=1h&actor=admin", e.admin, nil)
	page.Records = nil
	json.Unmarshal(r.body, &page)
	if len(page.Records) != 1 || page.Records[0].Seq != 1 {
		t.Fatalf("filters: %s", r.body)
	}
	for _, q := range []string{"since=yesterday", "limit=0", "limit=x", "page=-1"} {
		if r := e.do(t, "GET", "/v1/audit?"+q, e.admin, nil); r.code != 400 {
			t.Errorf("%s: %d %s", q, r.code, r.body)
		}
	}

	r = e.do(t, "GET", "/v1/audit/verify", e.admin, nil)
	var v store.AuditVerify
	if err := json.Unmarshal(r.body, &v); err != nil || !v.OK || v.Records != 4 || v.Head == "" {
		t.Fatalf("verify: %s", r.body)
	}

	r = e.do(t, "GET", "/v1/audit/export", e.admin, nil)
	if r.code != 200 || r.h.Get("Content-Type") != "application/jsonl" {
		t.Fatalf("export: %d %v", r.code, r.h)
	}
	sc := bufio.NewScanner(bytes.NewReader(r.body))
	n := 0
	prev := ""
	for sc.Scan() {
		var rec store.AuditRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		n++
		if rec.Seq != int64(n) || rec.PrevHash != prev || rec.Hash != store.AuditHash(rec) {
			t.Fatalf("line %d does not chain: %+v", n, rec)
		}
		prev = rec.Hash
	}
	if n != 4 {
		t.Fatalf("export: %d lines:\n%s", n, r.body)
	}

	for _, p := range []string{"/v1/audit", "/v1/audit/verify", "/v1/audit/export"} {
		if r := e.do(t, "GET", p, e.coder, nil); r.code != 403 || strings.Contains(string(r.body), "skill:gamma") {
			t.Errorf("an agent's token on %s: %d %s", p, r.code, r.body)
		}
	}
}

// A write through the API by the UI's session (its editor) is recorded
// with transport ui.
func TestAuditSessionTransport(t *testing.T) {
	e := newEnv(t, baseFiles)
	id, csrf, err := e.svc.StartSession(context.Background(), e.admin)
	if err != nil {
		t.Fatal(err)
	}
	r := e.do(t, "POST", "/v1/skills", "", doc(t, "delta", "D.", "d"), "Cookie", service.SessionCookie+"="+id, service.CSRFHeader, csrf)
	want(t, r, 201)
	rs, err := e.svc.Audit(context.Background(), service.Principal{Open: true}, store.AuditQuery{Action: "skill.save"})
	if err != nil || len(rs) != 1 || rs[0].Transport != "ui" || rs[0].Actor != "admin" || rs[0].Client != "127.0.0.1" {
		t.Fatalf("the record: %+v %v", rs, err)
	}
}
