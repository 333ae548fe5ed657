package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

// At 1,000 skills the start-up log stays small: the skills the MCP
// listing leaves out are summarised in one line (not named one by one),
// the folders beyond the watch budget in another, and an edit in a polled
// folder is still served.
func TestServeLogsStayBoundedAt1000Skills(t *testing.T) {
	dir := t.TempDir()
	const n = 1000
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("skill-%04d", i)
		testutil.Must(t, os.MkdirAll(filepath.Join(dir, "skills", name, "references"), 0o755))
		testutil.Must(t, os.WriteFile(filepath.Join(dir, "skills", name, "SKILL.md"), []byte(fmt.Sprintf(
			"---\nname: %s\ndescription: Does thing number %d for the user when asked about topic %d in some detail.\n---\nBody %d.\n", name, i, i, i)), 0o644))
	}
	cfg := filepath.Join(dir, "loadout.json")
	testutil.Must(t, os.WriteFile(cfg, []byte(`{"agents": [{"agentId": "all", "skills": [{"root": "skills"}]}],
  "watch": {"maxWatches": 10, "pollInterval": "200ms"}}`), 0o644))
	srv := startServe(t, "--config", cfg, "--log-level", "debug")
	// (startServe has read the URLs, which come after the MCP server's
	// start-up lines.)

	// A folder beyond the budget of 10 watches is polled, and its edits
	// are served.
	last := filepath.Join(dir, "skills", fmt.Sprintf("skill-%04d", n-1), "SKILL.md")
	testutil.Write(t, last, "---\nname: skill-0999\ndescription: Edited.\n---\nEdited body.\n")
	eventually(t, 10*time.Second, "the edit of a polled skill being served", func() bool {
		_, body := httpDo(t, "GET", srv.base+"/v1/agents/all/skills/skill-0999", "", nil)
		return strings.Contains(body, "Edited body.")
	})
	// The MCP server has rebuilt its view after the reload.
	eventually(t, 10*time.Second, "the MCP view following the reload", func() bool { return strings.Contains(srv.log(), "list_changed sent") })

	logs := srv.log()
	lines := strings.Split(strings.TrimSpace(logs), "\n")
	for _, l := range lines {
		if len(l) > 1000 {
			t.Errorf("a %d-byte log line: %.300s…", len(l), l)
		}
	}
	count := func(sub string) int { return strings.Count(logs, sub) }
	// One summary per MCP endpoint: the global one ("*") and the agent's.
	for _, agent := range []string{"agent=all ", "agent=* "} {
		c := 0
		for _, l := range lines {
			if strings.Contains(l, "listing is over its budget") && strings.Contains(l, agent) {
				c++
			}
		}
		if c != 1 {
			t.Errorf("the listing summary for %s was logged %d times, want once:\n%s", agent, c, logs)
		}
	}
	if c := count("skill-0500"); c != 0 {
		t.Errorf("skills left out of the listing are named one by one (%d times)", c)
	}
	if c := count("polled instead of watched"); c != 1 {
		t.Errorf("the polling summary was logged %d times, want once:\n%s", c, logs)
	}
	if !strings.Contains(logs, "omitted=") || !strings.Contains(logs, "see_all=") || !strings.Contains(logs, "polled=") {
		t.Errorf("the summaries lack their counts:\n%s", logs)
	}
	if len(logs) > 20000 {
		t.Errorf("%d bytes of log for start-up, one edit and a few requests", len(logs))
	}
}
