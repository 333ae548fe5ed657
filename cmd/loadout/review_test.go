package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
)

// loadout review: an import under review.required is a draft; its own
// author (the same cli:USER) cannot approve it; another user can; list and
// show say what is pending and what it changes.
func TestReviewCLI(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"agents": [{"agentId": "dev", "skills": [{"store": true}]}], "store": "loadout.db", "review": {"required": true}}`
	if err := os.WriteFile(filepath.Join(dir, "loadout.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(text string) string {
		sk := filepath.Join(dir, "src", "doc")
		testutil.Mkdir(t, sk)
		testutil.Write(t, filepath.Join(sk, "SKILL.md"), "---\nname: doc\ndescription: Use when documenting.\n---\n"+text+"\n")
		return sk
	}
	alice := map[string]string{"USER": "alice"}
	bob := map[string]string{"USER": "bob"}
	if r := runIn(t, dir, alice, "import", write("one")); r.code != 0 {
		t.Fatalf("import: %+v", r)
	}
	// Nothing is published: the agent lists nothing.
	if r := runIn(t, dir, alice, "list", "--agent", "dev"); strings.Contains(r.stdout, "doc") {
		t.Fatalf("an unapproved draft is listed: %+v", r)
	}
	r := runIn(t, dir, alice, "review", "list")
	id := regexp.MustCompile(`(?m)^([0-9a-f]{32})\s+doc\s+1\s+0\s+pending\s+alice`).FindStringSubmatch(r.stdout)
	if r.code != 0 || id == nil {
		t.Fatalf("review list: %+v", r)
	}
	if r := runIn(t, dir, alice, "review", "approve", id[1]); r.code == 0 || !strings.Contains(r.stderr, "review.distinct") {
		t.Fatalf("self-approval: %+v", r)
	}
	if r := runIn(t, dir, bob, "review", "approve", id[1], "--comment", "ok"); r.code != 0 || !strings.Contains(r.stdout, "approved: doc version 1 is published") {
		t.Fatalf("approve: %+v", r)
	}
	if r := runIn(t, dir, alice, "list", "--agent", "dev"); !strings.Contains(r.stdout, "doc") {
		t.Fatalf("the approved skill is not listed: %+v", r)
	}
	// A second draft: show prints its diff against version 1.
	if r := runIn(t, dir, alice, "import", write("two")); r.code != 0 {
		t.Fatalf("import: %+v", r)
	}
	r = runIn(t, dir, bob, "review", "list", "--state", "pending")
	id = regexp.MustCompile(`(?m)^([0-9a-f]{32})\s+doc\s+2\s+1\s+pending`).FindStringSubmatch(r.stdout)
	if id == nil {
		t.Fatalf("review list: %+v", r)
	}
	if r := runIn(t, dir, bob, "review", "show", id[1]); r.code != 0 || !strings.Contains(r.stdout, "-one\n+two\n") {
		t.Fatalf("show: %+v", r)
	}
	if r := runIn(t, dir, bob, "review", "reject", id[1], "--comment", "no"); r.code != 0 || !strings.Contains(r.stdout, "rejected") {
		t.Fatalf("reject: %+v", r)
	}
	if r := runIn(t, dir, bob, "review", "approve", id[1]); r.code == 0 || !strings.Contains(r.stderr, "not pending") {
		t.Fatalf("approving a rejected draft: %+v", r)
	}
	if r := runIn(t, dir, bob, "review", "frob"); r.code == 0 {
		t.Fatalf("review frob: %+v", r)
	}
}
