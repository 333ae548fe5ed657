-- Skills written through loadout (seed 000 §5.1 option A), their files,
-- and an immutable snapshot of every version. Times are Unix microseconds.
-- STRICT tables: bytes stay BLOBs, never text.

-- Content-addressed bytes shared by every version that holds them.
CREATE TABLE blobs (
  sha256 TEXT PRIMARY KEY,          -- hex of the bytes
  data   BLOB NOT NULL,
  size   INTEGER NOT NULL
) STRICT;

CREATE TABLE skills (
  id             TEXT PRIMARY KEY,
  name           TEXT NOT NULL UNIQUE,
  description    TEXT NOT NULL,
  content        BLOB NOT NULL,     -- SKILL.md, frontmatter included
  is_directory   INTEGER NOT NULL DEFAULT 0,
  frontmatter    TEXT NOT NULL,     -- JSON object, keys in written order
  requires_tools TEXT NOT NULL,     -- JSON array
  tags           TEXT NOT NULL,     -- JSON array
  category       TEXT NOT NULL DEFAULT '',
  skill_version  TEXT NOT NULL DEFAULT '', -- the frontmatter's version
  enabled        INTEGER NOT NULL DEFAULT 1,
  source         TEXT NOT NULL DEFAULT '',
  provenance     TEXT NOT NULL DEFAULT '',
  digest         TEXT NOT NULL,     -- Bundle.Digest of the current version
  version        INTEGER NOT NULL,  -- current version number
  size           INTEGER NOT NULL,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL
) STRICT;

-- The current files, with their bytes.
CREATE TABLE skill_files (
  skill_id      TEXT NOT NULL REFERENCES skills(id) ON DELETE CASCADE,
  relative_path TEXT NOT NULL,
  content       BLOB NOT NULL,
  content_type  TEXT NOT NULL,
  size          INTEGER NOT NULL,
  checksum      TEXT NOT NULL,      -- sha256 hex
  is_binary     INTEGER NOT NULL DEFAULT 0,
  executable    INTEGER NOT NULL DEFAULT 0,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  PRIMARY KEY (skill_id, relative_path)
) STRICT;

CREATE TABLE skill_versions (
  skill_id       TEXT NOT NULL REFERENCES skills(id) ON DELETE CASCADE,
  version        INTEGER NOT NULL,
  content_sha256 TEXT NOT NULL REFERENCES blobs(sha256),
  digest         TEXT NOT NULL,
  size           INTEGER NOT NULL,
  files          INTEGER NOT NULL,
  note           TEXT NOT NULL DEFAULT '',
  source         TEXT NOT NULL DEFAULT '',
  provenance     TEXT NOT NULL DEFAULT '',
  created_at     INTEGER NOT NULL,
  PRIMARY KEY (skill_id, version)
) STRICT;
CREATE INDEX skill_versions_content ON skill_versions (content_sha256);

CREATE TABLE skill_version_files (
  skill_id      TEXT NOT NULL,
  version       INTEGER NOT NULL,
  relative_path TEXT NOT NULL,
  blob_sha256   TEXT NOT NULL REFERENCES blobs(sha256),
  content_type  TEXT NOT NULL,
  size          INTEGER NOT NULL,
  is_binary     INTEGER NOT NULL DEFAULT 0,
  executable    INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (skill_id, version, relative_path),
  FOREIGN KEY (skill_id, version) REFERENCES skill_versions (skill_id, version) ON DELETE CASCADE
) STRICT;
CREATE INDEX skill_version_files_blob ON skill_version_files (blob_sha256);

-- Enable/disable state for skills the store does not own.
CREATE TABLE overrides (
  skill_key  TEXT PRIMARY KEY, -- e.g. "plugin:acme/deploy"
  enabled    INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
