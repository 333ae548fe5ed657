package watch

import (
	"io/fs"
	"os"

	"github.com/loadout/loadout/internal/fnv1a"
)

// signatureOf hashes what a change in dir would alter: the folder's own
// modification time and, for each entry discovery reads, its name, size,
// modification time and mode. It opens the folder, reads it unsorted and
// stats its entries, nothing more; entries are combined in any order.
func signatureOf(dir string) (uint64, error) {
	f, err := os.Open(dir)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !st.IsDir() {
		return 0, fs.ErrNotExist
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return 0, err
	}
	sum := entryHash("", 0, st.ModTime().UnixNano(), st.Mode())
	for _, e := range entries {
		if skipName(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			sum += entryHash(e.Name(), -1, 0, 0) // gone between the read and the stat
			continue
		}
		sum += entryHash(e.Name(), info.Size(), info.ModTime().UnixNano(), info.Mode())
	}
	return sum, nil
}

// entryHash is FNV-1a of one entry's name, size, time and mode.
func entryHash[T string | []byte](name T, size, mtime int64, mode fs.FileMode) uint64 {
	h := fnv1a.String(fnv1a.Offset, name)
	h = fnv1a.Uint64(h, uint64(size))
	h = fnv1a.Uint64(h, uint64(mtime))
	return fnv1a.Uint64(h, uint64(mode))
}
