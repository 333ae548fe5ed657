package skill

import "unsafe"

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
	metas  slab[Frontmatter]
	files  slab[File]
	lists  slab[string]
	text   []byte // the free part of the current text chunk
	// shared holds one copy of each short text seen (see share).
	shared map[string]string
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
)

// New is New with the skill held in b, with the frontmatter TypedOnly
// leaves (Raw and Metadata dropped, the typed fields' text copied) and a
// copy of files (the caller may reuse its slice). doc is not kept.
func (b *Batch) New(doc *Document, dir, entry string, files []File, origin *Origin, reader Reader) *Skill {
	if origin == nil {
		origin = &Origin{}
	}
	fm := b.metas.one(batchChunk)
	*fm = doc.Frontmatter
	fm.Raw, fm.Metadata = nil, nil
	fm.Description = b.String(fm.Description)
	fm.License, fm.Compatibility = b.share(fm.License), b.share(fm.Compatibility)
	fm.Version, fm.Category = b.share(fm.Version), b.share(fm.Category)
	fm.AllowedTools, fm.Tags, fm.RequiresTools = b.strings(fm.AllowedTools), b.strings(fm.Tags), b.strings(fm.RequiresTools)
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
	if n := len(dir) - len(fm.Name); n > 0 && (dir[n-1] == '/' || dir[n-1] == '\\') && dir[n:] == fm.Name {
		fm.Name = loc[n:len(dir)]
	} else {
		fm.Name = b.String(fm.Name)
	}
	s := b.skills.one(batchChunk)
	s.Name = fm.Name
	s.Description = fm.Description
	s.Meta = fm
	s.Dir = loc[:len(dir)]
	s.Entry = entry
	s.Location = loc
	s.Files = kept
	s.Origin = origin
	s.reader = reader
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
