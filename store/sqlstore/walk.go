package sqlstore

import (
	"context"

	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

// walkCols are the columns of skills Walk reads: the JSON columns, which
// List decodes and a catalog never uses, are left out.
const walkCols = `id, name, description, content, is_directory, category, skill_version, source, provenance, digest, version, size, created_at, updated_at, published, withdrawn`

// Walk calls fn with every enabled skill at its current version, in one
// read-only snapshot, one row at a time (store.Walker): the rows stream
// from the database, so the process holds one record's content at a time.
// The manifests of every skill's files are read first. Frontmatter, Tags
// and RequiresTools are left empty.
func (s *Store) Walk(ctx context.Context, fn func(rec *store.Record) error) error {
	var stopped error
	err := s.read(ctx, func(c conn) error {
		files, err := c.files("")
		if err != nil {
			return err
		}
		rows, err := c.query(`SELECT ` + walkCols + ` FROM skills WHERE enabled`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r := skillRow{enabled: true}
			if err := rows.Scan(&r.id, &r.name, &r.description, &r.content, &r.isDir, &r.category, &r.skillVersion,
				&r.source, &r.provenance, &r.digest, &r.version, &r.size, &r.createdAt, &r.updatedAt, &r.published, &r.withdrawn); err != nil {
				return err
			}
			rec := &store.Record{
				ID: r.id, Name: r.name, Description: r.description, Version: r.version, Digest: r.digest,
				Published: r.published, Withdrawn: r.withdrawn, Enabled: true, IsDirectory: r.isDir, Category: r.category, SkillVersion: r.skillVersion,
				Source: r.source, Provenance: r.provenance, Files: files[r.id], Size: r.size, Content: r.content,
				CreatedAt: fromMicros(r.createdAt), UpdatedAt: fromMicros(r.updatedAt),
			}
			if rec.Files == nil {
				rec.Files = []skill.File{}
			}
			delete(files, r.id)
			if err := fn(rec); err != nil {
				stopped = err
				return err
			}
		}
		return rows.Err()
	})
	if stopped != nil {
		return stopped // as fn returned it
	}
	return err
}

var _ store.Walker = (*Store)(nil)
