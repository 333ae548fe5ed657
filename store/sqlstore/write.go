package sqlstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

// limits fills l's zero fields from the store's defaults.
func (s *Store) limits(l skill.Limits) skill.Limits {
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = s.Limits.MaxFileSize
	}
	if l.MaxTotalSize <= 0 {
		l.MaxTotalSize = s.Limits.MaxTotalSize
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = s.Limits.MaxFiles
	}
	if l.WarnTextSize <= 0 {
		l.WarnTextSize = s.Limits.WarnTextSize
	}
	return l
}

// check is the write-time gate: Bundle.Check, then the store's Gate, with
// a refusal turned into an "invalid" Error naming the first field and path
// at fault.
func (s *Store) check(b *skill.Bundle, lim skill.Limits) (*skill.Document, []skill.Diagnostic, error) {
	doc, warnings, err := check(b, lim)
	if err != nil || s.Gate == nil {
		return doc, warnings, err
	}
	refused, more := s.Gate(b, doc)
	warnings = append(warnings, more...)
	if len(refused) > 0 {
		e := &store.Error{Code: store.Invalid, Field: refused[0].Field, Path: refused[0].Path,
			Message:  fmt.Sprintf("the skill was refused by the safety checks: %s", refused[0].Message),
			Problems: append(append([]skill.Diagnostic{}, refused...), warnings...)}
		if len(refused) > 1 {
			e.Message += fmt.Sprintf(" (and %d more)", len(refused)-1)
		}
		return nil, warnings, e
	}
	return doc, warnings, nil
}

// check is Bundle.Check, with its refusal turned into an "invalid" Error
// naming the first field and path at fault.
func check(b *skill.Bundle, lim skill.Limits) (*skill.Document, []skill.Diagnostic, error) {
	if b == nil {
		return nil, nil, &store.Error{Code: store.Invalid, Field: "bundle", Message: "no skill given"}
	}
	doc, warnings, err := b.Check(lim)
	if err == nil {
		return doc, warnings, nil
	}
	var ce *skill.CheckError
	if !errors.As(err, &ce) {
		return nil, warnings, internal("check", err)
	}
	e := &store.Error{Code: store.Invalid, Message: "the skill was refused: " + ce.Error(),
		Problems: append(append([]skill.Diagnostic{}, ce.Problems...), warnings...)}
	if len(ce.Problems) > 0 {
		e.Field, e.Path = ce.Problems[0].Field, ce.Problems[0].Path
	}
	return nil, warnings, e
}

// meta is what the frontmatter contributes to the skills row.
type meta struct {
	frontmatter, tagsJSON, toolsJSON string
	tags, tools                      []string
}

func metaOf(doc *skill.Document) meta {
	m := meta{tags: doc.Tags, tools: doc.RequiresTools}
	if m.tags == nil {
		m.tags = []string{}
	}
	if m.tools == nil {
		m.tools = []string{}
	}
	fm, err := json.Marshal(doc.Raw)
	if err != nil || doc.Raw == nil {
		fm = []byte("{}")
	}
	tags, _ := json.Marshal(m.tags)
	tools, _ := json.Marshal(m.tools)
	m.frontmatter, m.tagsJSON, m.toolsJSON = string(fm), string(tags), string(tools)
	return m
}

// saveInfo says where a save came from.
type saveInfo struct {
	source, provenance, note string
}

