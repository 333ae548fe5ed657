package safety

import (
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
)

// Cache keeps the findings of each file by a digest of its content, so
// that a file checked before (the same bytes in another skill, as the
// shared scripts of a collection often are, or a skill read again after
// a reload) is not scanned again. It is safe for concurrent use and
// bounded: past MaxEntries it starts over.
//
// The digest is 128 bits of maphash under two seeds chosen at random when
// the cache is made, with the length: unlike a fixed hash, an author cannot
// craft a file that collides with a clean one without knowing the seeds,
// and it costs a fraction of a SHA-256 on every file checked.
type Cache struct {
	mu    sync.Mutex
	seeds [2]maphash.Seed
	m     map[cacheKey][]finding
	// MaxEntries bounds the files remembered (default 1<<18).
	MaxEntries int
}

type cacheKey struct {
	a, b uint64
	n    int64
	kind uint8
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
}

// Len reports how many files the cache holds.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

func (c *Cache) key(data []byte, kind uint8, max int64) cacheKey {
	// The length is the whole file's (a cut file says how long it is);
	// the bytes are those scanned.
	k := cacheKey{n: int64(len(data)), kind: kind}
	if k.n > max {
		data = data[:max]
	}
	k.a, k.b = maphash.Bytes(c.seeds[0], data), maphash.Bytes(c.seeds[1], data)
	return k
}

func (c *Cache) get(k cacheKey) ([]finding, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fs, ok := c.m[k]
	return fs, ok
}

// skillKey is the digest of everything Check reads of a skill but the
// policy's severities: name, description, every file's path, flags and
// bytes. Kind 255 marks it as a skill's.
func (c *Cache) skillKey(in Input, max int64) cacheKey {
	var h [2]maphash.Hash
	for i := range h {
		h[i].SetSeed(c.seeds[i])
	}
	n := int64(0)
	str := func(s string) {
		for i := range h {
			h[i].WriteString(s)
			h[i].WriteByte(0)
		}
		n += int64(len(s)) + 1
	}
	byt := func(b []byte) {
		if int64(len(b)) > max {
			b = b[:max]
		}
		for i := range h {
			h[i].Write(b)
		}
	}
	str(in.Name)
	str(in.Description)
	str(strconv.FormatBool(in.FilesUnknown))
	str(strconv.Itoa(len(in.Content)))
	byt(in.Content)
	for _, f := range in.Files {
		str(f.Path)
		str(strconv.FormatBool(f.Executable) + strconv.FormatBool(f.Binary) + f.ContentType + strconv.Itoa(len(f.Data)))
		byt(f.Data)
	}
	return cacheKey{a: h[0].Sum64(), b: h[1].Sum64(), n: n, kind: 255}
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
		max = 1 << 18
	}
	if c.m == nil || len(c.m) >= max {
		c.m = make(map[cacheKey][]finding)
	}
	c.m[k] = kept
}
