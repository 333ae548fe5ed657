package webui

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
)

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 skills", 1: "1 skill", 2: "2 skills", 11: "11 skills"} {
		if got := count(n, "skill", "skills"); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}

// The import's summary counts in words that agree with the number: "1
// skill imported", not "1 skills imported".
func TestImportMessageWords(t *testing.T) {
	u, _ := pagesUI(t, Options{})
	one := "---\nname: solo\ndescription: A lone skill.\n---\nDo it.\n"
	code, res := postImport(t, u, openP, nil, [2]string{"solo.zip", zipBytes(t, map[string]string{"solo/SKILL.md": one})})
	if code != http.StatusOK || res.Message != "1 skill imported: 1 written, 0 unchanged" {
		t.Errorf("one skill: %d %q", code, res.Message)
	}
	two := zipBytes(t, map[string]string{"good/SKILL.md": goodMD, "solo/SKILL.md": one})
	if code, res := postImport(t, u, openP, nil, [2]string{"two.zip", two}); code != http.StatusOK || res.Message != "2 skills imported: 1 written, 1 unchanged" {
		t.Errorf("two skills: %d %q", code, res.Message)
	}
	code, res = postImport(t, u, openP, nil, [2]string{"bad.zip", zipBytes(t, map[string]string{"bad/SKILL.md": badMD})})
	if code != http.StatusUnprocessableEntity || !strings.HasPrefix(res.Message, "nothing was written: 1 of 1 skill refused; fix it and import again") {
		t.Errorf("one refused skill: %d %q", code, res.Message)
	}
	code, res = postImport(t, u, openP, map[string]string{"partial": "1"}, [2]string{"bad.zip", zipBytes(t, map[string]string{"bad/SKILL.md": badMD, "good/SKILL.md": goodMD})})
	if code != http.StatusUnprocessableEntity || !strings.HasPrefix(res.Message, "1 of 2 skills refused;") {
		t.Errorf("partial, one of two refused: %d %q", code, res.Message)
	}
}

// An agent with one warning says "1 warning" on the agents page.
func TestAgentsPageWords(t *testing.T) {
	dir := t.TempDir()
	testutil.Mkdir(t, filepath.Join(dir, "linky"))
	testutil.Write(t, filepath.Join(dir, "linky", "SKILL.md"), "---\nname: linky\ndescription: Use when linky.\n---\nSee [the notes](references/missing.md).\n")
	u := folderUI(t, dir)
	w := serve(u.agentsPage, openP, httptest.NewRequest("GET", "/ui/agents", nil))
	body := w.Body.String()
	if w.Code != 200 || !strings.Contains(body, `<span class="badge warn">1 warning</span>`) || !strings.Contains(body, "1 agent;") {
		t.Errorf("agents page: %d; want \"1 warning\" and \"1 agent;\":\n%s", w.Code, body)
	}
}
