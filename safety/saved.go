package safety

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/loadout/loadout/skill"
)

// Saved keeps the findings of whole skills from one run to the next, in a
// file (loadout check keeps it in the user's cache folder), so that a
// skill whose files did not change is not read or scanned again: at
// 10,000 unchanged skills, no file but SKILL.md's frontmatter is read.
//
// A folder skill is known by its skill.Skill.Stamp (the stat of every
// file as the scan saw it; editing a file always moves its change time,
// which no program can set back), a stored skill by its content digest
// (VersionDigest); with them go its name, description, paths and the
// policy's scan bounds, hashed with a secret kept in the file. A skill
// with neither is read and checked every time.
//
// The file names the program that wrote it (the executable's path, size
// and time): another build, whose rules may differ, starts from nothing.
// It holds at most MaxSavedEntries skills, those of the last run first.
// Safe for concurrent use.
type Saved struct {
	mu     sync.Mutex
	secret [32]byte
	exe    string
	// table is the loaded file's records, sorted by key, recSize bytes
	// each: the key, then its findings' index in found (little endian).
	// It is read in place: at 50,000 skills, 1 MB where a map took 2.4.
	table []byte
	seen  []uint64    // bit i: this run looked up record i of table
	added []record    // this run's checks (misses), in no order
	found [][]finding // found[0] is nil (no findings)

	hits, misses, unstamped int
	max                     int // MaxSavedEntries
}

type savedKey = [16]byte

type record struct {
	key savedKey
	i   uint32
}

const recSize = len(savedKey{}) + 4

// MaxSavedEntries bounds the skills a saved-findings file holds.
const MaxSavedEntries = 1 << 18

// MaxSavedBytes bounds the size of a saved-findings file read: a larger
// one is not read (and is replaced).
const MaxSavedBytes = 64 << 20

const savedMagic = "loadout safety findings 2\n"

// NewSaved returns an empty Saved.
func NewSaved() *Saved {
	s := &Saved{max: MaxSavedEntries, exe: exeIdentity(), found: [][]finding{nil}}
	if _, err := rand.Read(s.secret[:]); err != nil {
		panic(err) // crypto/rand never fails on supported systems
	}
	return s
}

func (s *Saved) records() int { return len(s.table) / recSize }

func (s *Saved) rec(i int) record {
	b := s.table[i*recSize:]
	var r record
	copy(r.key[:], b)
	r.i = binary.LittleEndian.Uint32(b[len(r.key):])
	return r
}

// exeIdentity names this build of the program: its path and its file's
// identity. A rebuild (new rules) has another.
func exeIdentity() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(p)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s %d %d", p, fi.Size(), fi.ModTime().UnixNano())
}

// LoadSaved reads the findings saved at path.
// A missing file is an empty Saved and no error. A file another build
// wrote is an empty Saved too. A file that cannot be read, is over
// MaxSavedBytes or is not one this package wrote is an empty Saved and an
// error naming the file and what is wrong; saving replaces it.
func LoadSaved(path string) (*Saved, error) {
	s := NewSaved()
	// O_NONBLOCK: a FIFO put there is refused below, never waited on.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("saved findings %s: %w; it is replaced", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return s, fmt.Errorf("saved findings %s: not a regular file; remove it, or set LOADOUT_CACHE to another folder", path)
	}
	if fi.Size() > MaxSavedBytes {
		return s, fmt.Errorf("saved findings %s: over %d bytes; it is replaced", path, MaxSavedBytes)
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return s, fmt.Errorf("saved findings %s: %w; it is replaced", path, err)
	}
	if err := s.decode(data); err != nil {
		s.table, s.seen, s.found = nil, nil, [][]finding{nil}
		return s, fmt.Errorf("saved findings %s: %v; it is replaced", path, err)
	}
	return s, nil
}

