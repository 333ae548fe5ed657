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

// TestSkillsInstallerAgainstServe installs a multi-file skill with the
// skills@1.3.9 installer (npm, as people run `npx skills add URL`) from a
// running `loadout serve`, into a temporary folder, and compares the bytes
// of every file with the source.
func TestSkillsInstallerAgainstServe(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	e2e := npmFolder(t, "../../wellknown/e2e", filepath.Join("node_modules", "skills", "bin", "cli.mjs"))
	cli := filepath.Join(e2e, "node_modules", "skills", "bin", "cli.mjs")
	dir := t.TempDir()
	files := map[string]string{
		"SKILL.md":                     "---\nname: toolkit\ndescription: Tools for release work.\n---\nRun scripts/run.sh, then read references/guide.md.\n",
		"references/guide.md":          "# Guide\n\nÉtape un: read this.\n",
		"references/deep/a/b/notes.md": "deep notes\n",
		"scripts/run.sh":               "#!/bin/sh\necho ran \"$@\"\n",
		"templates/note.txt":           "Dear {{name}},\n",
	}
	for p, c := range files {
		full := filepath.Join(dir, "skills", "toolkit", filepath.FromSlash(p))
		testutil.Must(t, os.MkdirAll(filepath.Dir(full), 0o755))
		testutil.Write(t, full, c)
	}
	srv := startServe(t, "--root", filepath.Join(dir, "skills"), "--db", filepath.Join(dir, "x.db"))

	work, home := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--import", "file://"+filepath.Join(e2e, "no-network.mjs"), cli,
		"add", srv.base+"/agents/roots", "--skill", "toolkit", "--agent", "amp", "-y")
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"DO_NOT_TRACK=1", "DISABLE_TELEMETRY=1", "NO_COLOR=1", "FORCE_COLOR=0"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("skills add: %v\n%s\nserver log:\n%s", err, out.String(), srv.log())
	}
	installed := filepath.Join(work, ".agents", "skills", "toolkit")
	for p, want := range files {
		got, err := os.ReadFile(filepath.Join(installed, filepath.FromSlash(p)))
		if err != nil || string(got) != want {
			t.Errorf("%s: %v, got %q, want %q\ninstaller output:\n%s", p, err, got, want, out.String())
		}
	}
	if strings.Contains(out.String(), "blocked fetch http://127.0.0.1") {
		t.Errorf("a loopback fetch was blocked:\n%s", out.String())
	}
}
