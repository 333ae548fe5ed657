package skill

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Origin says where a skill came from. It travels with the skill into
// listings, activation results, exports and receipts.
type Origin struct {
	// Kind is "folder", "store", "plugin", or "git", "index" or "oci" for
	// a remote source's skill.
	Kind string `json:"kind"`
	// Root is the configured folder the skill was found under (folder
	// skills), the plugin's folder (plugin skills), or the remote source's
	// URL without credentials (git and index skills).
	Root string `json:"root,omitempty"`
	// Ref and Revision are set for remote skills: the configured branch,
	// tag or commit (if any), and the commit or index digest the snapshot
	// was read at.
	Ref      string `json:"ref,omitempty"`
	Revision string `json:"revision,omitempty"`
	// Plugin and Trust are set for plugin skills.
	Plugin string `json:"plugin,omitempty"`
	Trust  string `json:"trust,omitempty"`
	// Version is the store's version number, when there is one.
	Version int `json:"version,omitempty"`
	// Provenance says where the skill's bytes came from, when known: the
	// file, archive or URL a stored skill was imported from, the plugin's
	// version, or a remote skill's folder in its source.
	Provenance string `json:"provenance,omitempty"`
}

// Remote reports whether o is a remote source's: kind "git", "index" or
// "oci".
func (o Origin) Remote() bool { return o.Kind == "git" || o.Kind == "index" || o.Kind == "oci" }

// RemoteText is a remote skill's origin in one line, "URL@REF REVISION
// FOLDER" (no @REF without a ref); "" for other kinds.
func (o Origin) RemoteText() string {
	if !o.Remote() {
		return ""
	}
	src := o.Root
	if o.Ref != "" {
		src += "@" + o.Ref
	}
	return strings.TrimSpace(strings.Join([]string{src, o.Revision, o.Provenance}, " "))
}

// File is one supporting file of a skill, as listed in its manifest. Files
// are listed, never read, at discovery.
type File struct {
	// Path is relative to the skill folder, with forward slashes.
	Path        string `json:"path"`
	Size        int64  `json:"size"`
	ContentType string `json:"contentType"`
	Binary      bool   `json:"binary,omitempty"`
	Executable  bool   `json:"executable,omitempty"`
	// Script marks files meant to be run by the agent: executable, under
	// scripts/, or a shell script by extension.
	Script bool `json:"script,omitempty"`
}

// Reader reads a skill's files. Paths given to it have passed CleanPath.
// Folder skills read through os.Root; stored skills from the database.
type Reader interface {
	ReadFile(path string) ([]byte, error)
}

// StampSettle is how long every file of a folder skill must have been
// unchanged when it is scanned for the skill to get a Stamp.
const StampSettle = 2 * time.Second

// Skill is one loaded skill: its metadata, where it lives and its manifest.
// It does not hold the body; Body reads it on demand, so a catalog of ten
// thousand skills stays small. A Skill is immutable once built, and safe for
// concurrent use.
type Skill struct {
	Name        string
	Description string
	Meta        *Frontmatter
	// Dir is the absolute, symlink-free path of the skill folder, or a
	// virtual location (store://…, plugin://…) for skills that do not live
	// on disk.
	Dir string
	// Location is the entry file: Dir + "/SKILL.md" (or skill.md).
	Location string
	// Entry is the name of the entry file inside Dir: "SKILL.md" or "skill.md".
	Entry string
	// Files is the manifest of supporting files, sorted by path. The entry
	// file is not in it.
	Files []File
	// Dirs are the skill's folders that hold no listed file at any depth
	// (empty folders), sorted; a folder that holds a file is implied by
	// Files and not repeated here. Only folder skills have them: a store
	// holds files, never a folder without one. They are not part of any
	// digest and are served only as empty directory listings.
	Dirs []string
	// Origin says where the skill came from. It is never nil in a Skill
	// that New, Batch.New or a loadout source made; the skills of one
	// source share it (a folder's skills, 120 bytes each when it was held
	// by value), so it must not be changed: replace it instead.
	Origin *Origin
	// Virtual is true when Dir is not a real folder, so the model must read
	// files through the read_skill_file tool, not the file system.
	Virtual bool
	// VersionDigest identifies the exact version, when the source knows it
	// (the store's bundle digest). See ContentDigest.
	VersionDigest string
	// Stamp identifies what a folder source saw of the skill's files when
	// it scanned them: each file's path, size, mode, inode, modification
	// and change time, and the folder's identity (a SHA-256). Rewriting a
	// file always moves its change time, which no program can set back,
	// so a skill with the same Stamp as before has the same bytes, and a
	// cache may keep what it learnt from reading them (safety.Saved). It
	// is zero when the source cannot vouch for that: not a folder skill
	// (see VersionDigest), a system whose change times it does not read,
	// or a file changed within StampSettle of the scan, which a write in
	// the same clock tick could change again unseen ("racily clean").
	Stamp [16]byte
	// MaxFileSize caps the size of a file read or served whole (ReadFile,
	// OpenWhole, Digest, Bundle): a larger file is refused with a
	// *ServeError (CodeTooLarge) before a byte of it is read, and can
	// still be read in ranges through Open. 0 means no cap. Folder sources
	// set it (source.Options.MaxFileSize); stored and plugin skills are
	// already bounded by the store's limits.
	MaxFileSize int64

	reader Reader
	// kept is the body kept by KeepBody or KeepBodyRef, nil when none is:
	// behind a pointer, so the many skills of a catalog that keep none
	// (every folder skill of check and list) carry 8 bytes for it, not
	// 48 (a Skill is 320 bytes, not 360, a size class of 384).
	kept *keptBody
	// digests maps path -> "sha256:<hex>", and keeps ContentDigest; made
	// on first use, as most skills of a large catalog are never digested.
	digests atomic.Pointer[digestCache]
}

