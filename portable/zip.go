package portable

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/loadout/loadout/skill"
)

// ZipLimits bound what ImportZip reads. Zero fields take the defaults. The
// bundle must also pass skill.Bundle.Check with MaxFileSize and
// MaxTotalSize (so a store whose limits are above skill's defaults imports
// archives up to its own limits). Importers get them from LimitsFor, the
// one set every way of importing uses.
type ZipLimits struct {
	// MaxEntries caps the entries in the archive, folders and skipped
	// junk included. Default 1000.
	MaxEntries int
	// MaxFileSize caps one file, uncompressed. Default
	// skill.DefaultMaxFileSize (1 MiB).
	MaxFileSize int64
	// MaxTotalSize caps all files together, uncompressed. Default
	// skill.DefaultMaxTotalSize (16 MiB).
	MaxTotalSize int64
	// MaxRatio caps uncompressed/compressed size, per entry and for the
	// whole archive; entries (and archives) under RatioFloor bytes are
	// exempt, since a small file of blanks legitimately compresses well.
	// Default 100.
	MaxRatio float64
}

// Default zip limits.
const (
	DefaultMaxEntries = 1000
	DefaultMaxRatio   = 100
	// RatioFloor is the uncompressed size below which the compression
	// ratio is not checked.
	RatioFloor = 64 << 10
)

func (l ZipLimits) withDefaults() ZipLimits {
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = skill.DefaultMaxFileSize
	}
	if l.MaxTotalSize <= 0 {
		l.MaxTotalSize = skill.DefaultMaxTotalSize
	}
	if l.MaxRatio <= 0 {
		l.MaxRatio = DefaultMaxRatio
	}
	return l
}

// zipTime is the modification time of every exported entry, so exports are
// deterministic: the start of the MS-DOS epoch.
var zipTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// ExportZip writes b as a zip archive in the layout Anthropic's and OpenAI's
// skill APIs use: one top-level folder, name, with SKILL.md at its root.
// An empty name means the skill's name. Entries are SKILL.md, then the
// files in path order, all with the same fixed modification time, so the
// same bundle always gives the same bytes. Executable files get Unix mode
// 0755, others 0644. No folder entries are written. A file whose
// compression ratio would exceed half of DefaultMaxRatio is stored
// uncompressed, so every export imports again under the default limits.
func ExportZip(w io.Writer, name string, b *skill.Bundle) error {
	c, doc, err := checked("bundle", b)
	if err != nil {
		return err
	}
	if name == "" {
		name = doc.Name
	}
	if clean, err := skill.CleanPath(name); err != nil || clean != name || strings.Contains(name, "/") || isJunk(name) {
		return &Error{Source: "zip", Entry: name, Code: CodeFolderName, Msg: "the zip's top-level folder must be one plain folder name, like the skill's name"}
	}
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.DefaultCompression)
	})
	put := func(p string, data []byte, exec bool) error {
		fh := &zip.FileHeader{Name: name + "/" + p, Method: zip.Deflate, Modified: zipTime}
		mode := fs.FileMode(0o644)
		if exec {
			mode = 0o755
		}
		fh.SetMode(mode)
		if n := deflatedSize(data); n >= len(data) || len(data) >= RatioFloor && len(data) > n*DefaultMaxRatio/2 {
			fh.Method = zip.Store
		}
		fw, err := zw.CreateHeader(fh)
		if err == nil {
			_, err = fw.Write(data)
		}
		if err != nil {
			return &Error{Source: "zip", Entry: fh.Name, Code: CodeWrite, Msg: err.Error(), Err: err}
		}
		return nil
	}
	if err := put("SKILL.md", c.Content, false); err != nil {
		return err
	}
	for _, f := range c.Files {
		if err := put(f.Path, f.Data, f.Executable); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return &Error{Source: "zip", Code: CodeWrite, Msg: err.Error(), Err: err}
	}
	return nil
}

type countWriter struct{ n int }

func (c *countWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }

// deflatedSize is the size data compresses to with the compressor
// ExportZip uses.
func deflatedSize(data []byte) int {
	var c countWriter
	fw, _ := flate.NewWriter(&c, flate.DefaultCompression)
	fw.Write(data)
	fw.Close()
	return c.n
}

// ImportZipFile is ImportZip on a file; errors name the file as their
// Source.
func ImportZipFile(path string, lim ZipLimits) (*skill.Bundle, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Source: path, Code: CodeRead, Msg: err.Error(), Err: err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &Error{Source: path, Code: CodeRead, Msg: err.Error(), Err: err}
	}
	return importZip(path, f, st.Size(), lim)
}

