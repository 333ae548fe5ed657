package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
)

// put writes a file, making its folders.
func put(t *testing.T, path, text string) {
	t.Helper()
	testutil.Mkdir(t, filepath.Dir(path))
	testutil.Write(t, path, text)
}

// deep is root joined with n folders d1/d2/.../dn.
func deep(root string, n int) string {
	p := root
	for i := 1; i <= n; i++ {
		p = filepath.Join(p, fmt.Sprintf("d%d", i))
	}
	return p
}

// TestDotSkillFoldersDepth: the look for skipped dot folders goes as deep
// as discovery (16 folders): a dot folder 15 separators below the root is
// named, one 16 below is not; below a dot folder, a SKILL.md in a folder
// 16 levels down is seen, one 17 down is not.
func TestDotSkillFoldersDepth(t *testing.T) {
	// Below the root: the dot folder's own depth.
	for _, c := range []struct {
		parents int
		want    bool
	}{{15, true}, {16, false}} {
		root := t.TempDir()
		dot := filepath.Join(deep(root, c.parents), ".hidden")
		put(t, filepath.Join(dot, "pdf", "SKILL.md"), "x")
		rel, _ := filepath.Rel(root, dot)
		dots, more := dotSkillFolders(root)
		if got := len(dots) == 1 && dots[0] == rel; got != c.want || more {
			t.Errorf("dot folder %d separators below the root: found %v (more %v), want found %v", strings.Count(rel, string(filepath.Separator)), dots, more, c.want)
		}
	}
	// Below the dot folder: where its SKILL.md is.
	for _, c := range []struct {
		depth int
		want  bool
	}{{16, true}, {17, false}} {
		root := t.TempDir()
		put(t, filepath.Join(deep(filepath.Join(root, ".hidden"), c.depth), "SKILL.md"), "x")
		dots, more := dotSkillFolders(root)
		if got := len(dots) == 1 && dots[0] == ".hidden"; got != c.want || more {
			t.Errorf("SKILL.md %d folders below the dot folder: found %v (more %v), want found %v", c.depth, dots, more, c.want)
		}
	}
}

// TestDotSkillFoldersWhatCounts: a dot folder is named only when it holds
// a SKILL.md (or skill.md) somewhere below; one holding other files is
// not, nor is .git or anything under node_modules; past ten folders the
// list says "and more".
func TestDotSkillFoldersWhatCounts(t *testing.T) {
	root := t.TempDir()
	put(t, filepath.Join(root, ".github", "workflows", "ci.yml"), "on: push")
	put(t, filepath.Join(root, ".vscode", "README.md"), "notes")
	put(t, filepath.Join(root, ".git", "x", "SKILL.md"), "x")
	put(t, filepath.Join(root, "node_modules", ".pkg", "SKILL.md"), "x")
	put(t, filepath.Join(root, ".lower", "a", "skill.md"), "x")
	put(t, filepath.Join(root, "docs", ".drafts", "b", "SKILL.md"), "x")
	dots, more := dotSkillFolders(root)
	if want := []string{".lower", filepath.Join("docs", ".drafts")}; fmt.Sprint(dots) != fmt.Sprint(want) || more {
		t.Errorf("got %v (more %v), want %v", dots, more, want)
	}

	// Ten dot folders with skills: all named; eleven: ten, and more.
	root = t.TempDir()
	for i := range 10 {
		put(t, filepath.Join(root, fmt.Sprintf(".s%02d", i), "SKILL.md"), "x")
	}
	if dots, more := dotSkillFolders(root); len(dots) != 10 || more {
		t.Errorf("ten dot folders: %v (more %v)", dots, more)
	}
	put(t, filepath.Join(root, ".s10", "SKILL.md"), "x")
	dots, more = dotSkillFolders(root)
	if len(dots) != 10 || !more || dots[9] != ".s09" {
		t.Errorf("eleven dot folders: %v (more %v)", dots, more)
	}
	d := emptyRoots([]string{root}, nil, nil)
	if len(d) != 1 || !strings.Contains(d[0].Message, ".s09 and more hold SKILL.md files") {
		t.Errorf("eleven dot folders: %+v", d)
	}
}

// files writes n empty files named 00000, 00001, ... in dir (they sort
// before SKILL.md).
func files(t *testing.T, dir string, from, n int) {
	t.Helper()
	testutil.Mkdir(t, dir)
	for i := from; i < from+n; i++ {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%05d", i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}

// TestDotSkillFoldersEntryBound: the look reads at most 50,000 entries in
// all. A SKILL.md that is the 50,000th entry read is found; one more file
// before it, and it is not. Past the bound in the root's own walk, the
// list says "and more".
func TestDotSkillFoldersEntryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 50,000 files")
	}
	// Read: the root (1), .a in the root's walk (2), .a in its own walk
	// (3), the files, then .a/SKILL.md.
	root := t.TempDir()
	dot := filepath.Join(root, ".a")
	files(t, dot, 0, maxDotEntries-4)
	put(t, filepath.Join(dot, "SKILL.md"), "x")
	if dots, more := dotSkillFolders(root); fmt.Sprint(dots) != "[.a]" || more {
		t.Errorf("SKILL.md as entry 50,000: %v (more %v), want [.a]", dots, more)
	}
	files(t, dot, maxDotEntries-4, 1)
	if dots, more := dotSkillFolders(root); len(dots) != 0 || more {
		t.Errorf("SKILL.md as entry 50,001: %v (more %v), want none", dots, more)
	}
	d := emptyRoots([]string{root}, nil, nil)
	if len(d) != 1 || d[0].Message != "no skill found below this folder (a skill is a folder holding SKILL.md)" {
		t.Errorf("past the bound: %+v", d)
	}

	// The root's walk: the root (1), .a (2), .a again (3), .a/SKILL.md
	// (4), many (5), then its files.
	root = t.TempDir()
	put(t, filepath.Join(root, ".a", "SKILL.md"), "x")
	files(t, filepath.Join(root, "many"), 0, maxDotEntries-5)
	if dots, more := dotSkillFolders(root); fmt.Sprint(dots) != "[.a]" || more {
		t.Errorf("50,000 entries: %v (more %v), want [.a] and no more", dots, more)
	}
	files(t, filepath.Join(root, "many"), maxDotEntries-5, 1)
	if dots, more := dotSkillFolders(root); fmt.Sprint(dots) != "[.a]" || !more {
		t.Errorf("50,001 entries: %v (more %v), want [.a] and more", dots, more)
	}
}

// TestCheckUnreadableRoot: a root that is a file is reported unreadable,
// and not also as holding no skill.
func TestCheckUnreadableRoot(t *testing.T) {
	file := filepath.Join(t.TempDir(), "notes.md")
	put(t, file, "not a folder")
	r := runCLI(t, "check", file)
	if r.code != 1 || !strings.Contains(r.stdout, "error root-unreadable: "+file) || strings.Contains(r.stdout, "root-empty") {
		t.Errorf("check of a file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
