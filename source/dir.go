package source

import (
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/loadout/loadout/internal/safefile"
)

// dirent is one directory entry as listed: its name and, when the file
// system says so without a stat, its type.
type dirent struct {
	name string
	typ  entType
}

type entType uint8

const (
	typUnknown entType = iota
	typFile
	typDir
	typLink
	typOther
)

// fileStat is what discovery needs of a stat.
type fileStat struct {
	size  int64
	mode  fs.FileMode
	mtime int64 // nanoseconds
	// ctime is the inode's change time in nanoseconds (Linux; 0 where
	// the scan does not read it): it moves when a file is rewritten
	// with its modification time put back (cp -p, rsync -t) or chmod'ed.
	ctime int64
	ino   uint64
}

func (s fileStat) isDir() bool     { return s.mode.IsDir() }
func (s fileStat) isRegular() bool { return s.mode.IsRegular() }

// sortEntries sorts entries by name, bytewise (without sort.Slice's
// reflection, which allocated for every folder listed).
func sortEntries(es []dirent) {
	slices.SortFunc(es, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
}

// find returns the index of name in sorted entries, or -1.
func find(es []dirent, name string) int {
	i := sort.Search(len(es), func(i int) bool { return es[i].name >= name })
	if i < len(es) && es[i].name == name {
		return i
	}
	return -1
}

// errNotRegular is the read error of a path that is a FIFO, device or
// folder where a file was expected.
func errNotRegular(m fs.FileMode) error {
	return fmt.Errorf("it is %s, not a regular file", safefile.Kind(m))
}

// errTooBig is the read error of a file over a read limit.
func errTooBig(size, max int64) error {
	return fmt.Errorf("it is %d bytes, over the %d-byte limit (limits.maxFileSize for SKILL.md, 1 MiB for ignore files)", size, max)
}

// readChunk is the first read of a SKILL.md whose body is not kept: most
// frontmatter ends well inside it, and the buffer doubles until it does.
const readChunk = 4 << 10

// readBufs are the buffers SKILL.md files are read into, one per worker at
// a time: parsing keeps none of the bytes (skill.Parse copies what it
// keeps), so the read leaves no garbage the size of the file. A buffer
// that grew past maxPooledBuf is dropped, not kept.
var readBufs = sync.Pool{New: func() any { b := make([]byte, 0, readChunk); return &b }}

const maxPooledBuf = 256 << 10

// maxIgnoreFile bounds an ignore file (.gitignore, .ignore, .fdignore):
// one larger is not read, and a warning says so.
const maxIgnoreFile = 1 << 20

// readSized reads a regular file of size bytes, at most max, through read
// (which returns io.EOF at the end) into buf, reused when it is large
// enough. With enough set, it stops at the first full buffer for which
// enough says the bytes read so far are all the caller needs, and returns
// that prefix of the file: the buffer starts at readChunk bytes and
// doubles, so enough is called O(log size) times. tooBig makes the error
// for a file that grew past max while it was read.
func readSized(read func([]byte) (int, error), size, max int64, buf []byte, enough func([]byte) bool, tooBig func(int64) error) ([]byte, error) {
	want := size + 1 // the extra byte of room catches a file that grew
	if enough != nil {
		want = min(want, readChunk)
	}
	if int64(cap(buf)) < want {
		buf = make([]byte, 0, want)
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			if enough != nil && enough(buf) {
				return buf, nil
			}
			grown := make([]byte, len(buf), min(2*int64(cap(buf)), max+1))
			copy(grown, buf)
			buf = grown
		}
		n, err := read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if len(buf) < cap(buf) && int64(len(buf)) == size {
			// A regular file that returned exactly its size is done.
			return buf, nil
		}
		if int64(len(buf)) > max {
			return nil, tooBig(int64(len(buf)))
		}
	}
}
