package catalog

import (
	"context"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/safety"
	"github.com/loadout/loadout/skill"
)

// keyedMD is a skill whose script, scripts/ship.sh, holds awsKey.
var keyedMD = md("keyed", "Use when you need the keyed thing.") + "Run scripts/ship.sh to ship.\n"

// TestSafetyCleanSkills: a catalog whose skills have no finding has no
// safety diagnostics, checked once: a second call reads nothing again.
func TestSafetyCleanSkills(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"pdf/SKILL.md":    md("pdf", "Fill PDF forms. Use when a PDF form must be filled."),
		"deploy/SKILL.md": md("deploy", "Deploy the service to production. Use when asked to deploy."),
	})
	c, err := New(context.Background(), []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: dir}}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if ds := c.Safety(context.Background(), nil); len(ds) != 0 {
			t.Errorf("call %d: %v, want no finding", i+1, ds)
		}
	}
	if len(c.safety.checked) != 2 || len(c.safety.found) != 0 {
		t.Errorf("the cache holds %d skills checked and %d with findings, want 2 and 0", len(c.safety.checked), len(c.safety.found))
	}
}

// TestSafetyPolicyChange: the findings follow the policy of each call; a
// finding accepted by the new policy's allow entry is reported as such,
// not as the old policy's error.
func TestSafetyPolicyChange(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"keyed/SKILL.md":        keyedMD,
		"keyed/scripts/ship.sh": "#!/bin/sh\nAWS_ACCESS_KEY_ID=" + awsKey + " aws s3 ls\n",
	})
	c, err := New(context.Background(), []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: dir}}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	severity := func(p *safety.Policy) string {
		var out []string
		for _, d := range c.Safety(context.Background(), p) {
			out = append(out, string(d.Severity)+" "+d.Code)
		}
		return strings.Join(out, "; ")
	}
	allow := &safety.Policy{Allow: []safety.Allow{{Skill: "keyed", Code: safety.CodeSecretAWS, Reason: "a test key"}}}
	testutil.Must(t, allow.Validate())
	for _, c := range []struct {
		p    *safety.Policy
		want string
	}{
		{nil, "error " + safety.CodeSecretAWS},
		{allow, "info " + safety.CodeSecretAWS},
		{nil, "error " + safety.CodeSecretAWS},
	} {
		if got := severity(c.p); got != c.want {
			t.Errorf("policy %v: %q, want %q", c.p, got, c.want)
		}
	}
}

// TestSafetyFileCache: the first check of a catalog keeps no file
// findings (a one-shot `loadout check` would never use them); a re-check
// after an edit keeps them, so that a skill read again as the same bytes
// is not scanned again.
func TestSafetyFileCache(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"pdf/SKILL.md":          md("pdf", "Fill PDF forms. Use when a PDF form must be filled."),
		"keyed/SKILL.md":        keyedMD,
		"keyed/scripts/ship.sh": "#!/bin/sh\nAWS_ACCESS_KEY_ID=" + awsKey + " aws s3 ls\n",
	})
	c, err := New(context.Background(), []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: dir}}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := c.Safety(context.Background(), nil)
	if c.safety.files == nil || c.safety.files.Len() != 0 {
		t.Fatalf("after the first check the file cache is %v, want made and empty", c.safety.files)
	}
	ship := filepath.Join(dir, "keyed", "scripts", "ship.sh")
	testutil.Write(t, ship, "#!/bin/sh\nAWS_ACCESS_KEY_ID="+awsKey+" aws s3 ls  \n")
	c.Refresh(context.Background(), []string{ship})
	again := c.Safety(context.Background(), nil)
	if c.safety.files == nil || c.safety.files.Len() == 0 {
		t.Errorf("after a re-check the file cache is %v, want it to hold the re-read files", c.safety.files)
	}
	if !slices.Equal(codes(first), codes(again)) || len(again) != 1 {
		t.Errorf("findings %v, then %v: want the one secret both times", first, again)
	}
}

// TestSafetyAnyCoreCount: the checks run, and find the same, whatever the
// number of cores (the worker count is derived from it).
func TestSafetyAnyCoreCount(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"pdf/SKILL.md":          md("pdf", "Fill PDF forms. Use when a PDF form must be filled."),
		"keyed/SKILL.md":        keyedMD,
		"keyed/scripts/ship.sh": "#!/bin/sh\nAWS_ACCESS_KEY_ID=" + awsKey + " aws s3 ls\n",
	})
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3, 8} {
		runtime.GOMAXPROCS(procs)
		c, err := New(context.Background(), []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: dir}}}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan []string, 1)
		go func() { done <- codes(c.Safety(context.Background(), nil)) }()
		select {
		case got := <-done:
			if !slices.Equal(got, []string{safety.CodeSecretAWS}) {
				t.Errorf("GOMAXPROCS %d: %v", procs, got)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("GOMAXPROCS %d: the checks did not finish", procs)
		}
	}
}

