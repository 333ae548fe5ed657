package webui

import (
	"context"
	"log/slog"
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

// storeUI is a UI over a real SQLite store and a folder of skills, with
// two agents: ops (the folder's deploy-* listed, the store's review
// inline, notes preloaded) and dev (everything of the store).
func storeUI(t *testing.T) (*service.Service, http.Handler, string) {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "loadout.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	root := t.TempDir()
	writeSkill(t, root, "deploy", "name: deploy\ndescription: deploys")
	writeSkill(t, root, "notes", "name: notes\ndescription: notes from the folder")
	writeSkill(t, root, "secret-tool", "name: secret-tool\ndescription: hidden from the model\ndisable-model-invocation: true")
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{
		{AgentID: "ops", Skills: []catalog.SourceSpec{{Root: root, Available: []string{"deploy*", "secret-*"}}, {Store: true, Inline: []string{"review"}}}, Preload: []string{"notes"}},
		{AgentID: "dev", Skills: []catalog.SourceSpec{{Store: true}}},
	}, catalog.Options{Store: store.NewProvider(st)})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{Store: st, Server: st, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { svc.Close() })
	return svc, New(svc, Options{Logger: slog.New(slog.DiscardHandler)}), root
}

func putSkill(t *testing.T, svc *service.Service, name, body string, files ...skill.BundleFile) int {
	t.Helper()
	rec, err := svc.Put(context.Background(), service.Principal{Open: true}, &skill.Bundle{Content: []byte("---\nname: " + name + "\ndescription: the " + name + " skill\n---\n" + body), Files: files}, -1, "test", "")
	if err != nil {
		t.Fatal(err)
	}
	return rec.Version
}

func post(t *testing.T, h http.Handler, path string, form url.Values) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	r := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	h.ServeHTTP(w, r)
	return w
}

// TestVersionsTab: the history with digests, a diff of SKILL.md and the
// files between two versions, restore with the version the page showed,
// and a stale restore refused; a folder skill has no versions and says
// where it comes from.
func TestVersionsTab(t *testing.T) {
	svc, h, root := storeUI(t)
	putSkill(t, svc, "review", "# Review\n\nStep one.\nStep two.\n", skill.BundleFile{Path: "a.txt", Data: []byte("alpha\n")}, skill.BundleFile{Path: "logo.png", Data: []byte("\x89PNG\r\n\x1a\n\x00\x00")})
	v2 := putSkill(t, svc, "review", "# Review\n\nStep one.\nStep 2, changed.\n", skill.BundleFile{Path: "a.txt", Data: []byte("alpha\n"), Executable: true}, skill.BundleFile{Path: "b.md", Data: []byte("new file\n")})

	page := get(t, h, "/ui/skills/review?tab=versions")
	for _, want := range []string{"v1", "v2", "sha256:", "Changes from v1 to v2", "Step two.", "Step 2, changed.", "made executable", "<code>b.md</code> <span class=\"badge ok\">added", "<code>logo.png</code> <span class=\"badge err\">removed", `name="if_version" value="2"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the versions tab lacks %q", want)
		}
	}
	if strings.Contains(page, "<code>a.txt</code> <span class=\"badge warn\">changed</span> <span") == false && !strings.Contains(page, "a.txt") {
		t.Error("a.txt's executable change is not listed")
	}
	// Restore v1 over v2: a new version 3 with v1's bytes.
	w := post(t, h, "/ui/skills/review/restore", url.Values{"version": {"1"}, "if_version": {"2"}})
	if w.Code != http.StatusSeeOther || !strings.Contains(w.Header().Get("Location"), "restored=3") {
		t.Fatalf("restore: %d %s %s", w.Code, w.Header().Get("Location"), w.Body)
	}
	b, _, err := svc.Bundle(context.Background(), service.Principal{Open: true}, "review", 0)
	if err != nil || !strings.Contains(string(b.Content), "Step two.") {
		t.Fatalf("after restore: %v %s", err, b.Content)
	}
	// A page loaded at v2 restores again: refused, nothing written.
	w = post(t, h, "/ui/skills/review/restore", url.Values{"version": {"2"}, "if_version": {"2"}})
	if w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "Nothing was restored") {
		t.Errorf("stale restore: %d %s", w.Code, w.Body)
	}
	if vs, _ := svc.Versions(context.Background(), service.Principal{Open: true}, "review"); len(vs) != v2+1 {
		t.Errorf("%d versions after a refused restore, want %d", len(vs), v2+1)
	}
	folder := get(t, h, "/ui/skills/deploy?tab=versions")
	if !strings.Contains(folder, "No versions: this skill is not stored") || !strings.Contains(folder, root) {
		t.Errorf("a folder skill's versions tab:\n%s", folder)
	}
	if strings.Contains(folder, "/restore") {
		t.Error("a folder skill offers restore")
	}
}
