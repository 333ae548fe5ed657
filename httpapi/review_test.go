package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/httpapi"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
)

// reviewEnv is a server with review required: e.admin is the author, and
// e.other a second admin token (the reviewer); e.coder reads agent coder.
func reviewEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cat, err := catalog.New(ctx, []catalog.AgentSpec{
		{AgentID: "coder", Skills: []catalog.SourceSpec{{Store: true}}},
		{AgentID: "pinned", Skills: []catalog.SourceSpec{{Store: true}}},
	}, catalog.Options{Store: store.NewProvider(st), Pins: service.StorePins(st)})
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(cat, service.Options{Store: st, Server: st, RequireTokens: true, Logger: quiet, Review: service.ReviewOptions{Required: true}})
	t.Cleanup(func() { svc.Close() })
	e := &env{t: t, svc: svc, st: st}
	mk := func(name string, scopes ...string) string {
		secret, _, err := st.CreateToken(ctx, name, scopes)
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	e.admin, e.other, e.coder = mk("author", "admin"), mk("reviewer", "admin"), mk("coder", "agent:coder")
	e.h = httpapi.Auth(svc, httpapi.New(svc, httpapi.Options{Logger: quiet}))
	e.srv = httptest.NewServer(e.h)
	t.Cleanup(e.srv.Close)
	return e
}

// loaded is the body agent coder loads for name, or "" when it cannot.
func (e *env) loaded(t *testing.T, agent, name string) string {
	t.Helper()
	r := e.do(t, "GET", "/v1/agents/"+agent+"/skills/"+name, e.admin, nil)
	if r.code != 200 {
		return ""
	}
	return string(r.body)
}

func (e *env) pendingReview(t *testing.T) string {
	t.Helper()
	r := e.do(t, "GET", "/v1/reviews?state=pending", e.other, nil)
	want(t, r, 200)
	var out struct{ Reviews []store.Review }
	if err := json.Unmarshal(r.body, &out); err != nil || len(out.Reviews) == 0 {
		t.Fatalf("pending reviews: %s %v", r.body, err)
	}
	return out.Reviews[0].ID
}

func TestReviewAPI(t *testing.T) {
	e := reviewEnv(t)
	want(t, e.do(t, "POST", "/v1/skills", e.admin, doc(t, "gamma", "G.", "Gamma one.")), 201)
	if got := e.loaded(t, "coder", "gamma"); got != "" {
		t.Fatalf("an unapproved skill loads: %s", got)
	}
	id := e.pendingReview(t)
	// The author may not approve their own draft.
	wantErr(t, e.do(t, "POST", "/v1/reviews/"+id+"/approve", e.admin, []byte(`{"comment":"mine"}`), "Content-Type", "application/json"), 403, "forbidden")
	// An agent token may not either (the route's scope).
	wantErr(t, e.do(t, "POST", "/v1/reviews/"+id+"/approve", e.coder, nil), 403, "forbidden")
	// A body of the wrong shape is refused by name.
	wantErr(t, e.do(t, "POST", "/v1/reviews/"+id+"/approve", e.other, []byte(`{"coment":"x"}`), "Content-Type", "application/json"), 400, "bad_request")
	want(t, e.do(t, "POST", "/v1/reviews/"+id+"/approve", e.other, []byte(`{"comment":"fine"}`), "Content-Type", "application/json"), 200)
	if got := e.loaded(t, "coder", "gamma"); !strings.Contains(got, "Gamma one.") {
		t.Fatalf("after approval: %s", got)
	}
	// Pin agent "pinned" to version 1, then edit and approve version 2.
	want(t, e.do(t, "PUT", "/v1/agents/pinned/pins/gamma", e.other, []byte(`{"version": 1}`), "Content-Type", "application/json"), 200)
	want(t, e.do(t, "PUT", "/v1/skills/gamma", e.admin, doc(t, "gamma", "G.", "Gamma two."), "If-Match", `"v1"`, "Content-Type", "application/json"), 200)
	if got := e.loaded(t, "coder", "gamma"); !strings.Contains(got, "Gamma one.") {
		t.Fatalf("a draft changed what the agent loads: %s", got)
	}
	r := e.do(t, "GET", "/v1/reviews/"+e.pendingReview(t), e.other, nil)
	want(t, r, 200)
	if !strings.Contains(string(r.body), `-Gamma one.\n+Gamma two.\n`) || !strings.Contains(string(r.body), `"code":"quality-no-when-to-use"`) {
		t.Errorf("review detail: %s", r.body)
	}
	want(t, e.do(t, "POST", "/v1/reviews/"+e.pendingReview(t)+"/approve", e.other, nil, "Content-Type", "application/json"), 200)
	if got := e.loaded(t, "coder", "gamma"); !strings.Contains(got, "Gamma two.") {
		t.Fatalf("after the second approval: %s", got)
	}
	if got := e.loaded(t, "pinned", "gamma"); !strings.Contains(got, "Gamma one.") {
		t.Fatalf("the pinned agent moved: %s", got)
	}
	r = e.do(t, "GET", "/v1/pins/pending", e.other, nil)
	want(t, r, 200)
	if !strings.Contains(string(r.body), `{"agent":"pinned","skill":"gamma","version":1,"published":2,"from":"api"}`) {
		t.Errorf("pending: %s", r.body)
	}
	r = e.do(t, "GET", "/v1/skills/gamma/usage", e.other, nil)
	want(t, r, 200)
	for _, s := range []string{`{"agent":"coder","version":2,"how":["lists","loaded"]`, `{"agent":"pinned","version":1,"how":["lists","pins","loaded"]`} {
		if !strings.Contains(string(r.body), s) {
			t.Errorf("usage lacks %s: %s", s, r.body)
		}
	}
	want(t, e.do(t, "POST", "/v1/pins/advance", e.other, []byte(`{"agent":"pinned"}`), "Content-Type", "application/json"), 200)
	if got := e.loaded(t, "pinned", "gamma"); !strings.Contains(got, "Gamma two.") {
		t.Fatalf("after advancing: %s", got)
	}
	// Withdraw: no listing for coder, no new pins.
	want(t, e.do(t, "POST", "/v1/skills/gamma/withdraw", e.other, nil, "Content-Type", "application/json"), 200)
	if got := e.loaded(t, "coder", "gamma"); got != "" {
		t.Errorf("a withdrawn skill loads for a following agent: %s", got)
	}
	if got := e.loaded(t, "pinned", "gamma"); !strings.Contains(got, "Gamma two.") {
		t.Errorf("a withdrawn skill's pin stopped working: %s", got)
	}
	wantErr(t, e.do(t, "PUT", "/v1/agents/coder/pins/gamma", e.other, []byte(`{"version": 2}`), "Content-Type", "application/json"), 409, "conflict")
	wantErr(t, e.do(t, "PUT", "/v1/agents/coder/pins/gamma", e.other, []byte(`{"version": "newest"}`), "Content-Type", "application/json"), 400, "bad_request")
	wantErr(t, e.do(t, "GET", "/v1/reviews?state=open", e.other, nil), 422, "invalid")
}
