//go:build unix

package portable

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/loadout/loadout/internal/testutil"
)

// regularInfo is the stat an import saw of a file before it was swapped.
type regularInfo struct{ fs.FileInfo }

func (regularInfo) Mode() fs.FileMode { return 0o644 }
func (regularInfo) Size() int64       { return 10 }

// A FIFO swapped in between the listing (which saw a regular file) and the
// read is refused at once, not read with a blocking open.
func TestImportDirReadDoesNotBlockOnASwappedFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := mkfifo(filepath.Join(dir, "notes.md")); err != nil {
		t.Skip(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	im := &dirImport{root: root, src: dir}
	done := make(chan error, 1)
	go func() {
		_, err := im.read("notes.md", regularInfo{})
		done <- err
	}()
	select {
	case err := <-done:
		wantCode(t, err, CodeSpecialFile)
	case <-testutil.After(t):
		t.Fatal("reading a FIFO swapped in for a file blocked")
	}
	// A folder swapped for a FIFO is refused by the listing, not blocked on.
	go func() {
		_, err := im.list("notes.md")
		done <- err
	}()
	select {
	case err := <-done:
		wantCode(t, err, CodeRead)
	case <-testutil.After(t):
		t.Fatal("listing a FIFO swapped in for a folder blocked")
	}
}
