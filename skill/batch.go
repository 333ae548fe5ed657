package skill

import (
	"encoding/binary"
	"unsafe"
)

// Batch holds the skills of one scan that keeps them all until it ends
// and then drops them all (loadout check and list, which read the typed
// frontmatter fields alone), in chunks: the Skill values, their
// frontmatter, their file lists and all their text. Allocated one by one,
// these small values are interleaved in the heap with the several times
// as much short-lived garbage parsing makes, and the collector can free
// little of the memory that garbage took once it is dead: at 50,000
// skills, 22 MB of spans stayed in use for 70 MB of live objects. In
// chunks of their own they leave no such holes, and their text, free of
// pointers, costs the collector no scanning.
//
// A chunk lives as long as any value in it, so a Batch is for skills
// that are dropped together, never for a catalog that reloads skills one
// by one. It is for one goroutine at a time.
type Batch struct {
	skills slab[Skill]
	fms    slab[Frontmatter]
	files  slab[File]
	lists  slab[string]
	text   []byte // the free part of the current text chunk
	// shared holds one copy of each short text seen (see share).
	shared map[string]string

	// SharedMeta makes New keep in Meta only the frontmatter fields a
	// catalog reads to list and check skills (Category, RequiresTools and
	// DisableModelInvocation; Name and Description are left empty, as the
	// Skill holds them, and Version and Tags, which search and loadout
	// list read, are dropped), in one Frontmatter value shared by every
	// skill of b whose fields are equal. That value must not be changed.
	// It is for commands that read nothing else of the frontmatter
	// (loadout prompt and check): the Frontmatter of each skill was 208
	// bytes, 10 MB at 50,000 skills, for fields most skills leave empty
	// or repeat.
	SharedMeta bool
	metas      map[string]*Frontmatter // by metaKey, while SharedMeta
	key        []byte                  // metaKey's buffer
	interned   map[string]string       // see Intern
}

// NewBatch returns an empty Batch.
func NewBatch() *Batch { return &Batch{} }

// Batch chunk sizes: large enough that a chunk's header and the part of
// the last chunk left unused are small beside what a chunk holds, small
// enough that the last chunk of each worker wastes little.
const (
	batchTextChunk = 32 << 10 // bytes of text
	batchChunk     = 64       // Skill and Frontmatter values
	batchFileChunk = 256      // File and string values
	// A Batch keeps one copy of a text of at most batchShareLen bytes
	// that skills repeat (file paths such as scripts/run.sh, tags,
	// categories, versions, licenses), for up to batchShareMax distinct
	// texts (about 400 KB of map at most); past that, texts are copied.
	batchShareLen = 64
	batchShareMax = 8192
	// batchInternLen bounds the texts Intern keeps: a message of a
	// diagnostic, not a document.
	batchInternLen = 256
)

// New is New with the skill held in b, with the frontmatter TypedOnly
// leaves (Raw and Metadata dropped, the typed fields' text copied), or
// less with SharedMeta, and a copy of files (the caller may reuse its
// slice). doc is not kept.
func (b *Batch) New(doc *Document, dir, entry string, files []File, origin *Origin, reader Reader) *Skill {
	if origin == nil {
		origin = &Origin{}
	}
	var fm *Frontmatter
	name, desc := doc.Name, b.String(doc.Description)
	if b.SharedMeta {
		fm = b.sharedMeta(&doc.Frontmatter)
	} else {
		fm = b.fms.one(batchChunk)
		*fm = doc.Frontmatter
		fm.Raw, fm.Metadata = nil, nil
		fm.Description = desc
		fm.License, fm.Compatibility = b.share(fm.License), b.share(fm.Compatibility)
		fm.Version, fm.Category = b.share(fm.Version), b.share(fm.Category)
		fm.AllowedTools, fm.Tags, fm.RequiresTools = b.strings(fm.AllowedTools), b.strings(fm.Tags), b.strings(fm.RequiresTools)
	}
	var kept []File
	if len(files) > 0 {
		kept = b.files.many(len(files), batchFileChunk)
		for i, f := range files {
			f.Path = b.share(f.Path)
			kept[i] = f
		}
	}
	loc := b.concat(dir, "/", entry)
	// The name is most often the folder's: then it is the part of the
	// location that holds it, not a copy of its own.
	if n := len(dir) - len(name); n > 0 && (dir[n-1] == '/' || dir[n-1] == '\\') && dir[n:] == name {
		name = loc[n:len(dir)]
	} else {
		name = b.String(name)
	}
	if !b.SharedMeta {
		fm.Name = name
	}
	s := b.skills.one(batchChunk)
	s.Name = name
	s.Description = desc
	s.Meta = fm
	s.Dir = loc[:len(dir)]
	s.Entry = entry
	s.Location = loc
	s.Files = kept
	s.Origin = origin
	s.reader = reader
	return s
}

