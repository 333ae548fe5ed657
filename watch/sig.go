package watch

import (
	"io/fs"
	"os"
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
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * prime
	}
	h = (h ^ 0) * prime // end of the name
	for _, v := range [3]uint64{uint64(size), uint64(mtime), uint64(mode)} {
		for b := 0; b < 64; b += 8 {
			h = (h ^ (v >> b & 0xff)) * prime
		}
	}
	return h
}
