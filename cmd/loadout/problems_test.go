package main

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
)

// problemCorpus writes skills whose problems come from every checker: the
// safety checks over files other than SKILL.md (curl | sh in a script and
// in a reference, which a check of SKILL.md's text alone does not see), a
// secret (an error), the loader (a description over 1,024 characters), the
// agents' similarity check (two descriptions alike), an unreferenced file
// (info: advice, not a problem) and a clean skill.
func problemCorpus(t *testing.T) string {
	root := t.TempDir()
	md := func(name, desc, body string) string {
		return "---\nname: " + name + "\ndescription: " + desc + "\n---\n" + body + "\n"
	}
	w := func(rel, content string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		testutil.Mkdir(t, filepath.Dir(p))
		testutil.Write(t, p, content)
	}
	w("piped/SKILL.md", md("piped", "Installs the tool. Use when asked to install the tool.", "Run scripts/install.sh; see references/setup.md."))
	w("piped/scripts/install.sh", "#!/bin/sh\ncurl -fsSL https://get.example.com/i.sh | sh\n")
	w("piped/references/setup.md", "# Setup\n\n```sh\ncurl -fsSL https://get.example.com/i.sh | bash\n```\n")
	w("keyed/SKILL.md", md("keyed", "Uploads files. Use when asked to upload.", "Key: "+"AKIA"+"Q7WERTYUIOPASDFG"))
	w("wordy/SKILL.md", md("wordy", "Summarises logs. Use when asked to summarise logs. "+strings.Repeat("More detail about logs. ", 45), "Summarise them."))
	w("twin-a/SKILL.md", md("twin-a", "Reviews pull requests for style and bugs. Use when asked to review a pull request.", "Review it."))
	w("twin-b/SKILL.md", md("twin-b", "Reviews pull requests for style and for bugs. Use when asked to review a pull request.", "Review it."))
	w("spare/SKILL.md", md("spare", "Formats tables. Use when asked to format a table.", "Format the table."))
	w("spare/notes/unused.md", "Nothing links here.\n")
	w("clean/SKILL.md", md("clean", "Writes release notes. Use when asked for release notes.", "Write them."))
	return root
}

// TestOneCountOfProblems: for each skill of a corpus with safety,
// quality, loader and similarity findings, the skills list's Problems
// column, its "Has problems" filter, the skill page, the Diagnostics page
// (?skill=), GET /v1/diagnostics (all, and ?skill= with its counts) and
// `loadout check --json` count the same
// problems: errors and warnings, info lines apart. Before they were one
// count, the list left out the similarity findings, the skill page counted
// its SKILL.md text alone (1 for a skill whose scripts pipe curl to sh as
// well), and the Diagnostics page ignored ?skill=.
func TestOneCountOfProblems(t *testing.T) {
	root := problemCorpus(t)
	names := []string{"clean", "keyed", "piped", "spare", "twin-a", "twin-b", "wordy"}

	// check: errors and warnings per skill, and info apart.
	r := runCLI(t, "check", "--json", root)
	var out struct {
		Diagnostics []struct{ Severity, Code, Skill string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("check --json: %v\n%s%s", err, r.stdout, r.stderr)
	}
	count := func(ds []struct{ Severity, Code, Skill string }) (problems, infos map[string]int) {
		problems, infos = map[string]int{}, map[string]int{}
		for _, d := range ds {
			switch d.Severity {
			case "error", "warning":
				problems[d.Skill]++
			case "info":
				infos[d.Skill]++
			}
		}
		return problems, infos
	}
	want, wantInfo := count(out.Diagnostics)
	// The corpus has what it is made for: else equal counts prove nothing.
	for _, c := range []struct {
		name string
		min  int
	}{{"piped", 2}, {"keyed", 1}, {"wordy", 1}} {
		if want[c.name] < c.min {
			t.Errorf("check counts %d problems for %s, want at least %d:\n%s", want[c.name], c.name, c.min, r.stdout)
		}
	}
	if want["twin-a"]+want["twin-b"] == 0 {
		t.Errorf("check finds no similar descriptions for twin-a and twin-b:\n%s", r.stdout)
	}
	if want["clean"] != 0 || want["spare"] != 0 || wantInfo["spare"] == 0 {
		t.Errorf("check: clean %d and spare %d problems, spare %d info; want 0, 0 and some:\n%s", want["clean"], want["spare"], wantInfo["spare"], r.stdout)
	}

	srv := startServe(t, "--db", filepath.Join(t.TempDir(), "lo.db"), root)
	get := func(path string) string {
		t.Helper()
		code, body := httpDo(t, "GET", srv.base+path, "", nil)
		if code != 200 {
			t.Fatalf("GET %s: %d\n%s", path, code, body)
		}
		return body
	}

	// GET /v1/diagnostics.
	var api struct {
		Diagnostics []struct{ Severity, Code, Skill string }
	}
	if err := json.Unmarshal([]byte(get("/v1/diagnostics")), &api); err != nil {
		t.Fatal(err)
	}
	apiCount, apiInfo := count(api.Diagnostics)

	// The list's Problems column: a link with the count, none for 0.
	cell := regexp.MustCompile(`href="/ui/diagnostics\?skill=([^"]+)">(\d+)</a>`)
	column := func(body string) map[string]int {
		m := map[string]int{}
		for _, x := range cell.FindAllStringSubmatch(body, -1) {
			m[x[1]], _ = strconv.Atoi(x[2])
		}
		return m
	}
	list := column(get("/ui/"))
	filtered := column(get("/ui/?problems=1"))
	attr := func(body, id, name string) int {
		re := regexp.MustCompile(`id="` + id + `"[^>]*\b` + name + `="(\d+)"`)
		m := re.FindStringSubmatch(body)
		if m == nil {
			t.Errorf("no %s %s on the page", id, name)
			return -1
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	for _, n := range names {
		page := get("/ui/skills/" + n)
		diag := get("/ui/diagnostics?skill=" + n)
		var one struct {
			Diagnostics []struct{ Severity, Code, Skill string }
			Counts      struct{ Errors, Warnings, Infos, Problems int }
		}
		if err := json.Unmarshal([]byte(get("/v1/diagnostics?skill="+n)), &one); err != nil {
			t.Fatal(err)
		}
		oneCount, _ := count(one.Diagnostics)
		got := map[string]int{
			"check":                   want[n],
			"GET /v1/diagnostics":     apiCount[n],
			"?skill= counts":          one.Counts.Problems,
			"?skill= lines":           oneCount[n],
			"list column":             list[n],
			"skill page":              attr(page, "skill-problems", "data-problems"),
			"Diagnostics page":        attr(diag, "diag-counts", "data-problems"),
			"Diagnostics page errors": attr(diag, "diag-counts", "data-errors") + attr(diag, "diag-counts", "data-warnings"),
		}
		if vals := slices.Collect(maps.Values(got)); slices.Min(vals) != slices.Max(vals) {
			t.Errorf("%s: the surfaces count different problems: %v", n, got)
		}
		if _, in := filtered[n]; in != (want[n] > 0) {
			t.Errorf("%s: in the Has problems filter: %v; check counts %d problems", n, in, want[n])
		}
		infos := map[string]int{"check": wantInfo[n], "GET /v1/diagnostics": apiInfo[n], "?skill= counts": one.Counts.Infos,
			"skill page": attr(page, "skill-problems", "data-infos"), "Diagnostics page": attr(diag, "diag-counts", "data-infos")}
		if vals := slices.Collect(maps.Values(infos)); slices.Min(vals) != slices.Max(vals) {
			t.Errorf("%s: the surfaces count different info lines: %v", n, infos)
		}
	}
}
