package main

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// writeReviewConfig is writeRemoteConfig with review required.
func writeReviewConfig(t *testing.T, src map[string]any) string {
	t.Helper()
	p := writeRemoteConfig(t, src)
	var cfg map[string]any
	data, _ := os.ReadFile(p)
	json.Unmarshal(data, &cfg)
	cfg["review"] = map[string]any{"required": true}
	data, _ = json.Marshal(cfg)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReviewRemoteSource: with review required, a real git repository's
// moves wait for review, by the CLI and by a running server: the agent is
// served the pinned snapshot until the change is approved, the change
// lists each skill with its files' diffs, approving a revision that is
// not the pending one is refused, and a rejected snapshot is not queued
// again.
func TestReviewRemoteSource(t *testing.T) {
	g := newGitRepo(t, map[string]string{
		"skills/pdf/SKILL.md": skillMD("pdf", "Fill PDF forms. Use when a PDF form must be filled.", "v1"),
	})
	cfg := writeReviewConfig(t, map[string]any{"git": g.url(), "ref": "main", "paths": []string{"skills"}, "id": "team"})
	lockPath := filepath.Join(filepath.Dir(cfg), "loadout.lock")
	env := func(string) string { return "" }

	// The CLI: even the first sync waits for review.
	r := runCLIEnv(t, env, "sync", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "team: awaits review") {
		t.Fatalf("sync under review: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLIEnv(t, env, "sync", "--config", cfg, "--check"); r.code != 1 || !strings.Contains(r.stdout, "awaits review") {
		t.Errorf("sync --check with a change pending: %d\n%s", r.code, r.stdout)
	}
	r = runCLIEnv(t, env, "sync", "--config", cfg, "--pending")
	if r.code != 1 || !strings.Contains(r.stdout, "team: nothing → ") || !strings.Contains(r.stdout, "+ pdf sha256:") {
		t.Fatalf("sync --pending: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLIEnv(t, env, "sync", "--config", cfg, "--pending", "--approve", "team"); r.code != 2 {
		t.Errorf("two modes at once: %d %s", r.code, r.stderr)
	}
	if r := runCLIEnv(t, env, "sync", "--config", cfg, "--approve", "team", "--revision", "0000"); r.code != 1 || !strings.Contains(r.stderr, "review it again") {
		t.Errorf("approving another revision: %d %s", r.code, r.stderr)
	}
	if r := runCLIEnv(t, env, "sync", "--config", cfg, "--approve", "team"); r.code != 0 || !strings.Contains(r.stdout, "approved") {
		t.Fatalf("sync --approve: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLIEnv(t, env, "sync", "--config", cfg, "--approve", "team"); r.code != 1 || !strings.Contains(r.stderr, "no change of this source awaits review") {
		t.Errorf("approving twice: %d %s", r.code, r.stderr)
	}

	// A running server: a push and the webhook record a change; the agent
	// keeps the approved snapshot.
	a := startServe(t, "--config", cfg)
	code, body := httpDo(t, "GET", a.base+"/v1/agents/coder/skills/pdf", "", nil)
	if code != 200 || !strings.Contains(body, "v1") {
		t.Fatalf("load of the approved snapshot: %d %s\n%s", code, body, a.log())
	}
	g.commit("v2 and lint", map[string]string{
		"skills/pdf/SKILL.md":  skillMD("pdf", "Fill PDF forms. Use when a PDF form must be filled.", "v2"),
		"skills/lint/SKILL.md": skillMD("lint", "Lint the code. Use when asked to lint.", "v1"),
	})
	g.push()
	lockBefore, _ := os.ReadFile(lockPath)
	code, body = httpDo(t, "POST", a.base+"/v1/sources/team/sync", "", nil)
	if code != 200 || !strings.Contains(body, `"pending":true`) || !strings.Contains(body, `"moved":false`) || !strings.Contains(body, `"added":["lint"]`) {
		t.Fatalf("sync under review: %d %s", code, body)
	}
	if c, _ := httpDo(t, "GET", a.base+"/v1/agents/coder/skills/lint", "", nil); c != 404 {
		t.Errorf("a skill awaiting review is served: %d", c)
	}
	if _, body := httpDo(t, "GET", a.base+"/v1/agents/coder/skills/pdf", "", nil); !strings.Contains(body, "v1") || strings.Contains(body, "v2") {
		t.Errorf("the change was served before approval: %s", body)
	}
	var pin map[string]any
	json.Unmarshal(lockBefore, &pin)
	code, body = httpDo(t, "GET", a.base+"/v1/sources/reviews", "", nil)
	var list struct {
		Changes []struct {
			ID, From, To, State string
			Skills              []struct {
				Name, Status string
				Files        []struct{ Path, Status, Diff string }
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &list); code != 200 || err != nil || len(list.Changes) != 1 {
		t.Fatalf("reviews: %d %v %s", code, err, body)
	}
	ch := list.Changes[0]
	if ch.ID != "team" || ch.State != "pending" || len(ch.Skills) != 2 || ch.Skills[0].Name != "lint" || ch.Skills[0].Status != "added" ||
		ch.Skills[1].Name != "pdf" || ch.Skills[1].Status != "changed" {
		t.Fatalf("the change: %s", body)
	}
	diffOK := false
	for _, f := range ch.Skills[1].Files {
		if f.Path == "SKILL.md" && strings.Contains(f.Diff, "-v1") && strings.Contains(f.Diff, "+v2") {
			diffOK = true
		}
	}
	if !diffOK {
		t.Errorf("pdf's SKILL.md has no line diff: %s", body)
	}

	// Approving another revision is refused; approving the reviewed one
	// serves it.
	code, body = httpDo(t, "POST", a.base+"/v1/sources/team/approve", "", strings.NewReader(`{"revision": "0123456789abcdef0123456789abcdef01234567"}`), "Content-Type", "application/json")
	if code != 409 || !strings.Contains(body, "review it again") {
		t.Errorf("approving another revision: %d %s", code, body)
	}
	code, body = httpDo(t, "POST", a.base+"/v1/sources/team/approve", "", strings.NewReader(`{"revision": "`+ch.To+`", "comment": "looks right"}`), "Content-Type", "application/json")
	if code != 200 || !strings.Contains(body, `"moved":true`) {
		t.Fatalf("approve: %d %s", code, body)
	}
	eventually(t, 5*time.Second, "the approved change served", func() bool {
		c, _ := httpDo(t, "GET", a.base+"/v1/agents/coder/skills/lint", "", nil)
		_, b := httpDo(t, "GET", a.base+"/v1/agents/coder/skills/pdf", "", nil)
		return c == 200 && strings.Contains(b, "v2")
	})

	// A change rejected stays out, and the same snapshot is not queued
	// again; the pin stays.
	g.commit("v3", map[string]string{"skills/pdf/SKILL.md": skillMD("pdf", "Fill PDF forms. Use when a PDF form must be filled.", "v3")})
	g.push()
	if code, body := httpDo(t, "POST", a.base+"/v1/sources/team/sync", "", nil); code != 200 || !strings.Contains(body, `"pending":true`) {
		t.Fatalf("sync of v3: %d %s", code, body)
	}
	// The web UI's review queue shows the change with its diff, and
	// rejects it with the page's own form.
	code, page := httpDo(t, "GET", a.base+"/ui/reviews", "", nil)
	if code != 200 || !strings.Contains(page, `id="source-team"`) || !strings.Contains(page, "&#43;v3") || !strings.Contains(page, `id="reject-source-team"`) {
		t.Fatalf("the review queue: %d %s", code, page)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	rev := regexp.MustCompile(`name="revision" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	if csrf == nil || rev == nil {
		t.Fatalf("the form's csrf and revision: %s", page)
	}
	form := url.Values{"csrf": {csrf[1]}, "revision": {rev[1]}, "comment": {"v3 breaks forms"}}
	code, body = httpDo(t, "POST", a.base+"/ui/sources/team/reject", "", strings.NewReader(form.Encode()), "Content-Type", "application/x-www-form-urlencoded", "Origin", a.base)
	if code != 200 || !strings.Contains(body, "rejected the change of source team") {
		t.Fatalf("reject in the UI: %d %s", code, body)
	}
	if code, body := httpDo(t, "POST", a.base+"/v1/sources/team/sync", "", nil); code != 200 || !strings.Contains(body, `"rejected":true`) || strings.Contains(body, `"pending":true`) {
		t.Errorf("the rejected snapshot synced again: %d %s", code, body)
	}
	if _, body := httpDo(t, "GET", a.base+"/v1/agents/coder/skills/pdf", "", nil); !strings.Contains(body, "v2") {
		t.Errorf("after a rejection: %s", body)
	}
	if code, body := httpDo(t, "POST", a.base+"/v1/sources/team/approve", "", strings.NewReader(`{}`), "Content-Type", "application/json"); code != 404 {
		t.Errorf("approving a rejected change: %d %s", code, body)
	}
}

// TestReviewDiffBound: a change gives diffs and findings to its first
// maxReviewDiffSkills skills, and lists the rest with a note.
func TestReviewDiffBound(t *testing.T) {
	old := maxReviewDiffSkills
	maxReviewDiffSkills = 2
	t.Cleanup(func() { maxReviewDiffSkills = old })
	files := map[string]string{}
	for _, n := range []string{"a", "b", "c"} {
		files["skills/"+n+"/SKILL.md"] = skillMD(n, "Skill "+n+". Use when "+n+" is asked for.", "v1")
	}
	g := newGitRepo(t, files)
	cfg := writeReviewConfig(t, map[string]any{"git": g.url(), "ref": "main", "paths": []string{"skills"}, "id": "team"})
	env := func(string) string { return "" }
	if r := runCLIEnv(t, env, "sync", "--config", cfg); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	r := runCLIEnv(t, env, "sync", "--config", cfg, "--pending", "--json")
	var out struct {
		Changes []struct {
			Skills []struct {
				Name  string
				Files []struct{ Path string }
				Note  string
			}
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Changes) != 1 || len(out.Changes[0].Skills) != 3 {
		t.Fatalf("pending: %v\n%s", err, r.stdout)
	}
	sk := out.Changes[0].Skills
	for i, s := range sk {
		if withDiff := i < 2; withDiff != (len(s.Files) > 0) || withDiff == (s.Note != "") {
			t.Errorf("skill %d (%s): %d files, note %q", i, s.Name, len(s.Files), s.Note)
		}
	}
}

// TestReviewRemoteSourceAudited: with a store, the CLI's approval and
// rejection of a source's change are in the audit trail, with the
// snapshots' digests.
func TestReviewRemoteSourceAudited(t *testing.T) {
	g := newGitRepo(t, map[string]string{"skills/pdf/SKILL.md": skillMD("pdf", "Fill PDF forms. Use when a PDF form must be filled.", "v1")})
	cfg := writeReviewConfig(t, map[string]any{"git": g.url(), "ref": "main", "paths": []string{"skills"}, "id": "team"})
	env := func(string) string { return "" }
	if r := runCLIEnv(t, env, "token", "create", "--config", cfg, "--scope", "admin", "--name", "ops"); r.code != 0 {
		t.Fatalf("token create (makes the store): %d %s", r.code, r.stderr)
	}
	if r := runCLIEnv(t, env, "sync", "--config", cfg); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	if r := runCLIEnv(t, env, "sync", "--config", cfg, "--approve", "team", "--comment", "first look"); r.code != 0 {
		t.Fatalf("approve: %d %s", r.code, r.stderr)
	}
	g.commit("v2", map[string]string{"skills/pdf/SKILL.md": skillMD("pdf", "Fill PDF forms. Use when a PDF form must be filled.", "v2")})
	g.push()
	runCLIEnv(t, env, "sync", "--config", cfg)
	if r := runCLIEnv(t, env, "sync", "--config", cfg, "--reject", "team", "--comment", "not now"); r.code != 0 {
		t.Fatalf("reject: %d %s", r.code, r.stderr)
	}
	r := runCLIEnv(t, env, "audit", "--config", cfg, "--json")
	var out struct {
		Records []struct{ Action, Target, After, Detail, Transport string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("audit --json: %v\n%s%s", err, r.stdout, r.stderr)
	}
	seen := map[string]bool{}
	for _, rec := range out.Records {
		if rec.Target == "source:team" && rec.Transport == "cli" {
			seen[rec.Action] = true
			if rec.Action == "source.approve" && (!strings.HasPrefix(rec.After, "sha256:") || !strings.Contains(rec.Detail, "first look")) {
				t.Errorf("the approval's record: %+v", rec)
			}
		}
	}
	if !seen["source.approve"] || !seen["source.reject"] {
		t.Fatalf("the audit trail lacks the source's approval or rejection: %s", r.stdout)
	}
}