// TestRootSkills: how many skills each scanned folder yielded, an empty
// one included; other sources are not roots.
func TestRootSkills(t *testing.T) {
	full, empty := t.TempDir(), t.TempDir()
	write(t, full, map[string]string{
		"pdf/SKILL.md":    md("pdf", "Fill PDF forms. Use when a PDF form must be filled."),
		"deploy/SKILL.md": md("deploy", "Deploy the service to production. Use when asked to deploy."),
	})
	write(t, empty, map[string]string{"docs/README.md": "no skill here"})
	c, err := New(context.Background(), []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: full}, {Root: empty}}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := c.RootSkills()
	if len(got) != 2 || got[full] != 2 || got[empty] != 0 {
		t.Errorf("RootSkills() = %v, want %s: 2 and %s: 0", got, full, empty)
	}
}

// TestGateRefreshOneSkill: with the folder gate, an edit that leaves a
// skill clean reads that skill again, not its whole folder: the other
// skills are the same values, and their verdicts are not taken again.
func TestGateRefreshOneSkill(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"pdf/SKILL.md":    md("pdf", "Fill PDF forms. Use when a PDF form must be filled."),
		"deploy/SKILL.md": md("deploy", "Deploy the service to production. Use when asked to deploy."),
	})
	c, err := New(context.Background(), []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: dir}}}}, Options{Gate: &Gate{Kinds: []string{"folder"}}})
	if err != nil {
		t.Fatal(err)
	}
	skillOf := func(name string) *Entry {
		e, ok := agent(t, c, "a").Lookup(name)
		if !ok {
			t.Fatalf("%s is not served", name)
		}
		return e
	}
	deploy, pdf := skillOf("deploy").Skill, skillOf("pdf").Skill
	p := filepath.Join(dir, "pdf", "SKILL.md")
	testutil.Write(t, p, md("pdf", "Fill PDF forms. Use when a PDF form must be filled, or read.")) // still clean
	c.Refresh(context.Background(), []string{p})
	if got := skillOf("pdf").Skill; got == pdf || !strings.Contains(got.Description, "or read") {
		t.Errorf("the edited skill was not read again: %q", got.Description)
	}
	if skillOf("deploy").Skill != deploy {
		t.Error("an edit of pdf read deploy again: the whole folder was rescanned")
	}
}

