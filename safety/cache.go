package safety

import (
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
)

// Cache keeps the findings of each file, and of each whole skill, by a
// digest of what was checked, so that a file checked before (the same
// bytes in another skill, as the shared scripts of a collection often
// are) or a skill read again after a reload is not scanned again. It is
// safe for concurrent use and small: an entry is 24 bytes and a shared
// index (most files have no findings), and past MaxEntries it starts over.
//
// The digest is 128 bits of maphash under two seeds chosen at random when
// the cache is made, with the length and the kind of file mixed in:
// unlike a fixed hash, an author cannot craft a file that collides with a
// clean one without knowing the seeds, and it costs a fraction of a
// SHA-256 on every file checked.
type Cache struct {
	mu    sync.Mutex
	seeds [2]maphash.Seed
	m     map[[2]uint64]int32 // digest -> index in found (0: no findings)
	found [][]finding         // found[0] is nil
	// MaxEntries bounds the entries kept (default 1<<16, about 2 MB).
	MaxEntries int
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
}

// Len reports how many entries the cache holds.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

type cacheKey = [2]uint64

// digest hashes the parts given to h (both seeds).
type digest struct{ h [2]maphash.Hash }

func (c *Cache) newDigest() *digest {
	d := &digest{}
	d.h[0].SetSeed(c.seeds[0])
	d.h[1].SetSeed(c.seeds[1])
	return d
}

func (d *digest) str(s string) {
	for i := range d.h {
		d.h[i].WriteString(s)
		d.h[i].WriteByte(0)
	}
}

func (d *digest) bytes(b []byte) {
	for i := range d.h {
		d.h[i].Write(b)
	}
}

func (d *digest) sum() cacheKey { return cacheKey{d.h[0].Sum64(), d.h[1].Sum64()} }

func (c *Cache) key(data []byte, kind uint8, max int64) cacheKey {
	// The length is the whole file's (a cut file says how long it is);
	// the bytes are those scanned.
	d := c.newDigest()
	d.str("file " + strconv.Itoa(int(kind)) + " " + strconv.Itoa(len(data)))
	d.bytes(data[:min(int64(len(data)), max)])
	return d.sum()
}

// skillKey is the digest of everything Check reads of a skill but the
// policy's severities: name, description, every file's path, flags and
// bytes.
func (c *Cache) skillKey(in Input, max int64) cacheKey {
	d := c.newDigest()
	d.str("skill")
	d.str(in.Name)
	d.str(in.Description)
	d.str(strconv.FormatBool(in.FilesUnknown) + " " + strconv.Itoa(len(in.Content)))
	d.bytes(in.Content[:min(int64(len(in.Content)), max)])
	for _, f := range in.Files {
		d.str(f.Path)
		d.str(strconv.FormatBool(f.Executable) + strconv.FormatBool(f.Binary) + f.ContentType + " " + strconv.Itoa(len(f.Data)))
		d.bytes(f.Data[:min(int64(len(f.Data)), max)])
	}
	return d.sum()
}

func (c *Cache) get(k cacheKey) ([]finding, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, ok := c.m[k]
	if !ok {
		return nil, false
	}
	return c.found[i], true
}

// put keeps a copy of fs that shares nothing with the checked bytes.
func (c *Cache) put(k cacheKey, fs []finding) {
	var kept []finding
	if len(fs) > 0 {
		kept = make([]finding, len(fs))
		for i, f := range fs {
			kept[i] = finding{code: f.code, path: strings.Clone(f.path), field: strings.Clone(f.field), msg: strings.Clone(f.msg)}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	max := c.MaxEntries
	if max <= 0 {
		max = 1 << 16
	}
	if c.m == nil || len(c.m) >= max {
		c.m, c.found = make(map[cacheKey]int32), [][]finding{nil}
	}
	i := int32(0)
	if kept != nil {
		i = int32(len(c.found))
		c.found = append(c.found, kept)
	}
	c.m[k] = i
}