// decode reads a file's bytes into s. Every count and length is checked
// against what is left, so no input allocates more than its own size.
func (s *Saved) decode(data []byte) error {
	r := &savedReader{b: data}
	if !bytes.HasPrefix(data, []byte(savedMagic)) {
		return errors.New("not a saved-findings file")
	}
	r.b = r.b[len(savedMagic):]
	exe := r.str()
	var secret [32]byte
	r.bytes(secret[:])
	n := r.count(recSize)
	if r.err != nil {
		return r.err
	}
	if exe != s.exe || s.exe == "" {
		return nil // another build's: start from nothing
	}
	table := r.b[:n*recSize]
	r.b = r.b[n*recSize:]
	nf := r.count(1)
	found := make([][]finding, 1, nf+1)
	for range nf {
		m := r.count(4)
		if r.err == nil && m == 0 {
			r.fail("an empty list of findings")
		}
		fs := make([]finding, 0, m)
		for range m {
			fs = append(fs, finding{code: r.str(), path: r.str(), field: r.str(), msg: r.str()})
		}
		if r.err != nil {
			return r.err
		}
		found = append(found, fs)
	}
	if r.err != nil {
		return r.err
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%d bytes after the last entry", len(r.b))
	}
	s.table = table
	for i := range n {
		if i > 0 && bytes.Compare(table[(i-1)*recSize:(i-1)*recSize+16], table[i*recSize:i*recSize+16]) >= 0 {
			s.table = nil
			return fmt.Errorf("entry %d out of order", i)
		}
		if s.rec(i).i >= uint32(len(found)) {
			s.table = nil
			return fmt.Errorf("entry %d names findings that are not there", i)
		}
	}
	s.secret, s.found = secret, found
	s.seen = make([]uint64, (n+63)/64)
	return nil
}

type savedReader struct {
	b   []byte
	err error
}

func (r *savedReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("cut short or damaged at %s", what)
	}
}

