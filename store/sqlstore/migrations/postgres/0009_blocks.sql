-- The kill switch: skills no instance lists or serves until the block is
-- removed. A block is of a skill by name (version 0 and digest '': every
-- version), of one version of it (a stored version number, or a bundle
-- digest), or of every skill of a source (source <> ''). (Block changes
-- are notified on loadout_changes with "blocks" after the instance in the
-- payload; they need no counter.)
CREATE TABLE blocks (
  id         TEXT PRIMARY KEY,
  skill      TEXT NOT NULL DEFAULT '',
  version    INTEGER NOT NULL DEFAULT 0,
  digest     TEXT NOT NULL DEFAULT '',
  source     TEXT NOT NULL DEFAULT '',
  reason     TEXT NOT NULL,
  actor      TEXT NOT NULL DEFAULT '',
  created_at BIGINT NOT NULL,            -- unix microseconds
  CHECK ((skill = '') <> (source = ''))
);