// ImportZip reads a skill from a zip archive: either one top-level folder
// (any name) with SKILL.md at its root, which is stripped, or SKILL.md at
// the archive's root. skill.md is accepted where SKILL.md is missing.
//
// It is safe on hostile archives. It refuses symbolic links and other
// special entries, encrypted entries, absolute paths, "..", backslashes and
// drive letters (every entry name goes through skill.CleanPath, and after
// the top folder is stripped through skill.CleanFilePath, the one shared
// path check), duplicate entries, an archive without SKILL.md at its root
// whose files are not all in one folder (top-level), and a missing
// SKILL.md. It caps the entry count, each
// file's and the total uncompressed size, and the compression ratio,
// first from the sizes the archive declares and then by counting the bytes
// actually inflated, so a header that lies is caught too. Folder entries
// are ignored, and so is macOS junk: anything under a top-level __MACOSX/
// folder and any file named .DS_Store. Other dot files are kept. The
// returned bundle has passed skill.Bundle.Check.
func ImportZip(r io.ReaderAt, size int64, lim ZipLimits) (*skill.Bundle, error) {
	return importZip("zip", r, size, lim)
}

type zipEntry struct {
	f    *zip.File
	name string // clean full name
}

func isJunk(clean string) bool {
	first, _, _ := strings.Cut(clean, "/")
	base := clean[strings.LastIndexByte(clean, '/')+1:]
	return first == "__MACOSX" || base == ".DS_Store"
}

func importZip(source string, r io.ReaderAt, size int64, lim ZipLimits) (*skill.Bundle, error) {
	lim = lim.withDefaults()
	refuse := func(entry, code, format string, args ...any) (*skill.Bundle, error) {
		return nil, &Error{Source: source, Entry: entry, Code: code, Msg: fmt.Sprintf(format, args...)}
	}
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, &Error{Source: source, Code: CodeZipInvalid, Msg: "not a valid zip archive: " + err.Error(), Err: err}
	}
	if n := len(zr.File); n > lim.MaxEntries {
		return refuse("", CodeTooManyEntries, "the archive has %d entries, over the limit of %d", n, lim.MaxEntries)
	}
	var entries []zipEntry
	seen := map[string]string{}
	var declared, compressed uint64
	for _, f := range zr.File {
		mode := f.Mode()
		if mode&fs.ModeSymlink != 0 {
			return refuse(f.Name, CodeSymlink, "the entry is a symbolic link; skill archives may not hold links: replace it with the file it points to")
		}
		if mode.IsDir() || strings.HasSuffix(f.Name, "/") {
			continue
		}
		if !mode.IsRegular() {
			return refuse(f.Name, CodeSpecialFile, "the entry is a %s, not a regular file", modeKind(mode))
		}
		clean, err := skill.CleanPath(f.Name)
		if err != nil {
			var pe *skill.PathError
			errors.As(err, &pe)
			return nil, &Error{Source: source, Entry: f.Name, Code: pe.Code, Msg: pe.Reason, Err: err}
		}
		if isJunk(clean) {
			continue
		}
		if prev, dup := seen[clean]; dup {
			if prev == f.Name {
				return refuse(f.Name, CodeDuplicateEntry, "the archive holds this entry twice")
			}
			return refuse(f.Name, CodeDuplicateEntry, "the entry has the same path as %q", prev)
		}
		seen[clean] = f.Name
		if f.Flags&0x1 != 0 {
			return refuse(f.Name, CodeEncrypted, "the entry is encrypted; skill archives must not be")
		}
		if f.UncompressedSize64 > uint64(lim.MaxFileSize) {
			return refuse(f.Name, skill.CodeTooLarge, "the entry is %d bytes uncompressed, over the %d-byte limit per file", f.UncompressedSize64, lim.MaxFileSize)
		}
		if f.UncompressedSize64 >= RatioFloor && float64(f.UncompressedSize64) > lim.MaxRatio*float64(f.CompressedSize64) {
			return refuse(f.Name, CodeRatio, "the entry expands from %d to %d bytes, a ratio over %g (a zip bomb?)", f.CompressedSize64, f.UncompressedSize64, lim.MaxRatio)
		}
		declared += f.UncompressedSize64
		compressed += f.CompressedSize64
		if declared > uint64(lim.MaxTotalSize) {
			return refuse("", skill.CodeTooLarge, "the files are over %d bytes in all, uncompressed, over the limit of %d", declared, lim.MaxTotalSize)
		}
		entries = append(entries, zipEntry{f, clean})
	}
	if declared >= RatioFloor && float64(declared) > lim.MaxRatio*float64(compressed) {
		return refuse("", CodeRatio, "the archive expands from %d to %d bytes, a ratio over %g (a zip bomb?)", compressed, declared, lim.MaxRatio)
	}

	// Layout: SKILL.md at the root, or one top-level folder holding it.
	prefix := ""
	if _, ok := seen["SKILL.md"]; !ok {
		if _, ok := seen["skill.md"]; !ok {
			var tops []string
			for _, e := range entries {
				top, _, _ := strings.Cut(e.name, "/")
				if !contains(tops, top) {
					tops = append(tops, top)
				}
			}
			switch {
			case len(tops) == 0:
				return refuse("", CodeSkillMDMissing, "the archive holds no files: a skill archive holds a folder with SKILL.md at its root")
			case len(tops) > 1:
				return refuse(tops[1], CodeTopLevel, "the archive has %d entries at its top level (%s): a skill archive holds one folder with SKILL.md at its root, or SKILL.md at the top", len(tops), quoteList(tops, 5))
			}
			if _, isFile := seen[tops[0]]; isFile {
				return refuse("SKILL.md", CodeSkillMDMissing, "the archive has no SKILL.md: a skill archive holds a folder with SKILL.md at its root")
			}
			prefix = tops[0] + "/"
			if _, ok := seen[prefix+"SKILL.md"]; !ok {
				if _, ok := seen[prefix+"skill.md"]; !ok {
					return refuse(prefix+"SKILL.md", CodeSkillMDMissing, "the archive's folder %q has no SKILL.md at its root", tops[0])
				}
			}
		}
	}
	entryFile := prefix + "SKILL.md"
	if _, ok := seen[entryFile]; !ok {
		entryFile = prefix + "skill.md"
	}

	b := &skill.Bundle{}
	var total int64
	for _, e := range entries {
		var rel string
		if e.name != entryFile {
			if !strings.HasPrefix(e.name, prefix) {
				return refuse(e.f.Name, CodeTopLevel, "the entry is outside the archive's folder %q", strings.TrimSuffix(prefix, "/"))
			}
			clean, err := skill.CleanFilePath(e.name[len(prefix):])
			if err != nil {
				var pe *skill.PathError
				errors.As(err, &pe)
				return nil, &Error{Source: source, Entry: e.f.Name, Code: pe.Code, Msg: pe.Reason, Err: err}
			}
			rel = clean
		}
		data, err := readEntry(source, e.f, lim)
		if err != nil {
			return nil, err
		}
		total += int64(len(data))
		if total > lim.MaxTotalSize {
			return refuse(e.f.Name, skill.CodeTooLarge, "the files are over %d bytes in all, uncompressed, over the limit of %d", total, lim.MaxTotalSize)
		}
		if rel == "" {
			b.Content = data
			continue
		}
		b.Files = append(b.Files, skill.BundleFile{Path: rel, Data: data, Executable: e.f.Mode().Perm()&0o111 != 0})
	}
	if _, _, err := b.Check(skill.Limits{MaxFileSize: lim.MaxFileSize, MaxTotalSize: lim.MaxTotalSize}); err != nil {
		return nil, checkError(source, err, func(p string) string {
			if p == "SKILL.md" {
				return seen[entryFile]
			}
			if name, ok := seen[prefix+p]; ok {
				return name
			}
			return p
		})
	}
	return b, nil
}

