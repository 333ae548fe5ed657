package webui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
)

var (
	authorTok   = service.Principal{TokenID: "t-author", Name: "author", Scopes: []string{"admin"}}
	reviewerTok = service.Principal{TokenID: "t-reviewer", Name: "reviewer", Scopes: []string{"admin"}}
)

// reviewUI is the UI over a store with review required and agents "dev"
// and "pinned" reading it.
func reviewUI(t *testing.T) (*ui, *service.Service) {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "loadout.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{
		{AgentID: "dev", Skills: []catalog.SourceSpec{{Store: true}}},
		{AgentID: "pinned", Skills: []catalog.SourceSpec{{Store: true}}},
	}, catalog.Options{Store: store.NewProvider(st), Pins: service.StorePins(st)})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{Store: st, Server: st, Review: service.ReviewOptions{Required: true}})
	t.Cleanup(func() { svc.Close() })
	return newUI(svc, Options{}), svc
}

func postAs(u *ui, h http.HandlerFunc, p service.Principal, path string, form url.Values, params ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(params); i += 2 {
		r.SetPathValue(params[i], params[i+1])
	}
	return serve(h, p, r)
}

func TestReviewQueuePage(t *testing.T) {
	u, svc := reviewUI(t)
	ctx := context.Background()
	put := func(text string, ifv int) {
		t.Helper()
		b := &skill.Bundle{Content: []byte("---\nname: doc\ndescription: Use when documenting.\n---\n" + text + "\n")}
		if _, err := svc.Put(ctx, authorTok, b, ifv, "api", ""); err != nil {
			t.Fatal(err)
		}
	}
	put("one", 0)
	page := func() string {
		w := serve(u.reviewsPage, reviewerTok, httptest.NewRequest("GET", "/ui/reviews", nil))
		if w.Code != 200 {
			t.Fatalf("reviews page: %d %s", w.Code, w.Body)
		}
		return w.Body.String()
	}
	body := page()
	rs, _ := svc.Reviews(ctx, reviewerTok, store.ReviewFilter{State: store.ReviewPending})
	id := rs[0].ID
	for _, want := range []string{"doc</a> v1", `id="approve-` + id + `"`, `id="reject-` + id + `"`, "<code>one</code>", "Safety findings"} {
		if !strings.Contains(body, want) {
			t.Errorf("the queue lacks %q", want)
		}
	}
	if strings.Contains(body, `id="no-reviews"`) {
		t.Errorf("the queue says it is empty with a draft pending")
	}
	// The author's approval is refused with a page saying why.
	w := postAs(u, u.decideReview, authorTok, "/ui/reviews/"+id+"/approve", url.Values{"comment": {"mine"}}, "id", id, "verb", "approve")
	if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "review.distinct") {
		t.Fatalf("self-approval: %d %s", w.Code, w.Body)
	}
	// Without the CSRF token, nothing happens.
	r := httptest.NewRequest("POST", "/ui/reviews/"+id+"/approve", strings.NewReader(""))
	r.SetPathValue("id", id)
	r.SetPathValue("verb", "approve")
	w = httptest.NewRecorder()
	u.decideReview(w, withAuth(r, reviewerTok, authInfo{csrf: "test-csrf"}))
	if w.Code != http.StatusForbidden {
		t.Fatalf("approval without CSRF: %d", w.Code)
	}
	w = postAs(u, u.decideReview, reviewerTok, "/ui/reviews/"+id+"/approve", url.Values{"comment": {"fine"}}, "id", id, "verb", "approve")
	if w.Code != http.StatusSeeOther || !strings.Contains(w.Header().Get("Location"), "approved+doc+version+1") {
		t.Fatalf("approve: %d %v", w.Code, w.Header())
	}
	if body := page(); !strings.Contains(body, `id="no-reviews"`) {
		t.Errorf("the queue is not empty after the approval")
	}
	// Pin "pinned" to v1 through the Agents tab's form; publish v2; the
	// queue's Update pending lists it, and its button moves it.
	w = postAs(u, u.setPinForm, reviewerTok, "/ui/skills/doc/pins", url.Values{"agent": {"pinned"}, "version": {"1"}}, "name", "doc")
	if w.Code != http.StatusSeeOther {
		t.Fatalf("pin: %d %s", w.Code, w.Body)
	}
	put("two", 1)
	rs, _ = svc.Reviews(ctx, reviewerTok, store.ReviewFilter{State: store.ReviewPending})
	body = page()
	if !strings.Contains(body, "<code>one</code>") || !strings.Contains(body, "<code>two</code>") {
		t.Errorf("the second draft's diff is missing")
	}
	if w := postAs(u, u.decideReview, reviewerTok, "/", url.Values{}, "id", rs[0].ID, "verb", "approve"); w.Code != http.StatusSeeOther {
		t.Fatalf("approve v2: %d %s", w.Code, w.Body)
	}
	body = page()
	if !strings.Contains(body, `aria-label="Move pinned to doc v2"`) {
		t.Fatalf("update pending lacks the pinned agent: %s", body)
	}
	// The Agents tab says where each version is used: "pinned" pins and
	// lists v1, "dev" lists v2.
	r = httptest.NewRequest("GET", "/ui/skills/doc?tab=agents", nil)
	r.SetPathValue("name", "doc")
	agents := serve(u.skillPageHandler, reviewerTok, r).Body.String()
	for _, want := range []string{`class="where-used stack-narrow"`, `<td>v1</td><td><a href="/ui/agents/pinned">pinned</a></td><td>lists, pins</td>`, `<td>v2</td><td><a href="/ui/agents/dev">dev</a></td><td>lists</td>`} {
		if !strings.Contains(agents, want) {
			t.Errorf("the Agents tab lacks %s:\n%s", want, agents)
		}
	}
	if w := postAs(u, u.advancePins, reviewerTok, "/ui/pins/advance", url.Values{}); w.Code != http.StatusSeeOther {
		t.Fatalf("advance: %d", w.Code)
	}
	if body := page(); !strings.Contains(body, `id="no-pending"`) {
		t.Errorf("pins still pending after moving them all")
	}
	if w := postAs(u, u.setPinForm, reviewerTok, "/ui/skills/doc/pins", url.Values{"agent": {"pinned"}, "version": {"v9"}}, "name", "doc"); w.Code != http.StatusBadRequest {
		t.Errorf("a pin of version v9: %d", w.Code)
	}
}
