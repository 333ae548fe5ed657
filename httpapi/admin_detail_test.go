package httpapi_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFolderDetailOncePerGeneration: GET /v1/skills/{name} of a folder
// skill reads its SKILL.md once per catalog generation, not on every
// request: an edit on disk that the catalog has not read yet changes
// nothing (the answer keeps agreeing with the catalog's description and
// digest), and the next reload shows it.
func TestFolderDetailOncePerGeneration(t *testing.T) {
	e := newEnv(t, baseFiles)
	first := e.get(t, "/v1/skills/alpha", e.admin)
	if first.code != 200 {
		t.Fatalf("GET: %d %s", first.code, first.body)
	}
	if got := first.json(t)["content"].(string); !strings.Contains(got, "Read references/guide.md.") {
		t.Fatalf("content %q", got)
	}
	edited := md("alpha", "Alpha does the first thing.", "Edited on disk.")
	if err := os.WriteFile(filepath.Join(e.root, "alpha", "SKILL.md"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	again := e.get(t, "/v1/skills/alpha", e.admin)
	if again.code != 200 || string(again.body) != string(first.body) {
		t.Fatalf("before a reload, GET read the edited file again: %d %s", again.code, again.body)
	}
	e.svc.Rescan(context.Background(), "test")
	after := e.get(t, "/v1/skills/alpha", e.admin)
	if after.code != 200 {
		t.Fatalf("GET after the reload: %d %s", after.code, after.body)
	}
	if got := after.json(t)["content"].(string); got != edited {
		t.Fatalf("after the reload, content %q, want the edited file %q", got, edited)
	}
}