// digestCache is a skill's cached digests. The bundle's is read on every
// load (its receipt names it): a pointer load, where a sync.Map lookup
// hashed the key and walked the map's nodes, cold memory on a load spread
// over many skills (1 µs of a 50 µs load).
type digestCache struct {
	bundle atomic.Pointer[string]
	files  sync.Map // path -> "sha256:<hex>"
}

// New builds a Skill. reader serves its files (including the entry file).
// Dir and Location share one string. origin is shared, not copied: the
// skills of one source point to one Origin, which must not change after
// (nil stands for an empty one).
func New(doc *Document, dir, entry string, files []File, origin *Origin, reader Reader) *Skill {
	if origin == nil {
		origin = &Origin{}
	}
	loc := dir + "/" + entry
	s := &Skill{
		Name:        doc.Name,
		Description: doc.Description,
		Meta:        &doc.Frontmatter,
		Dir:         loc[:len(dir)],
		Entry:       entry,
		Location:    loc,
		Files:       files,
		Origin:      origin,
		reader:      reader,
	}
	return s
}

// OriginValue returns a copy of the skill's Origin, the zero Origin when
// it has none (a Skill made as a literal).
func (s *Skill) OriginValue() Origin {
	if s.Origin == nil {
		return Origin{}
	}
	return *s.Origin
}

// keptBody is a body a Skill keeps: in memory (body) or in a BodyFile
// (ref, when ref.Kept()).
type keptBody struct {
	body string
	ref  BodyRef
}

// KeepBody makes the skill hold its body in memory, for skills whose text is
// not cheap to read again (stored, inline) or that a prompt inlines.
func (s *Skill) KeepBody(body string) {
	s.kept = &keptBody{body: body}
}

// KeepBodyRef makes the skill serve the body kept in a BodyFile: the
// version scanned, whatever becomes of the entry file, without holding it
// in memory.
func (s *Skill) KeepBodyRef(r BodyRef) {
	if !r.Kept() {
		s.kept = nil
		return
	}
	s.kept = &keptBody{ref: r}
}

// HasBody reports whether the body is kept, in memory or in a BodyFile:
// Body then returns the version the skill was built from and never reads
// the entry file, so what is made of it can be cached for the life of
// this Skill value.
func (s *Skill) HasBody() bool { return s.kept != nil }

// Body returns the Markdown after the frontmatter. It reads the entry file
// unless the body is kept (KeepBody, KeepBodyRef).
func (s *Skill) Body() (string, error) {
	if k := s.kept; k != nil {
		if k.ref.Kept() {
			return k.ref.Read()
		}
		return k.body, nil
	}
	data, err := s.ReadFile(s.Entry)
	if err != nil {
		return "", err
	}
	_, body, _, err := Split(data)
	if err != nil {
		return "", err
	}
	return body, nil
}

// ErrNotListed is returned for a path that is not in the skill's manifest.
var ErrNotListed = errors.New("not a file of this skill")

