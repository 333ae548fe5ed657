package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/store/storetest"
)

// storeContents is every stored skill's versions with their digests and
// bytes, read straight from the store the CLI wrote.
func storeContents(t *testing.T, dsn string) map[string]string {
	t.Helper()
	ctx := context.Background()
	st, err := openStore(ctx, dsn, nil, readOnly)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	return storetest.State(t, st)
}

func keysOf(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// binCLI runs the built loadout binary.
func binCLI(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.Command(loadoutBinary(t), args...)
	cmd.Env = append(os.Environ(), "LOADOUT_CONFIG=", "LOADOUT_DB=")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	code := 0
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return result{code, out.String(), errb.String()}
}

// An import of a folder of skills and a JSON array with refused skills
// writes nothing by default and reports every skill; --partial writes the
// accepted ones.
func TestImportAllOrNothingCLI(t *testing.T) {
	for engine, newDB := range stores(t) {
		t.Run(engine, func(t *testing.T) {
			db := newDB(t)
			work := t.TempDir()
			mk := func(dir, text string) {
				testutil.Must(t, os.MkdirAll(dir, 0o755))
				if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			mk(filepath.Join(work, "first", "kept"), "---\nname: kept\ndescription: Kept.\n---\nv1\n")
			if r := binCLI(t, "import", "--db", db, filepath.Join(work, "first", "kept")); r.code != 0 {
				t.Fatalf("first import: %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			pack := filepath.Join(work, "pack")
			mk(filepath.Join(pack, "kept"), "---\nname: kept\ndescription: Kept.\n---\nv2\n")
			mk(filepath.Join(pack, "fresh-dir"), "---\nname: fresh-dir\ndescription: Fresh from a folder.\n---\nf\n")
			mk(filepath.Join(pack, "nodesc"), "---\nname: nodesc\n---\nno description\n")
			mk(filepath.Join(pack, "evil"), "---\nname: evil\ndescription: Reaches out.\n---\nx\n")
			testutil.Must(t, os.Symlink("/etc/passwd", filepath.Join(pack, "evil", "pw")))
			arr := filepath.Join(work, "arr.json")
			testutil.Must(t, os.WriteFile(arr, []byte(`[{"schemaVersion": 2, "skill": {"content": "---\nname: fresh-json\ndescription: Fresh from JSON.\n---\nj\n"}},
				{"schemaVersion": 2, "skill": {"content": 7}}]`), 0o644))
			before := storeContents(t, db)

			r := binCLI(t, "import", "--db", db, pack, arr)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
			}
			for _, w := range []string{"skipped    kept", "skipped    fresh-dir", "skipped    fresh-json", "description", "outside the skill folder",
				"[1].skill.content", "not written because", "nothing imported into", "3 refused, 3 skipped", "--partial"} {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("the report does not say %q:\n%s", w, r.stdout)
				}
			}
			if strings.Contains(r.stdout, "created") || strings.Contains(r.stdout, "updated") {
				t.Errorf("reported as written:\n%s", r.stdout)
			}
			if d := cmp.Diff(before, storeContents(t, db)); d != "" {
				t.Errorf("a refused import changed the store (-before +after):\n%s", d)
			}

			// --json says the same, one row per skill.
			r = binCLI(t, "import", "--db", db, "--json", pack, arr)
			var out struct {
				Partial bool
				Results []struct{ Name, Action, Error string }
			}
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 1 || out.Partial || len(out.Results) != 6 {
				t.Fatalf("--json: %d %v\n%s", r.code, err, r.stdout)
			}
			actions := map[string]int{}
			for _, row := range out.Results {
				actions[row.Action]++
				if row.Error == "" {
					t.Errorf("%+v: no reason", row)
				}
			}
			if actions["skipped"] != 3 || actions["refused"] != 3 {
				t.Errorf("actions %v", actions)
			}
			if d := cmp.Diff(before, storeContents(t, db)); d != "" {
				t.Errorf("a refused --json import changed the store:\n%s", d)
			}

			// --partial writes the accepted ones, and still exits 1.
			r = binCLI(t, "import", "--db", db, "--partial", pack, arr)
			if r.code != 1 || !strings.Contains(r.stdout, "updated    kept v2") || !strings.Contains(r.stdout, "created    fresh-dir v1") ||
				!strings.Contains(r.stdout, "created    fresh-json v1") || !strings.Contains(r.stdout, "3 skills imported") || strings.Contains(r.stdout, "skipped    ") {
				t.Errorf("--partial: %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			after := storeContents(t, db)
			if d := cmp.Diff([]string{"fresh-dir v1", "fresh-json v1", "kept v1", "kept v2"}, keysOf(after)); d != "" {
				t.Errorf("stored versions after --partial (-want +got):\n%s", d)
			}
			if !strings.Contains(after["kept v2"], `v2\n`) || !strings.Contains(after["fresh-json v1"], "Fresh from JSON.") {
				t.Errorf("contents after --partial: %v", after)
			}
		})
	}
}