func sha(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// save writes a checked bundle as the next version of cur (or as a new
// skill when cur is nil): the skills row, the changed skill_files rows,
// any new blobs, and the version snapshot. The skills row is updated only
// if it is still at cur.version, so a concurrent writer that got there
// first turns this save into a conflict.
func (c conn) save(cur *skillRow, b *skill.Bundle, doc *skill.Document, info saveInfo) error {
	t := now()
	digest := b.Digest()
	if cur != nil {
		c.auditAfter(doc.Name, cur.digest, digest)
	} else {
		c.auditAfter(doc.Name, "", digest)
	}
	size := int64(len(b.Content))
	for _, f := range b.Files {
		size += int64(len(f.Data))
	}
	m := metaOf(doc)
	isDir := len(b.Files) > 0
	var id string
	version := 1
	// A draft (store.WithDraft) leaves the published version where it is
	// and opens a review; any other save publishes what it writes.
	author, draft := store.DraftOf(c.ctx)
	base := 0
	if cur != nil {
		base = cur.published
	}
	if cur == nil {
		id = newID()
		published := version
		if draft {
			published = 0
		}
		_, err := c.exec(`INSERT INTO skills (`+skillCols+`)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
			id, doc.Name, doc.Description, b.Content, isDir, m.frontmatter, m.toolsJSON, m.tagsJSON,
			doc.Category, doc.Version, true, info.source, info.provenance, digest, version, size, t, t, published, false)
		if err != nil {
			if c.s.d.uniqueViolation(err) {
				return conflict(doc.Name, 0, 0)
			}
			return err
		}
	} else {
		id = cur.id
		version = cur.version + 1
		published := version
		if draft {
			published = cur.published
		}
		res, err := c.exec(`UPDATE skills SET description = $1, content = $2, is_directory = $3, frontmatter = $4,
requires_tools = $5, tags = $6, category = $7, skill_version = $8, source = $9, provenance = $10, digest = $11,
version = $12, size = $13, updated_at = $14, published = $17
WHERE id = $15 AND version = $16`,
			doc.Description, b.Content, isDir, m.frontmatter, m.toolsJSON, m.tagsJSON, doc.Category, doc.Version,
			info.source, info.provenance, digest, version, size, t, id, cur.version, published)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n != 1 {
			return &store.Error{Code: store.Conflict, Field: "ifVersion",
				Message: fmt.Sprintf("skill %q changed while it was being saved: reload it and apply the edit again", cur.name)}
		}
	}

	// Blobs: send only the bytes the database does not hold yet.
	hashes := make([]string, len(b.Files))
	blobs := map[string][]byte{sha(b.Content): b.Content}
	for i, f := range b.Files {
		hashes[i] = sha(f.Data)
		blobs[hashes[i]] = f.Data
	}
	if err := c.putBlobs(blobs); err != nil {
		return err
	}
	if _, err := c.exec(`INSERT INTO skill_versions (skill_id, version, content_sha256, digest, size, files, note, source, provenance, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		id, version, sha(b.Content), digest, size, len(b.Files), info.note, info.source, info.provenance, t); err != nil {
		return err
	}
	rows := make([][]any, len(b.Files))
	for i, f := range b.Files {
		rows[i] = []any{id, version, f.Path, hashes[i], f.ContentType, int64(len(f.Data)), f.Binary, f.Executable}
	}
	if err := c.insertRows(`INSERT INTO skill_version_files (skill_id, version, relative_path, blob_sha256, content_type, size, is_binary, executable)`, rows, ""); err != nil {
		return err
	}
	if draft {
		if _, err := c.exec(`INSERT INTO reviews (id, skill_id, skill, version, base, digest, author_token, author, state, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			newID(), id, doc.Name, version, base, digest, author.Token, author.Name, store.ReviewPending, t); err != nil {
			return err
		}
	}

	// Current files: delete the removed ones, write only what changed.
	type have struct {
		checksum, contentType string
		binary, executable    bool
	}
	old := map[string]have{}
	if cur != nil {
		r, err := c.query(`SELECT relative_path, checksum, content_type, is_binary, executable FROM skill_files WHERE skill_id = $1`, id)
		if err != nil {
			return err
		}
		for r.Next() {
			var p string
			var h have
			if err := r.Scan(&p, &h.checksum, &h.contentType, &h.binary, &h.executable); err != nil {
				r.Close()
				return err
			}
			old[p] = h
		}
		r.Close()
		if err := r.Err(); err != nil {
			return err
		}
	}
	keep := make(map[string]bool, len(b.Files))
	var changed [][]any
	for i, f := range b.Files {
		keep[f.Path] = true
		h, ok := old[f.Path]
		if ok && h == (have{hashes[i], f.ContentType, f.Binary, f.Executable}) {
			continue
		}
		changed = append(changed, []any{id, f.Path, f.Data, f.ContentType, int64(len(f.Data)), hashes[i], f.Binary, f.Executable, t, t})
	}
	var gone []string
	for p := range old {
		if !keep[p] {
			gone = append(gone, p)
		}
	}
	sort.Strings(gone)
	for _, p := range gone {
		if _, err := c.exec(`DELETE FROM skill_files WHERE skill_id = $1 AND relative_path = $2`, id, p); err != nil {
			return err
		}
	}
	for _, row := range changed {
		// One row per statement: a row may hold a large file.
		if err := c.insertRows(`INSERT INTO skill_files (skill_id, relative_path, content, content_type, size, checksum, is_binary, executable, created_at, updated_at)`,
			[][]any{row}, ` ON CONFLICT (skill_id, relative_path) DO UPDATE SET content = excluded.content,
content_type = excluded.content_type, size = excluded.size, checksum = excluded.checksum,
is_binary = excluded.is_binary, executable = excluded.executable, updated_at = excluded.updated_at`); err != nil {
			return err
		}
	}
	return nil
}

// putBlobs stores the blobs the database does not have yet.
func (c conn) putBlobs(blobs map[string][]byte) error {
	keys := make([]string, 0, len(blobs))
	for k := range blobs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	have := map[string]bool{}
	for i := 0; i < len(keys); i += 500 {
		chunk := keys[i:min(i+500, len(keys))]
		args := make([]any, len(chunk))
		for j, k := range chunk {
			args[j] = k
		}
		rows, err := c.query(`SELECT sha256 FROM blobs WHERE sha256 IN (`+placeholders(1, len(chunk))+`)`, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				rows.Close()
				return err
			}
			have[k] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	for _, k := range keys {
		if have[k] {
			continue
		}
		// DO NOTHING: another transaction may be storing the same bytes.
		if _, err := c.exec(`INSERT INTO blobs (sha256, data, size) VALUES ($1, $2, $3) ON CONFLICT (sha256) DO NOTHING`,
			k, blobs[k], int64(len(blobs[k]))); err != nil {
			return err
		}
	}
	return nil
}

// guard checks an edit of an existing skill against its current state.
func guard(name string, cur *skillRow, ifVersion int) error {
	if cur == nil {
		return notFound(name)
	}
	if ifVersion >= 0 && ifVersion != cur.version {
		return conflict(name, cur.version, ifVersion)
	}
	return nil
}

// currentBundle reads the current bytes of a skill from skills and
// skill_files.
func (c conn) currentBundle(cur *skillRow) (*skill.Bundle, error) {
	b := &skill.Bundle{Content: cur.content}
	rows, err := c.query(`SELECT relative_path, content, content_type, executable FROM skill_files WHERE skill_id = $1`, cur.id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var f skill.BundleFile
		if err := rows.Scan(&f.Path, &f.Data, &f.ContentType, &f.Executable); err != nil {
			return nil, err
		}
		if f.Data == nil {
			f.Data = []byte{}
		}
		b.Files = append(b.Files, f)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sortFiles(b.Files)
	return b, nil
}

// Put creates or replaces a whole skill.
func (s *Store) Put(ctx context.Context, b *skill.Bundle, opt store.PutOptions) (*store.Record, error) {
	if opt.IfVersion < -1 {
		return nil, &store.Error{Code: store.Invalid, Field: "ifVersion", Message: fmt.Sprintf("ifVersion %d: give the version the edit started from, 0 to create, or -1", opt.IfVersion)}
	}
	doc, warnings, err := s.check(b, s.limits(opt.Limits))
	if err != nil {
		return nil, err
	}
	source := opt.Source
	if source == "" {
		source = "api"
	}
	var rec *store.Record
	err = s.write(ctx, func(c conn) error {
		cur, err := c.skillByName(doc.Name, true)
		if err != nil {
			return err
		}
		switch {
		case opt.IfVersion == 0 && cur != nil:
			return conflict(doc.Name, cur.version, 0)
		case opt.IfVersion > 0 && cur == nil:
			return conflict(doc.Name, 0, opt.IfVersion)
		case opt.IfVersion > 0 && cur.version != opt.IfVersion:
			return conflict(doc.Name, cur.version, opt.IfVersion)
		}
		if cur == nil || cur.digest != b.Digest() {
			if err := c.save(cur, b, doc, saveInfo{source, opt.Provenance, opt.Note}); err != nil {
				return err
			}
		}
		rec, err = c.recordByName(doc.Name)
		return err
	})
	if err != nil {
		return nil, err
	}
	rec.Warnings = warnings
	return rec, nil
}

// edit applies change to the current bytes of a skill, checks the result
// and saves it as a new version (unless the bytes did not change).
func (s *Store) edit(ctx context.Context, name string, ifVersion int, note string, change func(b *skill.Bundle) error) (*store.Record, error) {
	return s.replace(ctx, name, ifVersion, note, false, func(c conn, cur *skillRow) (*skill.Bundle, error) {
		b, err := c.currentBundle(cur)
		if err != nil {
			return nil, err
		}
		return b, change(b)
	})
}

// replace is every write that turns one stored skill into new bytes, in one
// transaction: the version guard, next (which gives the new bundle), the
// check, a rename refusal, and a new version (when the bytes changed, or
// always).
func (s *Store) replace(ctx context.Context, name string, ifVersion int, note string, always bool, next func(c conn, cur *skillRow) (*skill.Bundle, error)) (*store.Record, error) {
	if ifVersion < -1 {
		return nil, &store.Error{Code: store.Invalid, Field: "ifVersion", Message: fmt.Sprintf("ifVersion %d: give the version the edit started from, or -1", ifVersion)}
	}
	var rec *store.Record
	var warnings []skill.Diagnostic
	err := s.write(ctx, func(c conn) error {
		cur, err := c.skillByName(name, true)
		if err != nil {
			return err
		}
		if err := guard(name, cur, ifVersion); err != nil {
			return err
		}
		b, err := next(c, cur)
		if err != nil {
			return err
		}
		doc, w, err := s.check(b, s.limits(skill.Limits{}))
		if err != nil {
			return err
		}
		warnings = w
		if doc.Name != name {
			return &store.Error{Code: store.Invalid, Field: "name", Path: "SKILL.md",
				Message: fmt.Sprintf("the new SKILL.md names the skill %q, not %q: renaming is a Put of the new name and a Delete of the old", doc.Name, name)}
		}
		if always || b.Digest() != cur.digest {
			if err := c.save(cur, b, doc, saveInfo{cur.source, cur.provenance, note}); err != nil {
				return err
			}
		}
		rec, err = c.recordByName(name)
		return err
	})
	if err != nil {
		return nil, err
	}
	rec.Warnings = warnings
	return rec, nil
}

// PutFile adds or replaces one file; "SKILL.md" replaces the content.
func (s *Store) PutFile(ctx context.Context, name, p string, data []byte, executable bool, ifVersion int) (*store.Record, error) {
	if data == nil {
		data = []byte{}
	}
	return s.edit(ctx, name, ifVersion, "put "+p, func(b *skill.Bundle) error {
		if p == "SKILL.md" {
			b.Content = data
			return nil
		}
		// An unclean path is added as given, and Check refuses it by name.
		clean, err := skill.CleanFilePath(p)
		if err == nil {
			for i := range b.Files {
				if b.Files[i].Path == clean {
					b.Files[i] = skill.BundleFile{Path: clean, Data: data, Executable: executable}
					return nil
				}
			}
		}
		b.Files = append(b.Files, skill.BundleFile{Path: p, Data: data, Executable: executable})
		return nil
	})
}

// DeleteFile removes one supporting file.
func (s *Store) DeleteFile(ctx context.Context, name, p string, ifVersion int) (*store.Record, error) {
	if p == "SKILL.md" {
		return nil, &store.Error{Code: store.Invalid, Field: "path", Path: p, Message: "SKILL.md is the skill itself: delete the skill instead"}
	}
	clean, err := skill.CleanFilePath(p)
	if err != nil {
		return nil, pathError(err)
	}
	return s.edit(ctx, name, ifVersion, "deleted "+clean, func(b *skill.Bundle) error {
		for i := range b.Files {
			if b.Files[i].Path == clean {
				b.Files = append(b.Files[:i], b.Files[i+1:]...)
				return nil
			}
		}
		return &store.Error{Code: store.NotFound, Field: "path", Path: clean, Message: fmt.Sprintf("skill %q has no file %q", name, clean)}
	})
}

// Restore makes a new version whose bytes equal those of version, even when
// they equal the current bytes.
func (s *Store) Restore(ctx context.Context, name string, version, ifVersion int) (*store.Record, error) {
	return s.replace(ctx, name, ifVersion, fmt.Sprintf("restored from version %d", version), true, func(c conn, cur *skillRow) (*skill.Bundle, error) {
		b, _, ok, err := c.snapshot(cur.id, version)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, noVersion(name, version, cur.version)
		}
		return b, nil
	})
}

// Delete removes a skill, its files and its history. Blobs no other
// version holds are removed afterwards, in a transaction of their own.
func (s *Store) Delete(ctx context.Context, name string, ifVersion int) error {
	if ifVersion < -1 {
		return &store.Error{Code: store.Invalid, Field: "ifVersion", Message: fmt.Sprintf("ifVersion %d: give the version the edit started from, or -1", ifVersion)}
	}
	var hashes []string
	err := s.write(ctx, func(c conn) error {
		cur, err := c.skillByName(name, true)
		if err != nil {
			return err
		}
		if err := guard(name, cur, ifVersion); err != nil {
			return err
		}
		c.auditAfter(name, cur.digest, "")
		rows, err := c.query(`SELECT content_sha256 FROM skill_versions WHERE skill_id = $1
UNION SELECT blob_sha256 FROM skill_version_files WHERE skill_id = $1`, cur.id)
		if err != nil {
			return err
		}
		for rows.Next() {
			var h string
			if err := rows.Scan(&h); err != nil {
				rows.Close()
				return err
			}
			hashes = append(hashes, h)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		// Its pins go too: a skill made again under the name starts unpinned.
		if _, err := c.exec(`DELETE FROM agent_pins WHERE skill = $1`, name); err != nil {
			return err
		}
		_, err = c.exec(`DELETE FROM skills WHERE id = $1`, cur.id)
		return err
	})
	if err != nil {
		return err
	}
	// Best effort: a blob a concurrent save has just started to use is
	// kept by its foreign key, which fails this statement, and that is fine.
	// Nothing a reader sees changes, so the change feed is not told.
	s.quiet(ctx, func(c conn) error {
		sort.Strings(hashes)
		for i := 0; i < len(hashes); i += 500 {
			chunk := hashes[i:min(i+500, len(hashes))]
			args := make([]any, len(chunk))
			for j, h := range chunk {
				args[j] = h
			}
			if _, err := c.exec(`DELETE FROM blobs WHERE sha256 IN (`+placeholders(1, len(chunk))+`)
AND NOT EXISTS (SELECT 1 FROM skill_version_files f WHERE f.blob_sha256 = blobs.sha256)
AND NOT EXISTS (SELECT 1 FROM skill_versions v WHERE v.content_sha256 = blobs.sha256)`, args...); err != nil {
				return err
			}
		}
		return nil
	})
	return nil
}

// SetEnabled turns a stored skill on or off.
func (s *Store) SetEnabled(ctx context.Context, name string, enabled bool) error {
	return s.setFlag(ctx, `UPDATE skills SET enabled = $1, updated_at = $2 WHERE name = $3`, name, enabled)
}

// setFlag runs update (an UPDATE of one boolean column of skills, with
// the value, the time and the name as $1, $2 and $3) for skill name: not
// a new version; not_found when no skill has the name.
func (s *Store) setFlag(ctx context.Context, update, name string, on bool) error {
	return s.write(ctx, func(c conn) error {
		res, err := c.exec(update, on, now(), name)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return notFound(name)
		}
		return nil
	})
}

// SetOverride records the enable/disable state of a skill the store does
// not own.
func (s *Store) SetOverride(ctx context.Context, key string, enabled bool) error {
	if strings.TrimSpace(key) == "" || key != strings.TrimSpace(key) {
		return &store.Error{Code: store.Invalid, Field: "key", Message: fmt.Sprintf("override key %q: give a non-empty key without surrounding spaces, like plugin:acme/deploy", key)}
	}
	return s.write(ctx, func(c conn) error {
		_, err := c.exec(`INSERT INTO overrides (skill_key, enabled, updated_at) VALUES ($1, $2, $3)
ON CONFLICT (skill_key) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at`, key, enabled, now())
		return err
	})
}

// Import checks every item, then, when none is refused, writes them all in
// one transaction, in name order (so concurrent imports lock rows in the
// same order). A skill whose bytes equal its current version is
// "unchanged"; two items of one name are refused after the first. When
// anything is refused nothing is written and the accepted items are
// "skipped" (store.ImportPartial writes them).
func (s *Store) Import(ctx context.Context, items []store.ImportItem) ([]store.ImportResult, error) {
	results := make([]store.ImportResult, len(items))
	type accepted struct {
		i   int
		doc *skill.Document
	}
	var ok []accepted
	byName := map[string]int{}
	for i, it := range items {
		res := &results[i]
		res.Provenance = it.Provenance
		if it.Err != nil {
			res.Action, res.Error = store.ActionRefused, it.Err
			var e *store.Error
			if errors.As(it.Err, &e) {
				res.Problems = e.Problems
			}
			continue
		}
		doc, warnings, err := s.check(it.Bundle, s.limits(it.Limits))
		res.Problems = warnings
		if err != nil {
			res.Action, res.Error = store.ActionRefused, err
			var e *store.Error
			if errors.As(err, &e) {
				res.Problems = e.Problems
			}
			if it.Bundle != nil {
				// Best effort: name the refused skill if its frontmatter does.
				if d, _, _ := skill.ParseHeader(it.Bundle.Content, "SKILL.md", ""); d != nil {
					res.Name = strings.TrimSpace(d.Name)
				}
			}
			continue
		}
		res.Name = doc.Name
		if j, dup := byName[doc.Name]; dup {
			res.Action = store.ActionRefused
			res.Error = &store.Error{Code: store.Invalid, Field: "name", Path: "SKILL.md",
				Message: fmt.Sprintf("item %d is also named %q: an import holds each skill once", j, doc.Name)}
			continue
		}
		byName[doc.Name] = i
		ok = append(ok, accepted{i, doc})
	}
	if len(ok) < len(items) {
		// All or nothing: say which refusal kept each accepted item out.
		first, refused := -1, 0
		for i, r := range results {
			if r.Action == store.ActionRefused {
				refused++
				if first < 0 {
					first = i
				}
			}
		}
		why := fmt.Sprintf("item %d", first)
		if n := results[first].Name; n != "" {
			why += fmt.Sprintf(" (%q)", n)
		} else if p := items[first].Provenance; p != "" {
			why += fmt.Sprintf(" (%s)", p)
		}
		switch refused {
		case 1:
		case 2:
			why += " and 1 other item"
		default:
			why += fmt.Sprintf(" and %d other items", refused-1)
		}
		for _, a := range ok {
			results[a.i].Action = store.ActionSkipped
			results[a.i].Error = &store.Error{Code: store.Invalid,
				Message: fmt.Sprintf("not written because %s of this import %s refused: an import writes every skill or none", why, wasWere(refused))}
		}
		return results, nil
	}
	if len(ok) == 0 {
		return results, nil
	}
	sort.Slice(ok, func(a, b int) bool { return ok[a].doc.Name < ok[b].doc.Name })
	versions := make([]int, len(ok))
	actions := make([]string, len(ok))
	err := s.write(ctx, func(c conn) error {
		for k, a := range ok {
			it := items[a.i]
			cur, err := c.skillByName(a.doc.Name, true)
			if err != nil {
				return err
			}
			if cur != nil && cur.digest == it.Bundle.Digest() {
				actions[k], versions[k] = store.ActionUnchanged, cur.version
				continue
			}
			source := it.Source
			if source == "" {
				source = "import"
			}
			if err := c.save(cur, it.Bundle, a.doc, saveInfo{source, it.Provenance, "import"}); err != nil {
				return err
			}
			if cur == nil {
				actions[k], versions[k] = store.ActionCreated, 1
			} else {
				actions[k], versions[k] = store.ActionUpdated, cur.version+1
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for k, a := range ok {
		results[a.i].Action, results[a.i].Version = actions[k], versions[k]
	}
	return results, nil
}

func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}
