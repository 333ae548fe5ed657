package service

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
)

// recordingPublisher records what it was asked to push; the registry's
// side is tested against a real registry in webui and oci.
type recordingPublisher struct {
	calls []string
	fail  error
}

func (r *recordingPublisher) Target() string { return "registry.example.com/team" }

func (r *recordingPublisher) Publish(_ context.Context, name string, version int, b *skill.Bundle, created time.Time) (string, error) {
	if r.fail != nil {
		return "", r.fail
	}
	r.calls = append(r.calls, name+"@"+string(rune('0'+version))+":"+string(b.Content[len(b.Content)-2:]))
	return "registry.example.com/team/" + name + ":v1@sha256:" + strings.Repeat("a", 64), nil
}

// PublishVersion: an author of the skill (or admin) pushes a stored
// version; a viewer, or an author limited to other skills, is refused
// before the publisher is called; without a publisher the code is
// not_configured; a refusal by the registry is upstream and unaudited.
func TestPublishVersion(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "loadout.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pub := &recordingPublisher{}
	s := storeService(t, st, Options{Publisher: pub})
	ctx := context.Background()
	open := Principal{Open: true}
	for _, body := range []string{"1\n", "2\n"} {
		if _, err := s.Put(ctx, open, &skill.Bundle{Content: []byte("---\nname: team-data-etl\ndescription: ETL.\n---\n" + body)}, -1, "api", ""); err != nil {
			t.Fatal(err)
		}
	}
	p := func(scopes ...string) Principal { return Principal{TokenID: "t", Name: "tok", Scopes: scopes} }
	if s.PublishTarget() != "registry.example.com/team" {
		t.Errorf("target %q", s.PublishTarget())
	}
	ref, err := s.PublishVersion(ctx, p("author:team-data-*"), "team-data-etl", 1)
	if err != nil || !strings.HasPrefix(ref, "registry.example.com/team/team-data-etl:v1@sha256:") {
		t.Fatalf("a limited author of the skill: %q %v", ref, err)
	}
	if _, err := s.PublishVersion(ctx, p("admin"), "team-data-etl", 0); err != nil {
		t.Fatal(err)
	}
	if strings.Join(pub.calls, ",") != "team-data-etl@1:1\n,team-data-etl@2:2\n" {
		t.Errorf("pushed %q", pub.calls)
	}
	for _, c := range []struct {
		p    Principal
		code string
	}{{p("viewer"), CodeForbidden}, {p("author:billing-*"), CodeForbidden}} {
		if _, err := s.PublishVersion(ctx, c.p, "team-data-etl", 1); AsError(err).Code != c.code {
			t.Errorf("%v: %v", c.p.Scopes, err)
		}
	}
	if len(pub.calls) != 2 {
		t.Errorf("the publisher was called for a refused principal: %q", pub.calls)
	}
	if _, err := s.PublishVersion(ctx, p("admin"), "team-data-etl", 7); AsError(err).Code != CodeNotFound {
		t.Errorf("an unknown version: %v", err)
	}
	pub.fail = errors.New("401 unauthorized")
	if _, err := s.PublishVersion(ctx, p("admin"), "team-data-etl", 1); AsError(err).Code != CodeUpstream || !strings.Contains(err.Error(), "401 unauthorized") {
		t.Errorf("a registry refusal: %v", err)
	}
	recs, err := s.Audit(ctx, open, store.AuditQuery{Action: "skill.push"})
	if err != nil || len(recs) != 2 || recs[1].Detail != "version 1 to "+ref {
		t.Fatalf("audit: %+v %v", recs, err)
	}
	bare := storeService(t, st, Options{})
	if _, err := bare.PublishVersion(ctx, p("admin"), "team-data-etl", 1); AsError(err).Code != CodeNotConfigured {
		t.Errorf("no publisher: %v", err)
	}
}