// TestGateCachesVerdicts: the gate keeps each skill's verdict, the
// refused ones included, so that a reload checks only skills that
// changed.
func TestGateCachesVerdicts(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"pdf/SKILL.md":          md("pdf", "Fill PDF forms. Use when a PDF form must be filled."),
		"keyed/SKILL.md":        keyedMD,
		"keyed/scripts/ship.sh": "#!/bin/sh\nAWS_ACCESS_KEY_ID=" + awsKey + " aws s3 ls\n",
	})
	spec := SourceSpec{Root: dir}
	c, err := New(context.Background(), []AgentSpec{{AgentID: "a", Skills: []SourceSpec{spec}}}, Options{Gate: &Gate{Kinds: []string{"folder"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := agent(t, c, "a").Names(); !slices.Equal(got, []string{"pdf"}) {
		t.Fatalf("served %v, want pdf alone", got)
	}
	verdicts := c.gated.bySrc[spec.key()]
	refused := 0
	for sk, v := range verdicts {
		if sk.Name == "keyed" && slices.Equal(codes(v), []string{safety.CodeSecretAWS}) {
			refused++
		}
	}
	if len(verdicts) != 2 || refused != 1 {
		t.Errorf("the gate keeps %d verdicts (%v), want 2, keyed's the refused secret", len(verdicts), verdicts)
	}
}

// TestSources: every source the catalog reads, in the global order
// (folders and remote sources as the agents name them, then the store,
// then the plugins), with its skills and its problems counted: the
// diagnostics of its read by severity (info not counted) and the errors
// of the safety checks over its skills.
func TestSources(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"pdf/SKILL.md":          md("pdf", "Fill PDF forms. Use when a PDF form must be filled."),
		"keyed/SKILL.md":        keyedMD,
		"keyed/scripts/ship.sh": "#!/bin/sh\nAWS_ACCESS_KEY_ID=" + awsKey + " aws s3 ls\n",
	})
	diag := func(sev skill.Severity, code string) skill.Diagnostic {
		return skill.Diagnostic{Severity: sev, Code: code, Message: code}
	}
	provider := func(sks []*skill.Skill, ds ...skill.Diagnostic) Provider {
		return ProviderFunc(func(context.Context) ([]*skill.Skill, []skill.Diagnostic) { return sks, ds })
	}
	stored := []*skill.Skill{virtual(t, "store://notes", skill.Origin{Kind: "store", Version: 1}, md("notes", "Stored notes. Use when taking notes."), nil)}
	plug := []*skill.Skill{virtual(t, "plugin://acme/audit", skill.Origin{Kind: "plugin", Plugin: "acme"}, md("audit", "Audit the code. Use when asked to audit."), nil)}
	opts := Options{
		Store:       provider(stored, diag(skill.Warning, "w1")),
		Plugins:     map[string]Provider{"acme": provider(plug, diag(skill.Error, "e1"), diag(skill.Info, "i1"))},
		PluginOrder: []string{"acme"},
		Remotes: map[string]Provider{
			"team": provider(nil, diag(skill.Warning, "w1"), diag(skill.Warning, "w2"), diag(skill.Error, "e1")),
			"up":   provider(nil, diag(skill.Info, "i1")),
		},
	}
	c, err := New(context.Background(), []AgentSpec{{AgentID: "a", Skills: []SourceSpec{
		{Root: dir}, {Git: "https://git.example.com/skills.git", ID: "team"}, {Index: "https://skills.example.com/index.json", ID: "up"}, {Store: true}, {Plugin: "acme"},
	}}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []SourceSummary{
		{Kind: "folder", ID: dir, Skills: 2, Errors: 1},
		{Kind: "git", ID: "team", Warnings: 2, Errors: 1},
		{Kind: "index", ID: "up"},
		{Kind: "store", ID: "store", Skills: 1, Warnings: 1},
		{Kind: "plugin", ID: "acme", Skills: 1, Errors: 1},
	}
	if got := c.Sources(context.Background(), nil); !slices.Equal(got, want) {
		t.Errorf("Sources:\n got %+v\nwant %+v", got, want)
	}
}

// TestReportOncePerSnapshot: the safety checks run once per snapshot, for
// the report every surface counts (Report keeps it); after an edit and a
// reload they run again and find the new finding; a report cut short is
// not kept.
func TestReportOncePerSnapshot(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"keyed/SKILL.md":        keyedMD,
		"keyed/scripts/ship.sh": "#!/bin/sh\nAWS_ACCESS_KEY_ID=" + awsKey + " aws s3 ls\n",
		"plain/SKILL.md":        md("plain", "Plain. Use when plain."),
	})
	ctx := context.Background()
	c, err := New(ctx, []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: dir}}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := c.Report(ctx, nil)
	if len(first.Safety) != 1 || c.reports.r != first {
		t.Fatalf("first report: %v, kept: %v", first.Safety, c.reports.r == first)
	}
	if again := c.Report(ctx, nil); again != first {
		t.Error("the same snapshot's report was made again")
	}
	write(t, dir, map[string]string{"plain/scripts/run.sh": "#!/bin/sh\nAWS_ACCESS_KEY_ID=" + awsKey + "\n"})
	c.Reload(ctx)
	after := c.Report(ctx, nil).Safety
	if n := len(slices.DeleteFunc(slices.Clone(after), func(d skill.Diagnostic) bool { return d.Code != safety.CodeSecretAWS })); n != 2 {
		t.Errorf("after an edit and a reload: %v, want the new key found too", after)
	}
	// A report cut short is not kept.
	write(t, dir, map[string]string{"plain/SKILL.md": md("plain", "Plain. Use when plain.") + "\nEdited.\n"})
	c.Reload(ctx)
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	if r := c.Report(stopped, nil); c.reports.r == r {
		t.Error("a stopped report was kept")
	}
}

// TestReportReady: no report before one is made, nor while one is being
// made (it does not wait); the made one after it; none for another policy,
// nor after a change to the catalog, until the next is made.
func TestReportReady(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"keyed/SKILL.md":        keyedMD,
		"keyed/scripts/ship.sh": "#!/bin/sh\nAWS_ACCESS_KEY_ID=" + awsKey + " aws s3 ls\n",
	})
	ctx := context.Background()
	c, err := New(ctx, []AgentSpec{{AgentID: "a", Skills: []SourceSpec{{Root: dir}}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.ReportReady(nil); ok {
		t.Error("ready before any report")
	}
	made := c.Report(ctx, nil)
	c.reports.mu.Lock() // as a report being made holds it
	testutil.Within(t, "ReportReady while a report is being made", func() {
		if _, ok := c.ReportReady(nil); ok {
			t.Error("ready while a report is being made")
		}
	})
	c.reports.mu.Unlock()
	if r, ok := c.ReportReady(nil); !ok || r != made || r.Skill("keyed").Problems() != 1 {
		t.Errorf("after the report: %v %v, want the report made, with keyed's finding", r, ok)
	}
	if _, ok := c.ReportReady(&safety.Policy{}); ok {
		t.Error("ready for another policy")
	}
	write(t, dir, map[string]string{"other/SKILL.md": "---\nname: other\ndescription: Another skill. Use when testing.\n---\nBody.\n"})
	c.Reload(ctx)
	if _, ok := c.ReportReady(nil); ok {
		t.Error("ready after the catalog changed, before its report")
	}
}
