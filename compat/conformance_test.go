package compat

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// revisions are the protocol revisions the Go SDK serves that the suite
// knows (it has no 2024-11-05; at 2025-03-26 it has one core scenario, and
// the skills extension's run at every revision).
var revisions = []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// skillsScenarios are the skills extension's scenarios. The suite leaves
// extension scenarios out of a --spec-version run, so each is run on its own
// with --force at every revision.
var skillsScenarios = []string{"sep-2640-skills-directory", "sep-2640-skills-enumeration", "sep-2640-skills-manifest"}

// notApplicableFile lists the scenarios, and single checks, that do not
// apply to loadout, each with its reason. It is in the suite's
// --expected-failures format, so the CLI can use it too.
const notApplicableFile = "conformance-not-applicable.yaml"

// readNotApplicable reads notApplicableFile: entries `- SCENARIO # reason`
// or `- SCENARIO:CHECK-ID # reason` under `server:`. An entry without a
// reason is an error.
func readNotApplicable(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir(), notApplicableFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	na := map[string]string{}
	entry := regexp.MustCompile(`^\s+-\s+([A-Za-z0-9._-]+(?::[A-Za-z0-9._-]+)?)\s*(?:#\s*(.*))?$`)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") || line == "server:" {
			continue
		}
		m := entry.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("%s:%d: want `  - SCENARIO[:CHECK] # reason`, got %q", notApplicableFile, n, line)
		}
		if strings.TrimSpace(m[2]) == "" {
			t.Fatalf("%s:%d: %s has no reason: say why it does not apply after a #", notApplicableFile, n, m[1])
		}
		if _, dup := na[m[1]]; dup {
			t.Fatalf("%s:%d: %s is listed twice", notApplicableFile, n, m[1])
		}
		na[m[1]] = strings.TrimSpace(m[2])
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return na
}

// check is one check of a scenario, as the suite writes it to
// OUT/server-SCENARIO-TIMESTAMP/checks.json.
type check struct {
	ID           string `json:"id"`
	Description  string `json:"description"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// conformanceRun runs the suite against every server and remembers which
// not-applicable entries matched a failure, and which scenarios ran.
type conformanceRun struct {
	na map[string]string

	mu        sync.Mutex
	hit       map[string]bool     // not-applicable entries that matched a failing check
	applied   map[string]bool     // scenarios run that are not wholly not applicable
	runs      int                 // (mode, revision) runs completed
	scenarios map[string][]string // revision → scenarios run
}

// run runs the suite at every revision against url and reports every
// failing check not listed as not applicable. It returns whether all
// passed.
func (c *conformanceRun) run(t *testing.T, e env, mode, url string) bool {
	t.Helper()
	c.knownScenarios(t, e)
	ok := true
	for _, rev := range revisions {
		ok = t.Run(rev, func(t *testing.T) {
			serves(t, mode, rev)
			out := t.TempDir()
			r := e.run(t, e.home, "conformance", "server", "--url", url, "--suite", "all", "--spec-version", rev, "-o", filepath.Join(out, "core"))
			if r.err != nil {
				t.Fatalf("conformance server --suite all --spec-version %s: %s", rev, r)
			}
			results := readResults(t, filepath.Join(out, "core"))
			if len(results) == 0 {
				t.Fatalf("conformance server --spec-version %s wrote no results: %s", rev, r)
			}
			for _, sc := range missing(r.stdout, results) {
				if _, na := c.na[sc]; !na {
					t.Errorf("%s at %s: the suite ran it but wrote no checks (it threw?): %s", sc, rev, r)
				}
			}
			for _, sc := range skillsScenarios {
				r := e.run(t, e.home, "conformance", "server", "--url", url, "--scenario", sc, "--spec-version", rev, "--force", "-o", filepath.Join(out, sc))
				if r.err != nil {
					t.Fatalf("conformance server --scenario %s --spec-version %s: %s", sc, rev, r)
				}
				got := readResults(t, filepath.Join(out, sc))
				if len(got[sc]) == 0 {
					t.Errorf("conformance server --scenario %s --spec-version %s wrote no checks: %s", sc, rev, r)
				}
				for k, v := range got {
					results[k] = v
				}
			}
			c.judge(t, rev, results, r)
		}) && ok
	}
	return ok
}

// judge reports the failing checks of one run that are not excused.
func (c *conformanceRun) judge(t *testing.T, rev string, results map[string][]check, r result) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	anyFailed := false
	var passed, failing []string
	for _, sc := range sortedKeys(results) {
		if !slicesContains(c.scenarios[rev], sc) {
			c.scenarios[rev] = append(c.scenarios[rev], sc)
		}
		_, wholeNA := c.na[sc]
		failed := false
		for _, ch := range results[sc] {
			switch ch.Status {
			case "SUCCESS", "INFO", "SKIPPED":
				continue
			case "WARNING":
				t.Logf("%s %s: warning (a SHOULD): %s", sc, ch.ID, ch.ErrorMessage)
				continue
			}
			key := sc + ":" + ch.ID
			if wholeNA {
				c.hit[sc] = true
				continue
			}
			if _, ok := c.na[key]; ok {
				c.hit[key] = true
				continue
			}
			failed = true
			t.Errorf("%s at %s: check %s %s: %s (%s)", sc, rev, ch.ID, ch.Status, ch.ErrorMessage, ch.Description)
		}
		if wholeNA {
			continue
		}
		c.applied[sc] = true
		if failed {
			failing = append(failing, sc)
			anyFailed = true
		} else {
			passed = append(passed, sc)
		}
	}
	t.Logf("at %s: %d applicable scenarios pass: %s", rev, len(passed), strings.Join(passed, ", "))
	if len(failing) > 0 {
		t.Logf("at %s: %d fail: %s", rev, len(failing), strings.Join(failing, ", "))
	}
	if anyFailed {
		t.Logf("suite output:\n%s", tail(r.stdout+r.stderr))
	}
	c.runs++
}

// missing returns the scenarios the suite's output says it ran that wrote
// no checks.json (a scenario that threw is only in the printed summary).
func missing(stdout string, results map[string][]check) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^=== Running scenario: (\S+) ===$`).FindAllStringSubmatch(stdout, -1) {
		if _, ok := results[m[1]]; !ok {
			out = append(out, m[1])
		}
	}
	return out
}

