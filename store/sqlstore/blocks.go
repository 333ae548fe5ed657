package sqlstore

import (
	"context"
	"fmt"

	"github.com/loadout/loadout/store"
)

// AddBlock keeps a block of the kill switch (store.Blocker). Every
// instance's BlockChanges feed sends after it commits.
func (s *Store) AddBlock(ctx context.Context, b store.Block) (store.Block, error) {
	if err := b.Check(); err != nil {
		return store.Block{}, err
	}
	t := now()
	b.ID, b.CreatedAt = "b"+newID()[:11], fromMicros(t)
	err := s.writeTx(ctx, kindBlocks, func(c conn) error {
		_, err := c.exec(`INSERT INTO blocks (id, skill, version, digest, source, reason, actor, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			b.ID, b.Skill, b.Version, b.Digest, b.Source, b.Reason, b.Actor, t)
		return err
	})
	if err != nil {
		return store.Block{}, err
	}
	return b, nil
}

// RemoveBlock removes a block by id (store.Blocker).
func (s *Store) RemoveBlock(ctx context.Context, id string) (store.Block, error) {
	var b store.Block
	err := s.writeTx(ctx, kindBlocks, func(c conn) error {
		var t int64
		found, err := c.one(`SELECT id, skill, version, digest, source, reason, actor, created_at FROM blocks WHERE id = $1`+s.d.ForUpdate, []any{id},
			&b.ID, &b.Skill, &b.Version, &b.Digest, &b.Source, &b.Reason, &b.Actor, &t)
		if err != nil {
			return err
		}
		if !found {
			return &store.Error{Code: store.NotFound, Field: "id", Message: fmt.Sprintf("no block has the id %q: list them with GET /v1/blocks or loadout blocks", id)}
		}
		b.CreatedAt = fromMicros(t)
		_, err = c.exec(`DELETE FROM blocks WHERE id = $1`, id)
		return err
	})
	if err != nil {
		return store.Block{}, err
	}
	return b, nil
}

// Blocks lists every block, oldest first (store.Blocker).
func (s *Store) Blocks(ctx context.Context) ([]store.Block, error) {
	var out []store.Block
	err := s.read(ctx, func(c conn) error {
		rows, err := c.query(`SELECT id, skill, version, digest, source, reason, actor, created_at FROM blocks ORDER BY created_at, id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var b store.Block
			var t int64
			if err := rows.Scan(&b.ID, &b.Skill, &b.Version, &b.Digest, &b.Source, &b.Reason, &b.Actor, &t); err != nil {
				return err
			}
			b.CreatedAt = fromMicros(t)
			out = append(out, b)
		}
		return rows.Err()
	})
	return out, err
}

// BlockChanges is Changes for the kill switch's blocks (store.Blocker):
// it sends after a block is added or removed, by this instance (after the
// commit) or another (PostgreSQL: ChangeBlocks in the notification's
// payload; SQLite: a counter of its own in change_seq, polled every
// PollInterval).
func (s *Store) BlockChanges(ctx context.Context) (<-chan struct{}, error) {
	return s.subscribe(ctx, kindBlocks, false)
}
