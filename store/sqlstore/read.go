package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

// skillRow is one row of skills.
type skillRow struct {
	id, name, description      string
	content                    []byte
	isDir                      bool
	frontmatter, tools, tags   string
	category, skillVersion     string
	enabled                    bool
	source, provenance, digest string
	version                    int
	size                       int64
	createdAt, updatedAt       int64
	published                  int
	withdrawn                  bool
}

const skillCols = `id, name, description, content, is_directory, frontmatter, requires_tools, tags, category, skill_version, enabled, source, provenance, digest, version, size, created_at, updated_at, published, withdrawn`

func (r *skillRow) dest() []any {
	return []any{&r.id, &r.name, &r.description, &r.content, &r.isDir, &r.frontmatter, &r.tools, &r.tags,
		&r.category, &r.skillVersion, &r.enabled, &r.source, &r.provenance, &r.digest, &r.version, &r.size,
		&r.createdAt, &r.updatedAt, &r.published, &r.withdrawn}
}

// skillByName reads a skill's row; nil when there is none. lock takes the
// row for update (PostgreSQL).
func (c conn) skillByName(name string, lock bool) (*skillRow, error) {
	q := qSkillByName
	if lock {
		q += c.s.d.ForUpdate
	}
	r := &skillRow{}
	found, err := c.one(q, []any{name}, r.dest()...)
	if err != nil || !found {
		return nil, err
	}
	return r, nil
}

// record turns a row and its files into a Record.
func (r *skillRow) record(files []skill.File) (*store.Record, error) {
	rec := &store.Record{
		ID: r.id, Name: r.name, Description: r.description, Version: r.version, Digest: r.digest,
		Published: r.published, Withdrawn: r.withdrawn,
		Enabled: r.enabled, IsDirectory: r.isDir, Category: r.category, SkillVersion: r.skillVersion,
		Source: r.source, Provenance: r.provenance, Files: files, Size: r.size, Content: r.content,
		CreatedAt: fromMicros(r.createdAt), UpdatedAt: fromMicros(r.updatedAt),
	}
	if rec.Files == nil {
		rec.Files = []skill.File{}
	}
	if err := json.Unmarshal([]byte(r.frontmatter), &rec.Frontmatter); err != nil {
		return nil, fmt.Errorf("skill %q: frontmatter: %w", r.name, err)
	}
	if err := json.Unmarshal([]byte(r.tags), &rec.Tags); err != nil {
		return nil, fmt.Errorf("skill %q: tags: %w", r.name, err)
	}
	if err := json.Unmarshal([]byte(r.tools), &rec.RequiresTools); err != nil {
		return nil, fmt.Errorf("skill %q: requires_tools: %w", r.name, err)
	}
	return rec, nil
}

const fileCols = `relative_path, size, content_type, is_binary, executable`

// The hot reads, prepared once per store (see Store.prepare and
// conn.query): the admin routes' Get, file reads and listings.
const (
	qSkillByName = `SELECT ` + skillCols + ` FROM skills WHERE name = $1`
	qFilesOf     = `SELECT skill_id, ` + fileCols + ` FROM skill_files WHERE skill_id = $1`
	qAllFiles    = `SELECT skill_id, ` + fileCols + ` FROM skill_files`
	qSnapshot    = `SELECT v.digest, v.size, v.files, v.note, v.source, v.provenance, v.created_at, b.data
FROM skill_versions v JOIN blobs b ON b.sha256 = v.content_sha256
WHERE v.skill_id = $1 AND v.version = $2`
	qSnapshotFiles = `SELECT f.relative_path, f.content_type, f.is_binary, f.executable, b.data
FROM skill_version_files f JOIN blobs b ON b.sha256 = f.blob_sha256
WHERE f.skill_id = $1 AND f.version = $2`
	// $2 = 0 picks the current version.
	qReadContent = `SELECT b.data FROM skills s
JOIN skill_versions v ON v.skill_id = s.id AND v.version = CASE WHEN $2 = 0 THEN s.version ELSE $2 END
JOIN blobs b ON b.sha256 = v.content_sha256
WHERE s.name = $1`
	qReadFile = `SELECT b.data FROM skills s
JOIN skill_version_files f ON f.skill_id = s.id AND f.version = CASE WHEN $2 = 0 THEN s.version ELSE $2 END
JOIN blobs b ON b.sha256 = f.blob_sha256
WHERE s.name = $1 AND f.relative_path = $3`
	qVersions = `SELECT version, digest, size, files, note, source, provenance, created_at
FROM skill_versions WHERE skill_id = $1 ORDER BY version DESC`
)

