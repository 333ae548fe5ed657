package portable

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"syscall"

	"github.com/loadout/loadout/internal/safefile"
	"github.com/loadout/loadout/skill"
)

// maxDirDepth bounds how deep ImportDir descends, folders reached through
// symbolic links included.
const maxDirDepth = 32

// ImportDir reads the skill folder dir into a bundle. SKILL.md is required
// at its root (skill.md is accepted when there is no SKILL.md).
//
// The folder is read through os.Root: a symbolic link may point to a file
// or folder inside the skill (it is followed, and the file is stored under
// the link's name), but a link that leaves the skill is refused, naming it,
// as are broken links, link loops and special files (pipes, sockets,
// devices). Like discovery, ImportDir skips entries whose name starts with
// a dot and node_modules folders, at every level; ignore files
// (.gitignore and friends) are not consulted. A file's executable bit is
// kept (any of the three x bits). Files over skill.DefaultMaxFileSize, a
// skill over skill.DefaultMaxTotalSize or with more than
// skill.DefaultMaxFiles files is refused as soon as that is seen, before
// reading the rest. A SKILL.md below the root is one of the skill's files
// (Bundle.Check warns nested-skill), as discovery lists it; a second entry
// file at the root (skill.md beside SKILL.md) is refused. Empty folders
// are not kept: a bundle, like a store, holds files only (folder discovery
// records them, skill.Skill.Dirs, and MCP lists them). The returned bundle
// has passed Check.
func ImportDir(dir string) (*skill.Bundle, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, &Error{Source: dir, Code: CodeRead, Msg: "cannot open the skill folder: " + err.Error(), Err: err}
	}
	defer root.Close()
	im := &dirImport{root: root, src: dir}
	top, err := im.list(".")
	if err != nil {
		return nil, err
	}
	entry := ""
	for _, name := range []string{"SKILL.md", "skill.md"} {
		for _, e := range top {
			if e.Name() == name {
				entry = name
				break
			}
		}
		if entry != "" {
			break
		}
	}
	if entry == "" {
		return nil, &Error{Source: dir, Entry: "SKILL.md", Code: CodeSkillMDMissing, Msg: "the folder has no SKILL.md at its root"}
	}
	info, err := im.stat(entry, true)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &Error{Source: dir, Entry: entry, Code: CodeSpecialFile, Msg: fmt.Sprintf("%s is not a regular file", entry)}
	}
	if im.b.Content, err = im.read(entry, info); err != nil {
		return nil, err
	}
	rootInfo, err := root.Stat(".")
	if err != nil {
		return nil, &Error{Source: dir, Code: CodeRead, Msg: err.Error(), Err: err}
	}
	if err := im.walk(".", top, entry, []fs.FileInfo{rootInfo}); err != nil {
		return nil, err
	}
	if _, _, err := im.b.Check(skill.Limits{}); err != nil {
		return nil, checkError(dir, err, nil)
	}
	return &im.b, nil
}

type dirImport struct {
	root  *os.Root
	src   string
	b     skill.Bundle
	total int64
}

func (im *dirImport) fail(entry, code, format string, args ...any) error {
	return &Error{Source: im.src, Entry: entry, Code: code, Msg: fmt.Sprintf(format, args...)}
}

func (im *dirImport) list(rel string) ([]fs.DirEntry, error) {
	// O_NONBLOCK: a FIFO swapped in for a folder fails ReadDir instead of
	// blocking the open.
	f, err := im.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &Error{Source: im.src, Entry: rel, Code: CodeRead, Msg: err.Error(), Err: err}
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, &Error{Source: im.src, Entry: rel, Code: CodeRead, Msg: err.Error(), Err: err}
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	return ents, nil
}

// stat returns what rel is, following a symbolic link only inside the
// root; isLink says whether rel itself is a link.
func (im *dirImport) stat(rel string, isLink bool) (fs.FileInfo, error) {
	if !isLink {
		info, err := im.root.Lstat(rel)
		if err != nil {
			return nil, &Error{Source: im.src, Entry: rel, Code: CodeRead, Msg: err.Error(), Err: err}
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			return info, nil
		}
	}
	info, err := im.root.Stat(rel)
	switch {
	case err == nil:
		return info, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, &Error{Source: im.src, Entry: rel, Code: CodeSymlinkBroken, Msg: "the symbolic link points to nothing", Err: err}
	case errors.Is(err, syscall.ELOOP):
		return nil, &Error{Source: im.src, Entry: rel, Code: CodeSymlinkLoop, Msg: "the symbolic link loops", Err: err}
	}
	if _, lerr := im.root.Lstat(rel); lerr != nil {
		return nil, &Error{Source: im.src, Entry: rel, Code: CodeRead, Msg: err.Error(), Err: err}
	}
	return nil, &Error{Source: im.src, Entry: rel, Code: CodeSymlinkEscapes, Msg: "the symbolic link leads outside the skill folder; a skill may only link to its own files", Err: err}
}

