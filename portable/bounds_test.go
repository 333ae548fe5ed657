package portable

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/skill"
)

// TestImportAliasBomb: every import format refuses a frontmatter alias
// bomb (9 levels of 10) with the stable code, naming SKILL.md, and
// allocates a few kilobytes doing so, never the expansion.
func TestImportAliasBomb(t *testing.T) {
	bomb := testutil.AliasBomb("bomb", 9, 10)
	dir := filepath.Join(t.TempDir(), "bomb")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(bomb), 0o644); err != nil {
		t.Fatal(err)
	}
	zipData := makeZip(t, zent{name: "bomb/SKILL.md", data: bomb})
	jsonDoc := []byte(`{"schemaVersion":2,"skill":{"content":` + mustJSON(bomb) + `}}`)
	imports := map[string]func() error{
		"zip": func() error {
			_, err := ImportZip(strings.NewReader(string(zipData)), int64(len(zipData)), ZipLimits{})
			return err
		},
		"json": func() error { _, err := ImportJSON(jsonDoc); return err },
		"json array": func() error {
			_, err := ImportJSONMany([]byte("[" + string(jsonDoc) + "]"))
			return err
		},
		"dir": func() error { _, err := ImportDir(dir); return err },
	}
	for name, imp := range imports {
		t.Run(name, func(t *testing.T) {
			var err error
			n := testutil.Allocated(func() { err = imp() })
			var pe *Error
			var ce *skill.CheckError
			if !errors.As(err, &pe) || pe.Code != skill.CodeYAMLAliasLimit || !errors.As(err, &ce) || ce.Problems[0].Path != "SKILL.md" {
				t.Fatalf("got %v, want %s naming SKILL.md", err, skill.CodeYAMLAliasLimit)
			}
			if !strings.Contains(err.Error(), "limit on alias uses") {
				t.Errorf("message does not name the limit: %v", err)
			}
			if n > 4<<20 {
				t.Errorf("import allocated %d bytes", n)
			}
		})
	}
	t.Logf("zip of %d bytes, SKILL.md of %d bytes", len(zipData), len(bomb))
}

func TestImportJSONDepth(t *testing.T) {
	deep := `{"schemaVersion":2,"skill":{"content":` + mustJSON(okSkill) + `,"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}}`
	for name, imp := range map[string]func() error{
		"one":  func() error { _, err := ImportJSON([]byte(deep)); return err },
		"many": func() error { _, err := ImportJSONMany([]byte("[" + deep + "]")); return err },
	} {
		var pe *Error
		if err := imp(); !errors.As(err, &pe) || pe.Code != CodeJSONTooDeep || !strings.Contains(pe.Msg, "32 deep") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Brackets inside strings do not count.
	text := `{"schemaVersion":2,"skill":{"content":` + mustJSON(okSkill) + `,"files":[{"path":"a.md","content":"` + strings.Repeat(`[{\"`, 100) + `"}]}}`
	if _, err := ImportJSON([]byte(text)); err != nil {
		t.Errorf("brackets in strings: %v", err)
	}
}

// TestImportJSONArrayMessage: one document is expected; the error says
// what to do, in words, without naming a Go function.
func TestImportJSONArrayMessage(t *testing.T) {
	_, err := ImportJSON([]byte(`[{"skill":{}}]`))
	var pe *Error
	if !errors.As(err, &pe) || pe.Code != CodeJSONInvalid || strings.Contains(err.Error(), "ImportJSON") || !strings.Contains(err.Error(), "a file of its own") {
		t.Errorf("got %v", err)
	}
}
