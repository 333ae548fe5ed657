package portable

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/skill"
)

// writeTree creates files (path -> content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, data := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestImportDirSkips(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"SKILL.md":                  okSkill,
		"references/a.md":           "# A\n",
		".git/config":               "[core]\n",
		".env":                      "SECRET=1\n",
		"references/.hidden.md":     "x",
		"node_modules/x/index.js":   "x",
		"scripts/node_modules/y.js": "x",
	})
	b, err := ImportDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Files) != 1 || b.Files[0].Path != "references/a.md" {
		t.Errorf("files %+v", b.Files)
	}
}

func TestImportDirLowercaseEntry(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"skill.md": okSkill, "a.md": "a"})
	b, err := ImportDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if string(b.Content) != okSkill || len(b.Files) != 1 {
		t.Errorf("bundle %+v", b)
	}
}

func TestImportDirSymlinksInside(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"SKILL.md": okSkill, "references/a.md": "# A\n"})
	symlink(t, "references/a.md", filepath.Join(dir, "alias.md"))
	symlink(t, "references", filepath.Join(dir, "refs"))
	b, err := ImportDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range b.Files {
		paths = append(paths, f.Path)
		if string(f.Data) != "# A\n" {
			t.Errorf("%s: %q", f.Path, f.Data)
		}
	}
	if strings.Join(paths, " ") != "alias.md references/a.md refs/a.md" {
		t.Errorf("files %v", paths)
	}
}

func TestImportDirRefusals(t *testing.T) {
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"id_rsa": "PRIVATE KEY"})
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		code  string
		entry string
	}{
		{"no SKILL.md", func(t *testing.T, dir string) { writeTree(t, dir, map[string]string{"README.md": "x"}) }, CodeSkillMDMissing, "SKILL.md"},
		{"symlink leaving the folder", func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{"SKILL.md": okSkill})
			testutil.Must(t, os.Mkdir(filepath.Join(dir, "keys"), 0o755))
			symlink(t, filepath.Join(outside, "id_rsa"), filepath.Join(dir, "keys", "id_rsa"))
		}, CodeSymlinkEscapes, "keys/id_rsa"},
		{"relative symlink leaving the folder", func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{"SKILL.md": okSkill})
			symlink(t, "../../../../../../../../etc/passwd", filepath.Join(dir, "passwd"))
		}, CodeSymlinkEscapes, "passwd"},
		{"SKILL.md a symlink leaving the folder", func(t *testing.T, dir string) {
			symlink(t, filepath.Join(outside, "id_rsa"), filepath.Join(dir, "SKILL.md"))
		}, CodeSymlinkEscapes, "SKILL.md"},
		{"broken symlink", func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{"SKILL.md": okSkill})
			symlink(t, "nowhere.md", filepath.Join(dir, "gone.md"))
		}, CodeSymlinkBroken, "gone.md"},
		{"symlink loop", func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{"SKILL.md": okSkill, "sub/a.md": "a"})
			symlink(t, "..", filepath.Join(dir, "sub", "up"))
		}, CodeSymlinkLoop, "sub/up"},
		{"self-referential links", func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{"SKILL.md": okSkill})
			symlink(t, "b", filepath.Join(dir, "a"))
			symlink(t, "a", filepath.Join(dir, "b"))
		}, CodeSymlinkLoop, "a"},
		{"oversize file", func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{"SKILL.md": okSkill, "big.bin": strings.Repeat("x", skill.DefaultMaxFileSize+1)})
		}, skill.CodeTooLarge, "big.bin"},
		{"second entry file at the top", func(t *testing.T, dir string) {
			if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
				t.Skip("SKILL.md and skill.md are one file here")
			}
			writeTree(t, dir, map[string]string{"SKILL.md": okSkill, "skill.md": okSkill})
		}, skill.CodePathSkillMD, "skill.md"},
		{"bad frontmatter", func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{"SKILL.md": "no frontmatter\n"})
		}, skill.CodeNoFrontmatter, "SKILL.md"},
		{"named pipe", func(t *testing.T, dir string) {
			if runtime.GOOS == "windows" {
				t.Skip("no named pipes")
			}
			writeTree(t, dir, map[string]string{"SKILL.md": okSkill})
			if err := mkfifo(filepath.Join(dir, "pipe")); err != nil {
				t.Skip(err)
			}
		}, CodeSpecialFile, "pipe"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.setup(t, dir)
			b, err := ImportDir(dir)
			if b != nil {
				t.Error("got a bundle")
			}
			wantCode(t, err, c.code)
			var e *Error
			if errors.As(err, &e) {
				if e.Entry != c.entry {
					t.Errorf("entry %q, want %q (%v)", e.Entry, c.entry, err)
				}
				if e.Source != dir {
					t.Errorf("source %q", e.Source)
				}
			}
		})
	}
	_, err := ImportDir(filepath.Join(outside, "missing"))
	wantCode(t, err, CodeRead)
}