var hotQueries = []string{qSkillByName, qFilesOf, qSnapshot, qSnapshotFiles, qReadContent, qReadFile, qVersions}

// files reads the manifests of the current files: of one skill, or of all
// skills when id is "".
func (c conn) files(id string) (map[string][]skill.File, error) {
	q := qAllFiles
	var args []any
	if id != "" {
		q = qFilesOf
		args = append(args, id)
	}
	rows, err := c.query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]skill.File{}
	for rows.Next() {
		var sid string
		var f skill.File
		if err := rows.Scan(&sid, &f.Path, &f.Size, &f.ContentType, &f.Binary, &f.Executable); err != nil {
			return nil, err
		}
		f.Script = skill.IsScript(f.Path, f.Executable)
		out[sid] = append(out[sid], f)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, fs := range out {
		sort.Slice(fs, func(i, j int) bool { return fs[i].Path < fs[j].Path })
	}
	return out, nil
}

// recordByName reads the current record of a skill; a not_found Error when
// there is none.
func (c conn) recordByName(name string) (*store.Record, error) {
	r, err := c.skillByName(name, false)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, notFound(name)
	}
	files, err := c.files(r.id)
	if err != nil {
		return nil, err
	}
	return r.record(files[r.id])
}

// List returns every skill at its current version, sorted by name.
func (s *Store) List(ctx context.Context) ([]*store.Record, error) {
	var out []*store.Record
	err := s.read(ctx, func(c conn) error {
		rows, err := c.query(`SELECT ` + skillCols + ` FROM skills`)
		if err != nil {
			return err
		}
		var rs []*skillRow
		for rows.Next() {
			r := &skillRow{}
			if err := rows.Scan(r.dest()...); err != nil {
				rows.Close()
				return err
			}
			rs = append(rs, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		files, err := c.files("")
		if err != nil {
			return err
		}
		for _, r := range rs {
			rec, err := r.record(files[r.id])
			if err != nil {
				return err
			}
			out = append(out, rec)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Bytewise, whatever the database's collation.
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Get returns a skill at its current version, in one statement (so
// without a transaction): the skill's row with its files aggregated into
// one JSON column (Dialect.filesJSON).
func (s *Store) Get(ctx context.Context, name string) (_ *store.Record, err error) {
	ctx, end := startNamed(ctx, "Get")
	defer func() { end(err) }()
	q := s.getQuery()
	if err := s.injected(q); err != nil {
		return nil, asStoreError(err)
	}
	r := &skillRow{}
	var filesJSON string
	err = s.stmts[q].QueryRowContext(ctx, name).Scan(append(r.dest(), &filesJSON)...)
	if err == sql.ErrNoRows {
		return nil, notFound(name)
	}
	if err != nil {
		return nil, asStoreError(err)
	}
	k := decodedKey{r.id, r.version}
	if d := s.decoded.get(k); d != nil {
		return r.recordFrom(d), nil
	}
	files, err := decodeFiles(filesJSON)
	if err != nil {
		return nil, internal(fmt.Sprintf("skill %q: its files", name), err)
	}
	rec, err := r.record(files)
	if err != nil {
		return nil, asStoreError(err)
	}
	d := &decoded{fm: rec.Frontmatter, tags: rec.Tags, tools: rec.RequiresTools, files: rec.Files}
	s.decoded.put(k, d)
	return r.recordFrom(d), nil
}

// MaxDecodedCache is how many skill versions' decoded JSON columns Get
// keeps (see decodedCache); past it, the cache starts afresh.
const MaxDecodedCache = 4096

// decodedCache keeps what Get decodes from a row's JSON columns (the
// frontmatter, tags, requires_tools and the files), per skill id and
// version: every write of them makes a new version, so a version's are
// fixed. Records get copies of the slices.
type decodedCache struct {
	mu sync.RWMutex
	m  map[decodedKey]*decoded
}

type decodedKey struct {
	id      string
	version int
}

type decoded struct {
	fm          skill.Fields
	tags, tools []string
	files       []skill.File
}

func (c *decodedCache) get(k decodedKey) *decoded {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[k]
}

func (c *decodedCache) put(k decodedKey, d *decoded) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= MaxDecodedCache {
		c.m = map[decodedKey]*decoded{}
	}
	c.m[k] = d
}

// recordFrom is record with the JSON columns already decoded.
func (r *skillRow) recordFrom(d *decoded) *store.Record {
	return &store.Record{
		ID: r.id, Name: r.name, Description: r.description, Version: r.version, Digest: r.digest,
		Published: r.published, Withdrawn: r.withdrawn,
		Enabled: r.enabled, IsDirectory: r.isDir, Category: r.category, SkillVersion: r.skillVersion,
		Source: r.source, Provenance: r.provenance, Size: r.size, Content: r.content,
		CreatedAt: fromMicros(r.createdAt), UpdatedAt: fromMicros(r.updatedAt),
		Frontmatter: slices.Clone(d.fm), Tags: slices.Clone(d.tags), RequiresTools: slices.Clone(d.tools),
		Files: append([]skill.File{}, d.files...),
	}
}

// getQuery is Get's statement for the store's dialect.
func (s *Store) getQuery() string {
	return `SELECT ` + skillCols + `, COALESCE((SELECT ` + s.d.filesJSON + ` FROM skill_files f WHERE f.skill_id = skills.id), '[]')
FROM skills WHERE name = $1`
}

// decodeFiles reads Dialect.filesJSON's array, sorted by path.
func decodeFiles(text string) ([]skill.File, error) {
	var tuples [][5]any
	if err := json.Unmarshal([]byte(text), &tuples); err != nil {
		return nil, err
	}
	files := make([]skill.File, 0, len(tuples))
	for _, t := range tuples {
		p, ok1 := t[0].(string)
		size, ok2 := t[1].(float64)
		ct, ok3 := t[2].(string)
		bin, ok4 := t[3].(float64)
		exe, ok5 := t[4].(float64)
		if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
			return nil, fmt.Errorf("a file of the wrong shape: %v", t)
		}
		files = append(files, skill.File{Path: p, Size: int64(size), ContentType: ct, Binary: bin != 0,
			Executable: exe != 0, Script: skill.IsScript(p, exe != 0)})
	}
	sortManifest(files)
	return files, nil
}

func sortManifest(fs []skill.File) {
	sort.Slice(fs, func(i, j int) bool { return fs[i].Path < fs[j].Path })
}

// snapshot reads the bytes of one version. ok is false when the version
// does not exist.
func (c conn) snapshot(id string, version int) (b *skill.Bundle, v *store.Version, ok bool, err error) {
	v = &store.Version{}
	var created int64
	var content []byte
	found, err := c.one(qSnapshot, []any{id, version},
		&v.Digest, &v.Size, &v.Files, &v.Note, &v.Source, &v.Provenance, &created, &content)
	if err != nil || !found {
		return nil, nil, false, err
	}
	v.Version = version
	v.CreatedAt = fromMicros(created)
	b = &skill.Bundle{Content: content, Files: make([]skill.BundleFile, 0, v.Files)}
	rows, err := c.query(qSnapshotFiles, id, version)
	if err != nil {
		return nil, nil, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var f skill.BundleFile
		if err := rows.Scan(&f.Path, &f.ContentType, &f.Binary, &f.Executable, &f.Data); err != nil {
			return nil, nil, false, err
		}
		if f.Data == nil {
			f.Data = []byte{}
		}
		b.Files = append(b.Files, f)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, false, err
	}
	sortFiles(b.Files)
	return b, v, true, nil
}

// Bundle returns the bytes of one version (0: the current one) and a
// Record describing that version.
func (s *Store) Bundle(ctx context.Context, name string, version int) (*skill.Bundle, *store.Record, error) {
	if version < 0 {
		return nil, nil, &store.Error{Code: store.Invalid, Field: "version", Message: fmt.Sprintf("version %d: give 0 for the current version or a version number", version)}
	}
	var b *skill.Bundle
	var rec *store.Record
	err := s.read(ctx, func(c conn) error {
		r, err := c.skillByName(name, false)
		if err != nil {
			return err
		}
		if r == nil {
			return notFound(name)
		}
		if version == 0 {
			version = r.version
		}
		bb, v, ok, err := c.snapshot(r.id, version)
		if err != nil {
			return err
		}
		if !ok {
			return noVersion(name, version, r.version)
		}
		b = bb
		files, err := c.files(r.id)
		if err != nil {
			return err
		}
		rec, err = r.record(files[r.id])
		if err != nil {
			return err
		}
		if version != r.version {
			describeVersion(rec, b, v)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return b, rec, nil
}

func noVersion(name string, version, current int) *store.Error {
	return &store.Error{Code: store.NotFound, Field: "version", Current: current,
		Message: fmt.Sprintf("skill %q has no version %d (the current one is %d)", name, version, current)}
}

// describeVersion makes a current record describe an older version: its
// bytes, manifest and frontmatter, with the skill's identity and state.
func describeVersion(rec *store.Record, b *skill.Bundle, v *store.Version) {
	rec.Version, rec.Digest, rec.Size, rec.Content = v.Version, v.Digest, v.Size, b.Content
	rec.Source, rec.Provenance, rec.UpdatedAt = v.Source, v.Provenance, v.CreatedAt
	rec.Files = b.Manifest()
	rec.IsDirectory = len(b.Files) > 0
	if doc, _, ok := skill.Parse(b.Content, "SKILL.md", rec.Name); ok {
		m := metaOf(doc)
		rec.Description, rec.Category, rec.SkillVersion = doc.Description, doc.Category, doc.Version
		rec.Tags, rec.RequiresTools, rec.Frontmatter = m.tags, m.tools, doc.Raw
	}
}

// ReadFile returns one file of a version (0: the current one) from its
// immutable snapshot. "SKILL.md" is the content.
func (s *Store) ReadFile(ctx context.Context, name string, version int, p string) (_ []byte, err error) {
	ctx, end := startNamed(ctx, "ReadFile")
	defer func() { end(err) }()
	if version < 0 {
		return nil, &store.Error{Code: store.Invalid, Field: "version", Message: fmt.Sprintf("version %d: give 0 for the current version or a version number", version)}
	}
	if p != "SKILL.md" {
		clean, err := skill.CleanPath(p)
		if err != nil {
			return nil, pathError(err)
		}
		p = clean
	}
	// One statement, so no transaction; only a miss reads more, in one,
	// to say which of skill, version or file is missing.
	q, args := qReadContent, []any{name, version}
	if p != "SKILL.md" {
		q, args = qReadFile, []any{name, version, p}
	}
	if err := s.injected(q); err != nil {
		return nil, asStoreError(err)
	}
	var data []byte
	err = s.stmts[q].QueryRowContext(ctx, args...).Scan(&data)
	if err == sql.ErrNoRows {
		err = s.read(ctx, func(c conn) error { return c.missingFile(name, version, p) })
	}
	if err != nil {
		return nil, asStoreError(err)
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// missingFile says which of skill, version or file is missing.
func (c conn) missingFile(name string, version int, p string) error {
	r, err := c.skillByName(name, false)
	if err != nil {
		return err
	}
	if r == nil {
		return notFound(name)
	}
	if version != 0 && version != r.version {
		var n int
		found, err := c.one(`SELECT version FROM skill_versions WHERE skill_id = $1 AND version = $2`, []any{r.id, version}, &n)
		if err != nil {
			return err
		}
		if !found {
			return noVersion(name, version, r.version)
		}
	}
	if version == 0 {
		version = r.version
	}
	return &store.Error{Code: store.NotFound, Field: "path", Path: p,
		Message: fmt.Sprintf("skill %q has no file %q at version %d", name, p, version)}
}

func pathError(err error) *store.Error {
	e := &store.Error{Code: store.Invalid, Field: "path", Message: err.Error()}
	if pe, ok := err.(*skill.PathError); ok {
		e.Path = pe.Path
		e.Problems = []skill.Diagnostic{{Severity: skill.Error, Code: pe.Code, Field: "path", Path: pe.Path, Message: err.Error()}}
	}
	return e
}

// Versions lists a skill's versions, newest first.
func (s *Store) Versions(ctx context.Context, name string) ([]store.Version, error) {
	var out []store.Version
	err := s.read(ctx, func(c conn) error {
		r, err := c.skillByName(name, false)
		if err != nil {
			return err
		}
		if r == nil {
			return notFound(name)
		}
		rows, err := c.query(qVersions, r.id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var v store.Version
			var created int64
			if err := rows.Scan(&v.Version, &v.Digest, &v.Size, &v.Files, &v.Note, &v.Source, &v.Provenance, &created); err != nil {
				return err
			}
			v.CreatedAt = fromMicros(created)
			out = append(out, v)
		}
		return rows.Err()
	})
	return out, err
}

// Overrides returns every override.
func (s *Store) Overrides(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	err := s.read(ctx, func(c conn) error {
		rows, err := c.query(`SELECT skill_key, enabled FROM overrides`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var on bool
			if err := rows.Scan(&k, &on); err != nil {
				return err
			}
			out[k] = on
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