// File returns the manifest entry for a clean path.
func (s *Skill) File(path string) (File, bool) {
	lo, hi := 0, len(s.Files)
	for lo < hi {
		m := (lo + hi) / 2
		if s.Files[m].Path < path {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(s.Files) && s.Files[lo].Path == path {
		return s.Files[lo], true
	}
	return File{}, false
}

// ReadFile reads one file of the skill: the entry file or a listed
// supporting file. path must already be clean (CleanPath). Files not in the
// manifest are refused with ErrNotListed wrapped in a fs.PathError; a file
// over MaxFileSize, or whose size is not the manifest's, with a
// *ServeError.
func (s *Skill) ReadFile(path string) ([]byte, error) {
	if _, ok := s.reader.(Opener); ok {
		c, err := s.OpenWhole(path)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		return readAll(c)
	}
	if path != s.Entry {
		if _, ok := s.File(path); !ok {
			return nil, &fs.PathError{Op: "read", Path: path, Err: ErrNotListed}
		}
	}
	if s.reader == nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fs.ErrNotExist}
	}
	data, err := s.reader.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if f, ok := s.File(path); ok && int64(len(data)) != f.Size {
		return nil, &ServeError{Code: CodeFileChanged, Path: path, Size: int64(len(data)), Limit: f.Size,
			Msg: fmt.Sprintf("%s is %d bytes, but its manifest says %d; it is served again once the skill is read again", path, len(data), f.Size)}
	}
	if s.MaxFileSize > 0 && int64(len(data)) > s.MaxFileSize {
		return nil, TooLarge(path, int64(len(data)), s.MaxFileSize)
	}
	return data, nil
}

// Digest returns "sha256:<hex>" of a file's bytes, computed on first use
// (reading the file in pieces) and cached for the life of this Skill value.
func (s *Skill) Digest(path string) (string, error) {
	if d, ok := s.digestCache().files.Load(path); ok {
		return d.(string), nil
	}
	c, err := s.OpenWhole(path)
	if err != nil {
		return "", err
	}
	d, err := DigestOf(c)
	c.Close()
	if err != nil {
		return "", err
	}
	s.digestCache().files.Store(path, d)
	return d, nil
}

// DigestBytes formats the sha256 of data as "sha256:<hex>".
func DigestBytes(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Hidden reports whether the skill must be left out of model-facing
// listings (disable-model-invocation: true).
func (s *Skill) Hidden() bool { return s.Meta != nil && s.Meta.DisableModelInvocation }

// ContentDigest identifies the version of the skill that is served. It is
// the one digest of a skill everywhere (receipts, envelopes, listings,
// exports): Bundle.Digest of the whole skill, the entry file and every
// supporting file's path, executable bit and bytes, so editing a script
// changes it. A source that knows it already (the store) sets
// VersionDigest; otherwise it is computed on first use by streaming each
// file, and cached for the life of this Skill value. It is "" when a file
// cannot be read (it changed since the scan, or is gone).
func (s *Skill) ContentDigest() string {
	if s.VersionDigest != "" {
		return s.VersionDigest
	}
	if c := s.digests.Load(); c != nil {
		if d := c.bundle.Load(); d != nil {
			return *d
		}
	}
	d, err := s.bundleDigest()
	if err != nil {
		return ""
	}
	s.digestCache().bundle.Store(&d)
	return d
}

// digestCache returns the skill's digest cache, making it on first use.
func (s *Skill) digestCache() *digestCache {
	if c := s.digests.Load(); c != nil {
		return c
	}
	s.digests.CompareAndSwap(nil, new(digestCache))
	return s.digests.Load()
}

// copyBufs are bundleDigest's copy buffers: io.Copy made a 32 KiB one for
// every file, and a skill list of 50,000 skills (200,000 files) made
// 6 GB of garbage that way, peaking serve's heap at twice its size.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// bundleDigest is Bundle.Digest of the skill, computed without holding
// any file whole: the same length-prefixed fields, in the same order (the
// manifest is sorted by path, as Check sorts a bundle's files).
func (s *Skill) bundleDigest() (string, error) {
	h := sha256.New()
	field := func(path string) error {
		c, err := s.Open(path)
		if err != nil {
			return err
		}
		defer c.Close()
		fmt.Fprintf(h, "%d:", c.Size())
		buf := copyBufs.Get().(*[]byte)
		defer copyBufs.Put(buf)
		n, err := io.CopyBuffer(h, io.NewSectionReader(c, 0, c.Size()), *buf)
		if err == nil && n != c.Size() {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	if err := field(s.Entry); err != nil {
		return "", err
	}
	for _, f := range s.Files {
		fmt.Fprintf(h, "%d:%s", len(f.Path), f.Path)
		if f.Executable {
			h.Write([]byte{'x'})
		} else {
			h.Write([]byte{'-'})
		}
		if err := field(f.Path); err != nil {
			return "", err
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
