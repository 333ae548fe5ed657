package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

// TestInstallerDropsExecutableBitAndServeSaysSo installs a skill with an
// executable scripts/x.sh from a running `loadout serve`'s
// /.well-known/agent-skills/index.json with the newest installer (skills
// 1.7.4, compat/, on its pinned Node): the script arrives without its
// executable bit, and the index it read, and the server's log, say so
// (executable-dropped), naming the script.
func TestInstallerDropsExecutableBitAndServeSaysSo(t *testing.T) {
	bin := testutil.CompatBin(t)
	e2e, err := filepath.Abs("../../wellknown/e2e")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for p, c := range map[string]string{
		"SKILL.md":     "---\nname: toolkit\ndescription: Tools for release work.\n---\nRun scripts/x.sh.\n",
		"scripts/x.sh": "#!/bin/sh\necho ran\n",
	} {
		full := filepath.Join(dir, "skills", "toolkit", filepath.FromSlash(p))
		testutil.Must(t, os.MkdirAll(filepath.Dir(full), 0o755))
		testutil.Must(t, os.WriteFile(full, []byte(c), 0o755))
	}
	srv := startServe(t, "--root", filepath.Join(dir, "skills"), "--db", filepath.Join(dir, "x.db"))

	code, index := httpDo(t, "GET", srv.base+"/agents/roots/.well-known/agent-skills/index.json", "", nil)
	if code != 200 || !strings.Contains(index, `"code":"executable-dropped"`) || !strings.Contains(index, `\"scripts/x.sh\"`) {
		t.Errorf("index: %d\n%s", code, index)
	}
	work, home := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "node"), "--import", "file://"+filepath.Join(e2e, "no-network.mjs"),
		filepath.Join(bin, "..", "skills", "bin", "cli.mjs"), "add", srv.base+"/agents/roots", "--skill", "toolkit", "--agent", "amp", "-y")
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"DO_NOT_TRACK=1", "DISABLE_TELEMETRY=1", "NO_COLOR=1", "FORCE_COLOR=0"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("skills add: %v\n%s\nserver log:\n%s", err, out.String(), srv.log())
	}
	script := filepath.Join(work, ".agents", "skills", "toolkit", "scripts", "x.sh")
	data, err := os.ReadFile(script)
	if err != nil || string(data) != "#!/bin/sh\necho ran\n" {
		t.Fatalf("installed script: %v %q\n%s", err, data, out.String())
	}
	info, err := os.Stat(script)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm()&0o111 != 0 {
		t.Errorf("skills 1.7.4 kept the executable bit (%v): the executable-dropped warning is no longer true for it", info.Mode().Perm())
	}
	log := srv.log()
	t.Logf("server log:\n%s", log)
	if !strings.Contains(log, "executable-dropped") || !strings.Contains(log, "toolkit") {
		t.Errorf("the server log does not warn that installers drop the executable bit:\n%s", log)
	}
}
