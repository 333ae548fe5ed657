package webui

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"html/template"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
)

// pagesUI is the UI over a real SQLite store and a folder of skills, with
// agents "ops" (deploy only, from the folder) and "dev" (the folder and
// the store).
func pagesUI(t *testing.T, opt Options) (*ui, store.Store) {
	t.Helper()
	dir := t.TempDir()
	writeTestSkill(t, dir, "deploy", "Deploy.")
	writeTestSkill(t, dir, "lint", "Lint.")
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "loadout.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{
		{AgentID: "ops", Skills: []catalog.SourceSpec{{Root: dir, Available: []string{"deploy"}}}},
		{AgentID: "dev", Skills: []catalog.SourceSpec{{Root: dir}, {Store: true}}},
	}, catalog.Options{Store: store.NewProvider(st)})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{Store: st, Server: st})
	t.Cleanup(func() { svc.Close() })
	return newUI(svc, opt), st
}

// newUI is the UI's pages over svc, without the handler around them, for
// tests that call one page.
func newUI(svc *service.Service, opt Options) *ui {
	u := &ui{svc: svc, opt: opt, log: slog.Default(), pages: map[string]*template.Template{}}
	u.parse()
	u.parseFragments()
	return u
}

// folderUI is newUI over one agent, "dev", of the skills folder dir.
func folderUI(t *testing.T, dir string) *ui {
	t.Helper()
	cat, err := catalog.New(context.Background(), []catalog.AgentSpec{{AgentID: "dev", Skills: []catalog.SourceSpec{{Root: dir}}}}, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(cat, service.Options{})
	t.Cleanup(func() { svc.Close() })
	return newUI(svc, Options{})
}

var (
	openP  = service.Principal{Open: true}
	opsTok = service.Principal{TokenID: "t-ops", Scopes: []string{"agent:ops"}}
)

// serve runs one handler as principal p.
// serve calls a handler as authed would have: as p, with a session whose
// CSRF token the request carries (the handlers check it on posts).
func serve(h http.HandlerFunc, p service.Principal, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	r.Header.Set(service.CSRFHeader, "test-csrf")
	h(w, withAuth(r, p, authInfo{csrf: "test-csrf"}))
	return w
}

func multipartBody(t *testing.T, fields map[string]string, files ...[2]string) (*bytes.Buffer, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	for _, f := range files {
		w, err := mw.CreateFormFile("file", f[0])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f[1]))
	}
	mw.Close()
	return &b, mw.FormDataContentType()
}

func zipBytes(t *testing.T, files map[string]string) string {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, content := range files {
		w, _ := zw.Create(name)
		w.Write([]byte(content))
	}
	zw.Close()
	return b.String()
}

func postImport(t *testing.T, u *ui, p service.Principal, fields map[string]string, files ...[2]string) (int, importResponse) {
	t.Helper()
	body, ct := multipartBody(t, fields, files...)
	r := httptest.NewRequest("POST", "/ui/import", body)
	r.Header.Set("Content-Type", ct)
	w := serve(u.importPost, p, r)
	var out importResponse
	json.Unmarshal(w.Body.Bytes(), &out)
	return w.Code, out
}

func actions(res importResponse) map[string]string {
	m := map[string]string{}
	for _, r := range res.Results {
		m[r.Name] = r.Action
	}
	return m
}

const goodMD = "---\nname: good\ndescription: A good skill.\n---\nDo good.\n"
const badMD = "---\nname: bad\n---\nNo description.\n"

// TestImportZipOfSkillsAllOrNothing: a zip of two skills, one refused:
// the refused one is named with why, nothing is written; with partial the
// good one is.
func TestImportZipOfSkillsAllOrNothing(t *testing.T) {
	u, st := pagesUI(t, Options{})
	two := zipBytes(t, map[string]string{"good/SKILL.md": goodMD, "bad/SKILL.md": badMD})
	code, res := postImport(t, u, openP, nil, [2]string{"two.zip", two})
	a := actions(res)
	if code != http.StatusUnprocessableEntity || a["bad"] != store.ActionRefused || a["good"] != store.ActionSkipped || res.Written {
		t.Fatalf("import of a good and a refused skill: %d %+v", code, res)
	}
	for _, r := range res.Results {
		if r.Name == "bad" && !strings.Contains(r.Error, "description") {
			t.Errorf("the refusal does not say why: %q", r.Error)
		}
	}
	if _, err := st.Get(context.Background(), "good"); err == nil {
		t.Errorf("a refused import wrote good")
	}
	code, res = postImport(t, u, openP, map[string]string{"partial": "1"}, [2]string{"two.zip", two})
	if a := actions(res); code != http.StatusUnprocessableEntity || a["good"] != store.ActionCreated || !res.Written {
		t.Fatalf("partial import: %d %+v", code, res)
	}
	if _, err := st.Get(context.Background(), "good"); err != nil {
		t.Errorf("a partial import did not write good: %v", err)
	}
	// The same again: unchanged.
	_, res = postImport(t, u, openP, nil, [2]string{"good.zip", zipBytes(t, map[string]string{"good/SKILL.md": goodMD})})
	if a := actions(res); a["good"] != store.ActionUnchanged || res.Written {
		t.Errorf("importing the same skill again: %+v", res)
	}
}

