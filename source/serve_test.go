//go:build unix

package source

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/skill"
)

// A FIFO named like an ignore file, in the root or inside a skill, must
// not hang discovery (it is opened without blocking and refused).
func TestScanDoesNotBlockOnAFIFO(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{"a/SKILL.md": md("a", "A."), "b/SKILL.md": md("b", "B.")})
	for _, p := range []string{".gitignore", "a/.ignore", "b/data.bin"} {
		if err := syscall.Mkfifo(filepath.Join(root, filepath.FromSlash(p)), 0o644); err != nil {
			t.Skip(err)
		}
	}
	var r *Result
	testutil.Within(t, "ScanFolder", func() { r = ScanFolder(context.Background(), root, Options{}) })
	if got := strings.Join(names(r), ","); got != "a,b" {
		t.Errorf("skills %s", got)
	}
	var warned []string
	for _, d := range r.Diagnostics {
		if d.Code == skill.CodeReadError && strings.Contains(d.Message, "named pipe") {
			warned = append(warned, filepath.Base(d.Path))
		}
	}
	if strings.Join(warned, ",") != ".gitignore,.ignore" {
		t.Errorf("read-error warnings for %v; diagnostics %v", warned, r.Diagnostics)
	}
	if _, ok := r.Skills[1].File("data.bin"); ok {
		t.Error("a FIFO is listed")
	}
	testutil.Within(t, "ReloadSkill", func() { ReloadSkill(context.Background(), root, filepath.Join(root, "a"), Options{}) })
}

// A SKILL.md over MaxFileSize is not read at all: the skill is skipped with
// a read error naming the size and the limit.
func TestScanBoundsSKILLmd(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{"ok/SKILL.md": md("ok", "OK.")})
	testutil.Must(t, os.Mkdir(filepath.Join(root, "big"), 0o755))
	f, err := os.Create(filepath.Join(root, "big", "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(md("big", "Big."))
	f.Truncate(1 << 30)
	f.Close()
	r := ScanFolder(context.Background(), root, Options{})
	if got := strings.Join(names(r), ","); got != "ok" {
		t.Errorf("skills %s", got)
	}
	d := findDiag(r, skill.CodeReadError)
	if d == nil || !strings.Contains(d.Message, "1073741824") || !strings.Contains(d.Message, "16777216") {
		t.Errorf("diagnostic %+v", d)
	}
	// Skills carry the serve cap.
	if r.Skills[0].MaxFileSize != DefaultMaxFileSize {
		t.Errorf("MaxFileSize %d", r.Skills[0].MaxFileSize)
	}
}

// A link that reads (os.Root) would refuse is not listed, even when it
// ends inside the skill: an absolute target, or a relative path that
// climbs out of the skill folder and back in.
func TestScanDoesNotListLinksReadsRefuse(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{
		"a/SKILL.md":      md("a", "A."),
		"a/ref/guide.md":  "guide",
		"a/ref/alias.md":  "-> guide.md",
		"a/ref/climb.md":  "-> ../../a/ref/guide.md",
		"a/ref/inside.md": "-> ../ref/guide.md",
	})
	if err := os.Symlink(filepath.Join(root, "a", "ref", "guide.md"), filepath.Join(root, "a", "ref", "abs.md")); err != nil {
		t.Skip(err)
	}
	r := ScanFolder(context.Background(), root, Options{})
	var listed []string
	for _, f := range r.Skills[0].Files {
		listed = append(listed, f.Path)
	}
	if got := strings.Join(listed, ","); got != "ref/alias.md,ref/guide.md,ref/inside.md" {
		t.Errorf("listed %s", got)
	}
	var warned []string
	for _, d := range r.Diagnostics {
		if d.Code == skill.CodeSymlinkEscapes {
			warned = append(warned, filepath.Base(d.Path))
		}
	}
	if strings.Join(warned, ",") != "abs.md,climb.md" {
		t.Errorf("symlink-escapes warnings for %v", warned)
	}
	// Every listed file can be read.
	for _, f := range r.Skills[0].Files {
		if _, err := r.Skills[0].ReadFile(f.Path); err != nil {
			t.Errorf("%s: %v", f.Path, err)
		}
	}
}