// batchMetaMax bounds the shared Frontmatter values a Batch keeps one
// of (SharedMeta); past it, each skill gets its own.
const batchMetaMax = 4096

// sharedMeta is the Frontmatter SharedMeta keeps for m: one per distinct
// set of the fields it keeps, while there are at most batchMetaMax.
func (b *Batch) sharedMeta(m *Frontmatter) *Frontmatter {
	k := metaKey(b.key[:0], m)
	b.key = k
	if fm, ok := b.metas[string(k)]; ok {
		return fm
	}
	fm := b.fms.one(batchChunk)
	*fm = Frontmatter{Category: b.share(m.Category), RequiresTools: b.strings(m.RequiresTools),
		DisableModelInvocation: m.DisableModelInvocation}
	if len(b.metas) < batchMetaMax {
		if b.metas == nil {
			b.metas = make(map[string]*Frontmatter)
		}
		b.metas[string(k)] = fm
	}
	return fm
}

// metaKey appends to k what SharedMeta keeps of m, each field and list
// item length-prefixed, and a nil list told from an empty one.
func metaKey(k []byte, m *Frontmatter) []byte {
	str := func(s string) {
		k = binary.AppendUvarint(k, uint64(len(s)))
		k = append(k, s...)
	}
	list := func(l []string) {
		if l == nil {
			k = append(k, 0)
			return
		}
		k = binary.AppendUvarint(k, uint64(len(l))+1)
		for _, v := range l {
			str(v)
		}
	}
	str(m.Category)
	list(m.RequiresTools)
	if m.DisableModelInvocation {
		k = append(k, 1)
	} else {
		k = append(k, 0)
	}
	return k
}

// Intern returns s, or the equal text an earlier call kept: one copy of
// a text that many skills repeat word for word, such as a diagnostic's
// message (a field of the wrong type, on the same line), for up to
// batchShareMax texts of at most batchInternLen bytes. s is kept as it
// is, not copied: it must not change (a string made for it, not one in a
// reused buffer).
func (b *Batch) Intern(s string) string {
	if s == "" || len(s) > batchInternLen {
		return s
	}
	if v, ok := b.interned[s]; ok {
		return v
	}
	if len(b.interned) < batchShareMax {
		if b.interned == nil {
			b.interned = make(map[string]string)
		}
		b.interned[s] = s
	}
	return s
}

// String returns a copy of s held in b.
func (b *Batch) String(s string) string {
	if s == "" {
		return ""
	}
	return b.concat(s)
}

// share returns s held in b, one copy for all its skills when it is short.
func (b *Batch) share(s string) string {
	if s == "" || len(s) > batchShareLen {
		return b.String(s)
	}
	if v, ok := b.shared[s]; ok {
		return v
	}
	v := b.String(s)
	if len(b.shared) < batchShareMax {
		if b.shared == nil {
			b.shared = make(map[string]string)
		}
		b.shared[v] = v
	}
	return v
}

// concat returns the parts joined, held in b.
func (b *Batch) concat(parts ...string) string {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n == 0 {
		return ""
	}
	var buf []byte
	if n > batchTextChunk/8 {
		buf = make([]byte, n) // a long text gets its own
	} else {
		if len(b.text) < n {
			b.text = make([]byte, batchTextChunk)
		}
		buf, b.text = b.text[:n:n], b.text[n:]
	}
	at := 0
	for _, p := range parts {
		at += copy(buf[at:], p)
	}
	// buf is never written again: b hands out each byte once.
	return unsafe.String(&buf[0], n)
}

// strings returns a copy of l, its text held in b (nil stays nil).
func (b *Batch) strings(l []string) []string {
	if l == nil {
		return nil
	}
	if len(l) == 0 {
		return []string{} // no allocation, and not nil, as TypedOnly leaves it
	}
	out := b.lists.many(len(l), batchFileChunk)
	for i, v := range l {
		out[i] = b.share(v)
	}
	return out
}

// slab hands out values of T from chunks.
type slab[T any] struct{ free []T }

func (s *slab[T]) one(chunk int) *T {
	if len(s.free) == 0 {
		s.free = make([]T, chunk)
	}
	p := &s.free[0]
	s.free = s.free[1:]
	return p
}

// many returns n values (a slice of capacity n); more than a quarter of a
// chunk get a slice of their own.
func (s *slab[T]) many(n, chunk int) []T {
	if n > chunk/4 {
		return make([]T, n)
	}
	if len(s.free) < n {
		s.free = make([]T, chunk)
	}
	out := s.free[:n:n]
	s.free = s.free[n:]
	return out
}
