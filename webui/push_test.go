package webui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/registrytest"
	"github.com/loadout/loadout/oci"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
)

// testPublisher is cmd's publisher in small: pack, push to TARGET/NAME:TAG.
type testPublisher struct {
	target string
	c      *oci.Client
}

func (p *testPublisher) Target() string { return p.target }

func (p *testPublisher) Publish(ctx context.Context, name string, version int, b *skill.Bundle, created time.Time) (string, error) {
	a, err := oci.Pack(b, oci.Meta{Created: created})
	if err != nil {
		return "", err
	}
	pushed, err := p.c.Push(ctx, p.target+"/"+name+":v1", a, oci.PushOptions{})
	if err != nil {
		return "", err
	}
	return pushed.Ref.String(), nil
}

func pushEnv(t *testing.T, pub service.Publisher) (*service.Service, *httptest.Server, func(scope string) *http.Client) {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "loadout.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{{AgentID: "dev", Skills: []catalog.SourceSpec{{Store: true}}}}, catalog.Options{Store: store.NewProvider(st)})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{Store: st, Server: st, Publisher: pub})
	t.Cleanup(func() { svc.Close() })
	admin := service.Principal{Open: true}
	ctx := context.Background()
	for _, body := range []string{"One.\n", "Two.\n"} {
		if _, err := svc.Put(ctx, admin, &skill.Bundle{Content: []byte("---\nname: gamma\ndescription: G.\nversion: 1.0.0\n---\n" + body)}, -1, "api", ""); err != nil {
			t.Fatal(err)
		}
	}
	svc.RequireTokens(true)
	srv := httptest.NewServer(New(svc, Options{}))
	t.Cleanup(srv.Close)
	e := &authEnv{svc: svc, srv: srv}
	signIn := func(scope string) *http.Client {
		tok, _, err := svc.CreateToken(ctx, admin, scope, []string{scope})
		if err != nil {
			t.Fatal(err)
		}
		c := e.client(t)
		_, body := send(t, c, "GET", srv.URL+"/ui/login", nil)
		if res, body := send(t, c, "POST", srv.URL+"/ui/login", url.Values{"token": {tok}, "csrf": {pageCSRF(t, body)}, "next": {"/ui/"}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign-in as %s: %d %s", scope, res.StatusCode, body)
		}
		return c
	}
	return svc, srv, signIn
}

// The Versions tab's "Push to registry": an author pushes version 1 to a
// real registry, the tab shows the reference with its digest, the
// registry serves that digest, and the push is audited; a viewer sees no
// button and is refused; a registry that cannot be reached is a 502 that
// says so; a server without "publish" offers nothing and refuses.
func TestPushVersionToRegistry(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	c, err := oci.NewClient(oci.Options{Insecure: true, NoDockerConfig: true})
	if err != nil {
		t.Fatal(err)
	}
	svc, srv, signIn := pushEnv(t, &testPublisher{target: reg.Host + "/team/skills", c: c})
	author := signIn("author")
	_, page := send(t, author, "GET", srv.URL+"/ui/skills/gamma?tab=versions", nil)
	if !strings.Contains(page, `aria-label="Push version 1 to `+reg.Host+`/team/skills"`) {
		t.Fatalf("the versions tab offers no push:\n%s", page)
	}
	res, body := send(t, author, "POST", srv.URL+"/ui/skills/gamma/push", url.Values{"csrf": {pageCSRF(t, page)}, "version": {"1"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("push: %d %s", res.StatusCode, body)
	}
	loc := res.Header.Get("Location")
	_, shown := send(t, author, "GET", srv.URL+loc, nil)
	prefix := reg.Host + "/team/skills/gamma:v1@sha256:"
	i := strings.Index(shown, prefix)
	if i < 0 || !strings.Contains(shown, "Pushed to the registry") {
		t.Fatalf("the tab does not show the push (%s):\n%s", loc, shown)
	}
	ref := shown[i : i+len(prefix)+64]
	p, err := c.Pull(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(p.Bundle.Content), "One.") {
		t.Fatalf("the registry holds %q, not version 1", p.Bundle.Content)
	}
	recs, err := svc.Audit(context.Background(), service.Principal{Open: true}, store.AuditQuery{Action: "skill.push"})
	if err != nil || len(recs) != 1 || recs[0].Target != "skill:gamma" || !strings.Contains(recs[0].Detail, "version 1 to "+ref) || recs[0].Role != "author" {
		t.Fatalf("audit: %+v %v", recs, err)
	}

	viewer := signIn("viewer")
	_, vpage := send(t, viewer, "GET", srv.URL+"/ui/skills/gamma?tab=versions", nil)
	if strings.Contains(vpage, "Push to registry") {
		t.Error("a viewer is offered the push")
	}
	if res, _ := send(t, viewer, "POST", srv.URL+"/ui/skills/gamma/push", url.Values{"csrf": {pageCSRF(t, vpage)}, "version": {"1"}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("a viewer's push: %d", res.StatusCode)
	}
	// Without CSRF: refused.
	if res, _ := send(t, author, "POST", srv.URL+"/ui/skills/gamma/push", url.Values{"version": {"1"}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("a push without CSRF: %d", res.StatusCode)
	}
	// An unknown version: 404, nothing audited.
	if res, _ := send(t, author, "POST", srv.URL+"/ui/skills/gamma/push", url.Values{"csrf": {pageCSRF(t, page)}, "version": {"9"}}); res.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown version: %d", res.StatusCode)
	}
	if recs, _ := svc.Audit(context.Background(), service.Principal{Open: true}, store.AuditQuery{Action: "skill.push"}); len(recs) != 1 {
		t.Errorf("%d push records after refusals, want 1", len(recs))
	}
}

func TestPushVersionRegistryDownOrUnconfigured(t *testing.T) {
	c, _ := oci.NewClient(oci.Options{Insecure: true, NoDockerConfig: true, Timeout: 5 * time.Second})
	l := httptest.NewServer(http.NotFoundHandler())
	host := strings.TrimPrefix(l.URL, "http://")
	l.Close() // nothing listens there now
	_, srv, signIn := pushEnv(t, &testPublisher{target: host + "/team", c: c})
	author := signIn("author")
	_, page := send(t, author, "GET", srv.URL+"/ui/skills/gamma?tab=versions", nil)
	res, body := send(t, author, "POST", srv.URL+"/ui/skills/gamma/push", url.Values{"csrf": {pageCSRF(t, page)}, "version": {"2"}})
	if res.StatusCode != http.StatusBadGateway || !strings.Contains(body, "Push refused by the registry") || !strings.Contains(body, "Version 2 of gamma was not pushed") {
		t.Fatalf("registry down: %d\n%s", res.StatusCode, body)
	}

	_, srv2, signIn2 := pushEnv(t, nil)
	author2 := signIn2("author")
	_, page2 := send(t, author2, "GET", srv2.URL+"/ui/skills/gamma?tab=versions", nil)
	if strings.Contains(page2, "Push to registry") {
		t.Error("a server without publish offers the push")
	}
	if res, body := send(t, author2, "POST", srv2.URL+"/ui/skills/gamma/push", url.Values{"csrf": {pageCSRF(t, page2)}, "version": {"1"}}); res.StatusCode != http.StatusConflict || !strings.Contains(body, "publish") {
		t.Errorf("no publish: %d\n%s", res.StatusCode, body)
	}
}
