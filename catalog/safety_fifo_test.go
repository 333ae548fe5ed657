//go:build unix

package catalog

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

// TestSafetyRefusesFIFO: a listed file swapped for a FIFO after the scan
// is reported as unread (naming it a named pipe) at once; it never blocks
// the safety checks, which hold the catalog's safety lock (before, the
// open blocked for good, and every later call waited on it). Once the file
// is back, the next call reads it.
func TestSafetyRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"deploy/SKILL.md": md("deploy", "Deploys the app."), "deploy/notes.txt": "hello\n"})
	c := newCat(t, AgentSpec{AgentID: "a", Skills: []SourceSpec{{Root: dir}}})
	notes := filepath.Join(dir, "deploy", "notes.txt")
	testutil.Must(t, os.Remove(notes))
	if err := syscall.Mkfifo(notes, 0o644); err != nil {
		testutil.Unavailable(t, "mkfifo: %v", err)
	}
	for range 2 { // the second call must not wait on the first
		testutil.Within(t, "Catalog.Safety over a FIFO", func() {
			ds := unreadOnly(c.Safety(context.Background(), nil))
			if len(ds) != 1 || !strings.Contains(ds[0].Message, "notes.txt is a named pipe (FIFO)") {
				t.Errorf("Safety over a FIFO: got %v, want one %s naming the named pipe", ds, CodeSafetyUnread)
			}
		})
	}
	testutil.Must(t, os.Remove(notes))
	testutil.Write(t, notes, "hello\n")
	testutil.Within(t, "Catalog.Safety", func() {
		if ds := unreadOnly(c.Safety(context.Background(), nil)); len(ds) != 0 {
			t.Errorf("Safety with the file back: %v, want no %s", ds, CodeSafetyUnread)
		}
	})
}

func unreadOnly(ds []skill.Diagnostic) []skill.Diagnostic {
	var out []skill.Diagnostic
	for _, d := range ds {
		if d.Code == CodeSafetyUnread {
			out = append(out, d)
		}
	}
	return out
}
