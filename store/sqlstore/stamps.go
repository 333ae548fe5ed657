package sqlstore

import (
	"context"

	"github.com/loadout/loadout/store"
)

// Stamps lists every skill's name and current version, without its
// content or files: what a server reads after another instance's change to
// find the skills that changed (store.Stamper).
func (s *Store) Stamps(ctx context.Context) ([]store.Stamp, error) {
	var out []store.Stamp
	err := s.read(ctx, func(c conn) error {
		rows, err := c.query(`SELECT name, version, published, withdrawn, digest, enabled, source, provenance, updated_at FROM skills`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var st store.Stamp
			var updated int64
			if err := rows.Scan(&st.Name, &st.Version, &st.Published, &st.Withdrawn, &st.Digest, &st.Enabled, &st.Source, &st.Provenance, &updated); err != nil {
				return err
			}
			st.UpdatedAt = fromMicros(updated)
			out = append(out, st)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
