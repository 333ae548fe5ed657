//go:build linux

package watch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/loadout/loadout/internal/dirent"
)

// On Linux a polled folder's signature is taken with one allocation (the
// path handed to open): one open, fstat, getdents64 (internal/dirent)
// and a statx per entry, relative to the open folder and by the name
// getdents64 already ended with a NUL. At 50,000 skills, past the inotify
// budget, about 100,000 folders are polled every PollInterval; the
// portable signature (signatureOf) made about 1 KB of garbage a folder,
// which held an idle server's heap at its collection goal.

// errNoStatx is statx missing (Linux before 4.11): the portable signature
// is used instead.
var errNoStatx = errors.New("statx is not available")

func signature(dir string) (uint64, error) {
	sum, err := signatureLinux(dir)
	if err == errNoStatx {
		return signatureOf(dir)
	}
	return sum, err
}

func signatureLinux(dir string) (uint64, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err == unix.ENOTDIR {
		return 0, fs.ErrNotExist // as the portable one: a file now, not a folder
	}
	if err != nil {
		return 0, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, &fs.PathError{Op: "stat", Path: dir, Err: err}
	}
	sum := entryHash("", 0, st.Mtim.Nano(), fs.FileMode(st.Mode))
	noStatx := false
	err = dirent.Read(fd, func(name []byte, _ uint8) {
		if noStatx || name[0] == '.' || string(name) == "node_modules" {
			return // skipName, on bytes
		}
		var sx unix.Statx_t
		// name is followed by its NUL in the buffer (dirent.Read).
		_, _, errno := unix.Syscall6(unix.SYS_STATX, uintptr(fd), uintptr(unsafe.Pointer(&name[0])),
			unix.AT_SYMLINK_NOFOLLOW, unix.STATX_TYPE|unix.STATX_MODE|unix.STATX_SIZE|unix.STATX_MTIME,
			uintptr(unsafe.Pointer(&sx)), 0)
		switch errno {
		case 0:
			mtime := sx.Mtime.Sec*1e9 + int64(sx.Mtime.Nsec)
			sum += entryHash(name, int64(sx.Size), mtime, fs.FileMode(sx.Mode))
		case unix.ENOSYS:
			noStatx = true
		default:
			sum += entryHash(name, -1, 0, 0) // gone between the read and the stat
		}
	})
	if noStatx {
		return 0, errNoStatx
	}
	if err != nil {
		return 0, &fs.PathError{Op: "readdirent", Path: dir, Err: err}
	}
	return sum, nil
}

// listDir is listDirOf allocating only the paths it returns: at 50,000
// skills the watch lists 200,000 folders as it starts, most of them with
// no subfolder at all. With since it stats the folder and each entry
// (statx, relative to the open folder) for their change time, which
// every write, rename, link and chmod moves, and which a copy keeping
// modification times (cp -p, rsync -a, tar) does not set back.
func listDir(dir string, since int64) (out []subfolder, isSkill bool, changed []string) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		if since != 0 {
			changed = []string{dir} // unreadable now: let discovery say why
		}
		return nil, false, changed
	}
	defer unix.Close(fd)
	if since != 0 {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil && max(st.Ctim.Nano(), st.Mtim.Nano()) >= since {
			changed = append(changed, dir)
		}
	}
	var unknown []string // entries whose type the listing did not give
	err = dirent.Read(fd, func(name []byte, typ uint8) {
		if name[0] == '.' || string(name) == "node_modules" {
			return
		}
		if string(name) == "SKILL.md" || string(name) == "skill.md" {
			isSkill = true
		}
		if since != 0 && typ != unix.DT_DIR { // a folder's own time is read when it is walked
			var sx unix.Statx_t
			// name is followed by its NUL in the buffer (dirent.Read).
			_, _, errno := unix.Syscall6(unix.SYS_STATX, uintptr(fd), uintptr(unsafe.Pointer(&name[0])),
				unix.AT_SYMLINK_NOFOLLOW, unix.STATX_CTIME|unix.STATX_MTIME, uintptr(unsafe.Pointer(&sx)), 0)
			// Without statx (ENOSYS), or gone: report it, to be read again.
			if errno != 0 || max(sx.Ctime.Sec*1e9+int64(sx.Ctime.Nsec), sx.Mtime.Sec*1e9+int64(sx.Mtime.Nsec)) >= since {
				changed = append(changed, filepath.Join(dir, string(name)))
			}
		}
		switch typ {
		case unix.DT_DIR:
			out = append(out, subfolder{filepath.Join(dir, string(name)), false})
		case unix.DT_LNK, unix.DT_UNKNOWN:
			unknown = append(unknown, string(name))
		}
	})
	if err != nil {
		return nil, false, nil
	}
	for _, name := range unknown {
		p := filepath.Join(dir, name)
		lst, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if lst.IsDir() {
			out = append(out, subfolder{p, false})
		} else if lst.Mode()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				out = append(out, subfolder{p, true})
			}
		}
	}
	// In name order, as os.ReadDir gives them.
	slices.SortFunc(out, func(a, b subfolder) int { return strings.Compare(a.path, b.path) })
	return out, isSkill, changed
}