func (r *savedReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("a number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a count of items each at least min bytes long.
func (r *savedReader) count(min int) int {
	v := r.uvarint()
	if r.err == nil && v > uint64(len(r.b)/min) {
		r.fail("a count")
		return 0
	}
	return int(v)
}

func (r *savedReader) str() string {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.fail("a text")
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *savedReader) bytes(dst []byte) {
	if r.err != nil || len(r.b) < len(dst) {
		r.fail("a key")
		return
	}
	copy(dst, r.b)
	r.b = r.b[len(dst):]
}

// Save writes the findings to path: this run's skills first, then those
// loaded and not seen this run, MaxSavedEntries in all. The file is
// written beside path and renamed over it, so a reader never sees half a
// file and two runs saving at once leave one of theirs.
func (s *Saved) Save(path string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("saving findings: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".saved-*")
	if err != nil {
		return fmt.Errorf("saving findings: %w", err)
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriter(tmp)
	var num [binary.MaxVarintLen64]byte
	uv := func(v uint64) { w.Write(num[:binary.PutUvarint(num[:], v)]) }
	str := func(v string) { uv(uint64(len(v))); w.WriteString(v) }
	w.WriteString(savedMagic)
	str(s.exe)
	w.Write(s.secret[:])
	// This run's first, then the earlier ones: at most max, in key
	// order, each list of findings once.
	var keep []record
	for i := range s.records() {
		if s.seen[i/64]&(1<<(i%64)) != 0 {
			keep = append(keep, s.rec(i))
		}
	}
	keep = append(keep, s.added...)
	keep = keep[:min(len(keep), s.max)]
	for i := range s.records() {
		if len(keep) >= s.max {
			break
		}
		if s.seen[i/64]&(1<<(i%64)) == 0 {
			keep = append(keep, s.rec(i))
		}
	}
	slices.SortFunc(keep, func(a, b record) int { return bytes.Compare(a.key[:], b.key[:]) })
	keep = slices.CompactFunc(keep, func(a, b record) bool { return a.key == b.key })
	uv(uint64(len(keep)))
	var lists [][]finding
	var le [4]byte
	for _, r := range keep {
		w.Write(r.key[:])
		i := uint32(0)
		if r.i != 0 {
			lists = append(lists, s.found[r.i])
			i = uint32(len(lists))
		}
		binary.LittleEndian.PutUint32(le[:], i)
		w.Write(le[:])
	}
	uv(uint64(len(lists)))
	for _, fs := range lists {
		uv(uint64(len(fs)))
		for _, f := range fs {
			str(f.code)
			str(f.path)
			str(f.field)
			str(f.msg)
		}
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return fmt.Errorf("saving findings: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("saving findings: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("saving findings: %w", err)
	}
	return nil
}

// SavedStats counts what a run did with the saved findings.
type SavedStats struct {
	Hits      int // skills whose findings were saved: not read
	Misses    int // skills read and checked
	Unstamped int // of the misses, those without a Stamp or digest: not saved
}

// Stats reports the run's counts so far.
func (s *Saved) Stats() SavedStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return SavedStats{Hits: s.hits, Misses: s.misses, Unstamped: s.unstamped}
}

// CheckSkill is Check of a loaded skill: its findings from saved (nil: no
// saved findings) when its stamp is there, else its files read into buf
// (see FromSkillBuffer), checked through cache (see CheckCached) and
// remembered in saved. It returns buf for the next skill.
func CheckSkill(sk *skill.Skill, p *Policy, cache *Cache, saved *Saved, buf []byte) ([]skill.Diagnostic, []byte, error) {
	p = p.orDefault()
	var key savedKey
	var stamped bool
	if saved != nil {
		key, stamped = saved.key(sk, p)
		if stamped {
			if fs, ok := saved.lookup(key); ok {
				return p.apply(sk.Name, slices.Clone(fs)), buf, nil
			}
		}
	}
	in, buf, err := FromSkillBuffer(sk, p, buf)
	if err != nil {
		return nil, buf, err
	}
	fs, shared := findings(in, p, cache)
	if saved != nil {
		saved.remember(key, stamped, fs)
	}
	if shared {
		fs = slices.Clone(fs)
	}
	return p.apply(sk.Name, fs), buf, nil
}

func (s *Saved) lookup(k savedKey) ([]finding, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.records()
	i := sort.Search(n, func(i int) bool { return bytes.Compare(s.table[i*recSize:i*recSize+16], k[:]) >= 0 })
	if i == n || !bytes.Equal(s.table[i*recSize:i*recSize+16], k[:]) {
		return nil, false
	}
	s.seen[i/64] |= 1 << (i % 64)
	s.hits++
	return s.found[s.rec(i).i], true
}

// remember keeps fs under k when the skill has a key; it counts the miss.
func (s *Saved) remember(k savedKey, keep bool, fs []finding) {
	var kept []finding
	if keep && len(fs) > 0 {
		kept = make([]finding, len(fs))
		for i, f := range fs {
			kept[i] = finding{code: f.code, path: strings.Clone(f.path), field: strings.Clone(f.field), msg: strings.Clone(f.msg)}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.misses++
	if !keep {
		s.unstamped++
		return
	}
	i := uint32(0)
	if kept != nil {
		i = uint32(len(s.found))
		s.found = append(s.found, kept)
	}
	s.added = append(s.added, record{k, i})
}

// key is sk's key: its Stamp (a folder skill) or its VersionDigest (a
// stored one), with what else Check reads of it. ok is false when it has
// neither: it is read and checked, and not saved.
func (s *Saved) key(sk *skill.Skill, p *Policy) (key savedKey, ok bool) {
	var id string
	switch {
	case sk.Stamp != [16]byte{}:
		id = "stamp\x00" + string(sk.Stamp[:])
	case sk.VersionDigest != "":
		id = "digest\x00" + sk.VersionDigest
	default:
		return key, false
	}
	p = p.orDefault()
	// One buffer, hashed once: a key a skill, at 50,000 skills, made no
	// garbage for the collector that runs back to back near check's
	// memory limit.
	bp := keyBufs.Get().(*[]byte)
	b := append((*bp)[:0], s.secret[:]...)
	field := func(v string) {
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	field(id)
	b = binary.AppendVarint(b, p.maxScan())
	b = binary.AppendVarint(b, int64(p.maxLines()))
	field(sk.Name)
	field(sk.Description)
	field(sk.Dir)
	field(sk.Entry)
	for _, f := range sk.Files {
		field(f.Path)
		field(f.ContentType)
		b = append(b, flag(f.Binary), flag(f.Executable))
	}
	sum := sha256.Sum256(b)
	copy(key[:], sum[:])
	if cap(b) <= 64<<10 {
		*bp = b[:0]
		keyBufs.Put(bp)
	}
	return key, true
}

var keyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func flag(v bool) byte {
	if v {
		return 1
	}
	return 0
}
