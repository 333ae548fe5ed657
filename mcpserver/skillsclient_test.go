package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/service"
)

// TestSkillsClientVerifies: the official verifying clients accept what
// loadout serves over a catalog of edge cases (edgeSkills: typed scalars,
// a hidden skill, and skills the extension's rules refuse).
//
//   - e2e/skillsclient.mjs on @modelcontextprotocol/client 2.4's
//     SkillsClient: list() does not throw, the refused skills are absent
//     and named in _meta, and read() verifies every file of every listed
//     skill, SKILL.md's frontmatter field by field.
//   - the Inspector CLI: skills/list --verify exits 0.
func TestSkillsClientVerifies(t *testing.T) {
	bin := testutil.CompatBin(t)
	compat := filepath.Dir(filepath.Dir(bin))
	svc := edgeService(t)
	h := HTTPHandler(svc, Options{Agent: "lenient", Logger: quiet, PageSize: 4})
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(service.WithPrincipal(r.Context(), openPrincipal)))
	}))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	url := srv.URL + "/mcp"

	listed := []string{"checklist", "plain", "typed"}
	var names []string
	for n := range edgeInvalid {
		names = append(names, n)
	}
	sort.Strings(names)
	wantListed, _ := json.Marshal(listed)
	wantOmitted, _ := json.Marshal(edgeInvalid)

	t.Run("SkillsClient", func(t *testing.T) {
		script, err := os.ReadFile(filepath.Join("e2e", "skillsclient.mjs"))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "node"), "--input-type=module", "--eval", string(script))
		cmd.Dir = compat
		cmd.Env = append(os.Environ(), "LOADOUT_MCP_URL="+url, "LOADOUT_LISTED="+string(wantListed), "LOADOUT_OMITTED="+string(wantOmitted))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err = cmd.Run()
		out := strings.TrimSpace(stdout.String())
		if err != nil || !strings.HasPrefix(out[strings.LastIndex(out, "\n")+1:], "OK ") {
			t.Fatalf("skillsclient.mjs: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
		}
		t.Log(out)
	})

	t.Run("inspector", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "inspector"), "--cli", url, "--method", "skills/list", "--verify")
		cmd.Dir = compat
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("inspector --cli URL --method skills/list --verify: %v (exit 7 = a skill failed verification)\n%s", err, out)
		}
		if testing.Verbose() {
			t.Logf("%s", out)
		}
		for _, n := range listed {
			if !bytes.Contains(out, []byte("skill://"+n+"/SKILL.md")) {
				t.Errorf("the verify report does not name %s:\n%s", n, out)
			}
		}
	})
}