// TestImportLooseFilesAndJSON: a skill's loose files (grouped by their
// folder) and a portable JSON document, in one import.
func TestImportLooseFilesAndJSON(t *testing.T) {
	u, st := pagesUI(t, Options{})
	doc := `{"schemaVersion": 2, "skill": {"name": "fromjson", "description": "From JSON.", "content": "---\nname: fromjson\ndescription: From JSON.\n---\nBody.\n"}}`
	code, res := postImport(t, u, openP, nil,
		[2]string{"loose/SKILL.md", "---\nname: loose\ndescription: Loose files.\n---\nSee notes.md.\n"},
		[2]string{"loose/notes.md", "notes"},
		[2]string{"doc.json", doc})
	if a := actions(res); code != http.StatusOK || a["loose"] != store.ActionCreated || a["fromjson"] != store.ActionCreated {
		t.Fatalf("loose files and JSON: %d %+v", code, res)
	}
	rec, err := st.Get(context.Background(), "loose")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Files) != 1 || rec.Files[0].Path != "notes.md" {
		t.Errorf("the loose skill's files: %+v", rec.Files)
	}
	// A folder of skills, chosen whole: each SKILL.md's folder is a skill
	// with the files below it.
	code, res = postImport(t, u, openP, nil,
		[2]string{"skills/a/SKILL.md", "---\nname: a\ndescription: A.\n---\nA.\n"},
		[2]string{"skills/a/ref/x.md", "x"},
		[2]string{"skills/b/SKILL.md", "---\nname: b\ndescription: B.\n---\nB.\n"})
	if a := actions(res); code != http.StatusOK || a["a"] != store.ActionCreated || a["b"] != store.ActionCreated {
		t.Fatalf("a folder of two skills: %d %+v", code, res)
	}
	if rec, err := st.Get(context.Background(), "a"); err != nil || len(rec.Files) != 1 || rec.Files[0].Path != "ref/x.md" {
		t.Errorf("skill a of the folder: %v %+v", err, rec)
	}
	// Files under no SKILL.md are refused, named, and nothing is written.
	code, res = postImport(t, u, openP, nil,
		[2]string{"c/SKILL.md", "---\nname: c\ndescription: C.\n---\nC.\n"},
		[2]string{"stray/notes.md", "notes"})
	if a := actions(res); code != http.StatusUnprocessableEntity || a["stray"] != store.ActionRefused || a["c"] != store.ActionSkipped {
		t.Errorf("files under no SKILL.md: %d %+v", code, res)
	}
}

// TestImportBounds: a body over MaxImportBytes is refused with 413, and
// nothing is imported.
func TestImportBounds(t *testing.T) {
	u, st := pagesUI(t, Options{MaxImportBytes: 1024})
	code, _ := postImport(t, u, openP, nil, [2]string{"good/SKILL.md", goodMD + strings.Repeat("x", 2048)})
	if code != http.StatusRequestEntityTooLarge {
		t.Errorf("an import over MaxImportBytes: %d, want 413", code)
	}
	if _, err := st.Get(context.Background(), "good"); err == nil {
		t.Errorf("an import over the cap wrote good")
	}
}

// TestAgentTokenSeesOwnAgent: an agent:ID token sees its agent only, in
// the agents list, the agent pages and the diagnostics, and may not
// import.
func TestAgentTokenSeesOwnAgent(t *testing.T) {
	u, _ := pagesUI(t, Options{})
	w := serve(u.agentsPage, opsTok, httptest.NewRequest("GET", "/ui/agents", nil))
	if body := w.Body.String(); w.Code != 200 || !strings.Contains(body, `href="/ui/agents/ops"`) || strings.Contains(body, `href="/ui/agents/dev"`) {
		t.Errorf("agents list for agent:ops: %d\n%s", w.Code, body)
	}
	r := httptest.NewRequest("GET", "/ui/agents/dev", nil)
	r.SetPathValue("id", "dev")
	if w := serve(u.agentPage, opsTok, r); w.Code != http.StatusForbidden {
		t.Errorf("agent:ops opening dev's page: %d, want 403", w.Code)
	}
	r = httptest.NewRequest("GET", "/ui/agents/ops", nil)
	r.SetPathValue("id", "ops")
	if w := serve(u.agentPage, opsTok, r); w.Code != 200 || !strings.Contains(w.Body.String(), `data-skill="deploy"`) || strings.Contains(w.Body.String(), `data-skill="lint"`) {
		t.Errorf("agent:ops opening its page: %d", w.Code)
	}
	if w := serve(u.importPage, opsTok, httptest.NewRequest("GET", "/ui/import", nil)); w.Code != http.StatusForbidden {
		t.Errorf("agent:ops opening import: %d, want 403", w.Code)
	}
	if code, _ := postImport(t, u, opsTok, nil, [2]string{"good/SKILL.md", goodMD}); code != http.StatusForbidden {
		t.Errorf("agent:ops importing: %d, want 403", code)
	}
}