func (im *dirImport) walk(rel string, ents []fs.DirEntry, entry string, chain []fs.FileInfo) error {
	if len(chain) > maxDirDepth {
		return im.fail(rel, CodeTooDeep, "folders are nested more than %d deep", maxDirDepth)
	}
	for _, e := range ents {
		name := e.Name()
		if name == "" || name[0] == '.' || name == "node_modules" {
			continue
		}
		p := name
		if rel != "." {
			p = rel + "/" + name
		} else if name == entry {
			continue
		}
		info, err := im.stat(p, e.Type()&fs.ModeSymlink != 0)
		if err != nil {
			return err
		}
		switch {
		case info.IsDir():
			for _, a := range chain {
				if os.SameFile(a, info) {
					return im.fail(p, CodeSymlinkLoop, "the folder contains itself through a symbolic link")
				}
			}
			sub, err := im.list(p)
			if err != nil {
				return err
			}
			if err := im.walk(p, sub, entry, append(chain[:len(chain):len(chain)], info)); err != nil {
				return err
			}
		case info.Mode().IsRegular():
			if len(im.b.Files) >= skill.DefaultMaxFiles {
				return im.fail(p, skill.CodeTooManyFiles, "the skill has more than %d files", skill.DefaultMaxFiles)
			}
			data, err := im.read(p, info)
			if err != nil {
				return err
			}
			im.b.Files = append(im.b.Files, skill.BundleFile{Path: p, Data: data, Executable: info.Mode().Perm()&0o111 != 0})
		default:
			return im.fail(p, CodeSpecialFile, "it is a %s, not a regular file or folder", modeKind(info.Mode()))
		}
	}
	return nil
}

func (im *dirImport) read(p string, info fs.FileInfo) ([]byte, error) {
	const max = skill.DefaultMaxFileSize
	if info.Size() > max {
		return nil, im.fail(p, skill.CodeTooLarge, "the file is %d bytes, over the %d-byte limit per file", info.Size(), max)
	}
	// The shared safe open: O_NONBLOCK and a type check on the handle, so
	// a FIFO or device swapped in after the listing is refused instead of
	// blocking the import.
	f, _, err := safefile.OpenIn(im.root, p)
	if err != nil {
		if se, ok := skill.AsServeError(err); ok {
			if se.Code == skill.CodeSymlinkEscapes {
				return nil, &Error{Source: im.src, Entry: p, Code: CodeSymlinkEscapes, Msg: "the symbolic link leads outside the skill folder; a skill may only link to its own files", Err: err}
			}
			return nil, &Error{Source: im.src, Entry: p, Code: CodeSpecialFile, Msg: "it is not a regular file (it changed after the folder was listed)", Err: err}
		}
		return nil, &Error{Source: im.src, Entry: p, Code: CodeRead, Msg: err.Error(), Err: err}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, &Error{Source: im.src, Entry: p, Code: CodeRead, Msg: err.Error(), Err: err}
	}
	if len(data) > max {
		return nil, im.fail(p, skill.CodeTooLarge, "the file is over the %d-byte limit per file", max)
	}
	im.total += int64(len(data))
	if im.total > skill.DefaultMaxTotalSize {
		return nil, im.fail(p, skill.CodeTooLarge, "the skill is over %d bytes in all", skill.DefaultMaxTotalSize)
	}
	return data, nil
}

// ExportDir writes b into the folder dir, creating it (and its parents)
// if needed, and refuses a folder that already has entries. Every write
// goes through os.Root. SKILL.md and other files get mode 0644, executable
// files 0755 (set explicitly, whatever the umask), folders 0755. The
// bundle is checked first (on a copy). On failure the folder may hold
// part of the skill.
func ExportDir(dir string, b *skill.Bundle) error {
	c, _, err := checked("bundle", b)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &Error{Source: dir, Code: CodeWrite, Msg: err.Error(), Err: err}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return &Error{Source: dir, Code: CodeWrite, Msg: err.Error(), Err: err}
	}
	defer root.Close()
	d, err := root.Open(".")
	if err != nil {
		return &Error{Source: dir, Code: CodeWrite, Msg: err.Error(), Err: err}
	}
	names, err := d.Readdirnames(1)
	d.Close()
	if len(names) > 0 {
		return &Error{Source: dir, Code: CodeDirNotEmpty, Msg: fmt.Sprintf("the folder is not empty (it holds %q): export into a new or empty folder", names[0])}
	}
	if err != nil && err != io.EOF {
		return &Error{Source: dir, Code: CodeWrite, Msg: err.Error(), Err: err}
	}
	put := func(p string, data []byte, mode fs.FileMode) error {
		fail := func(err error) error {
			return &Error{Source: dir, Entry: p, Code: CodeWrite, Msg: err.Error(), Err: err}
		}
		if parent := path.Dir(p); parent != "." {
			if err := root.MkdirAll(parent, 0o755); err != nil {
				return fail(err)
			}
		}
		f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			return fail(err)
		}
		_, err = f.Write(data)
		if err == nil {
			err = f.Chmod(mode)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fail(err)
		}
		return nil
	}
	if err := put("SKILL.md", c.Content, 0o644); err != nil {
		return err
	}
	for _, f := range c.Files {
		mode := fs.FileMode(0o644)
		if f.Executable {
			mode = 0o755
		}
		if err := put(f.Path, f.Data, mode); err != nil {
			return err
		}
	}
	return nil
}