// knownScenarios checks once that every not-applicable entry names a
// scenario the pinned suite has.
func (c *conformanceRun) knownScenarios(t *testing.T, e env) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.scenarios != nil {
		return
	}
	r := e.run(t, e.home, "conformance", "list", "--server")
	if r.code != 0 {
		t.Fatalf("conformance list --server: %s", r)
	}
	known := map[string]bool{}
	// Only the server scenarios: the listing goes on with client ones.
	server, _, _ := strings.Cut(r.stdout, "Client scenarios")
	for _, m := range regexp.MustCompile(`(?m)^\s+- ([a-z0-9-]+) \[([^\]]*)\]`).FindAllStringSubmatch(server, -1) {
		known[m[1]] = true
		// An extension's scenario runs only when named: each is either
		// one of the skills extension's, or not applicable.
		if m[2] == "extension" && !slicesContains(skillsScenarios, m[1]) {
			if _, ok := c.na[m[1]]; !ok {
				t.Errorf("the suite has the extension scenario %s: add it to skillsScenarios or, with a reason, to %s", m[1], notApplicableFile)
			}
		}
	}
	for _, sc := range skillsScenarios {
		if !known[sc] {
			t.Errorf("the pinned suite has no scenario %s", sc)
		}
	}
	for _, k := range sortedKeys(c.na) {
		sc, _, _ := strings.Cut(k, ":")
		if !known[sc] {
			t.Errorf("%s lists %s, which the pinned suite does not have: remove it", notApplicableFile, k)
		}
	}
	c.applied, c.scenarios = map[string]bool{}, map[string][]string{}
}

// checkStale fails on a not-applicable entry that no failure matched
// although its scenario ran, once the suite ran against every server at
// every revision: it would hide a regression.
func (c *conformanceRun) checkStale(t *testing.T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	want := len(modes) * len(revisions)
	if !statefulServes20260728 {
		want--
	}
	if c.runs < want {
		return
	}
	ran := map[string]bool{}
	for _, scs := range c.scenarios {
		for _, sc := range scs {
			ran[sc] = true
		}
	}
	for _, k := range sortedKeys(c.na) {
		sc, _, _ := strings.Cut(k, ":")
		if !c.hit[k] && ran[sc] {
			t.Errorf("%s lists %s, but it did not fail in any run: remove it (or it now passes)", notApplicableFile, k)
		}
	}
}

// counts returns the number of scenarios that ran with at least one check not
// excused, and the number of scenarios listed as not applicable.
func (c *conformanceRun) counts() (applicable int, whole int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.na {
		if !strings.Contains(k, ":") {
			whole++
		}
	}
	return len(c.applied), whole
}

var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)

// readResults reads every OUT/server-SCENARIO-TIMESTAMP/checks.json.
func readResults(t *testing.T, out string) map[string][]check {
	t.Helper()
	entries, err := os.ReadDir(out)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	res := map[string][]check{}
	for _, d := range entries {
		m := resultDir.FindStringSubmatch(d.Name())
		if m == nil || !d.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(out, d.Name(), "checks.json"))
		if os.IsNotExist(err) {
			continue // a scenario skipped as not applicable at this revision
		}
		if err != nil {
			t.Fatal(err)
		}
		var checks []check
		if err := json.Unmarshal(data, &checks); err != nil {
			t.Fatalf("%s: %v", filepath.Join(d.Name(), "checks.json"), err)
		}
		res[m[1]] = append(res[m[1]], checks...)
	}
	return res
}

func slicesContains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