// readEntry inflates one entry, trusting neither its declared size nor the
// caller: at most min(declared, MaxFileSize)+1 bytes are read.
func readEntry(source string, f *zip.File, lim ZipLimits) ([]byte, error) {
	fail := func(code, format string, args ...any) ([]byte, error) {
		return nil, &Error{Source: source, Entry: f.Name, Code: code, Msg: fmt.Sprintf(format, args...)}
	}
	limit := min(int64(f.UncompressedSize64), lim.MaxFileSize)
	rc, err := f.Open()
	if err != nil {
		return fail(CodeZipInvalid, "the entry cannot be read: %v", err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if int64(len(data)) > limit { // not trusting archive/zip to stop at the declared size
		if int64(len(data)) > int64(f.UncompressedSize64) {
			return fail(CodeSizeMismatch, "the entry inflates to more than the %d bytes its header declares", f.UncompressedSize64)
		}
		return fail(skill.CodeTooLarge, "the entry is over the %d-byte limit per file", lim.MaxFileSize)
	}
	if errors.Is(err, zip.ErrFormat) {
		// While reading, archive/zip reports ErrFormat only when the entry
		// inflates past its declared size (it counts too).
		return fail(CodeSizeMismatch, "the entry inflates to more than the %d bytes its header declares", f.UncompressedSize64)
	}
	if err != nil {
		return fail(CodeZipInvalid, "the entry is corrupt: %v", err)
	}
	if f.CompressedSize64 > 0 && int64(len(data)) >= RatioFloor && float64(len(data)) > lim.MaxRatio*float64(f.CompressedSize64) {
		return fail(CodeRatio, "the entry expands from %d to %d bytes, a ratio over %g (a zip bomb?)", f.CompressedSize64, len(data), lim.MaxRatio)
	}
	return data, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func quoteList(list []string, max int) string {
	var b bytes.Buffer
	for i, s := range list {
		if i == max {
			fmt.Fprintf(&b, ", and %d more", len(list)-max)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", s)
	}
	return b.String()
}

func modeKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}
