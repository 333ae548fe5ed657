-- Skills written through loadout (seed 000 §5.1 option A), their files,
-- and an immutable snapshot of every version. Times are Unix microseconds.

-- Content-addressed bytes shared by every version that holds them.
CREATE TABLE blobs (
  sha256 TEXT PRIMARY KEY,          -- hex of the bytes
  data   BYTEA NOT NULL,
  size   BIGINT NOT NULL
);

CREATE TABLE skills (
  id             TEXT PRIMARY KEY,
  name           TEXT NOT NULL UNIQUE,
  description    TEXT NOT NULL,
  content        BYTEA NOT NULL,    -- SKILL.md, frontmatter included
  is_directory   BOOLEAN NOT NULL DEFAULT FALSE,
  frontmatter    JSON NOT NULL,     -- JSON object, keys in written order
  requires_tools JSON NOT NULL,     -- JSON array
  tags           JSON NOT NULL,     -- JSON array
  category       TEXT NOT NULL DEFAULT '',
  skill_version  TEXT NOT NULL DEFAULT '', -- the frontmatter's version
  enabled        BOOLEAN NOT NULL DEFAULT TRUE,
  source         TEXT NOT NULL DEFAULT '',
  provenance     TEXT NOT NULL DEFAULT '',
  digest         TEXT NOT NULL,     -- Bundle.Digest of the current version
  version        INTEGER NOT NULL,  -- current version number
  size           BIGINT NOT NULL,
  created_at     BIGINT NOT NULL,
  updated_at     BIGINT NOT NULL
);

-- The current files, with their bytes.
CREATE TABLE skill_files (
  skill_id      TEXT NOT NULL REFERENCES skills(id) ON DELETE CASCADE,
  relative_path TEXT NOT NULL,
  content       BYTEA NOT NULL,
  content_type  TEXT NOT NULL,
  size          BIGINT NOT NULL,
  checksum      TEXT NOT NULL,      -- sha256 hex
  is_binary     BOOLEAN NOT NULL DEFAULT FALSE,
  executable    BOOLEAN NOT NULL DEFAULT FALSE,
  created_at    BIGINT NOT NULL,
  updated_at    BIGINT NOT NULL,
  PRIMARY KEY (skill_id, relative_path)
);

CREATE TABLE skill_versions (
  skill_id       TEXT NOT NULL REFERENCES skills(id) ON DELETE CASCADE,
  version        INTEGER NOT NULL,
  content_sha256 TEXT NOT NULL REFERENCES blobs(sha256),
  digest         TEXT NOT NULL,
  size           BIGINT NOT NULL,
  files          INTEGER NOT NULL,
  note           TEXT NOT NULL DEFAULT '',
  source         TEXT NOT NULL DEFAULT '',
  provenance     TEXT NOT NULL DEFAULT '',
  created_at     BIGINT NOT NULL,
  PRIMARY KEY (skill_id, version)
);
CREATE INDEX skill_versions_content ON skill_versions (content_sha256);

CREATE TABLE skill_version_files (
  skill_id      TEXT NOT NULL,
  version       INTEGER NOT NULL,
  relative_path TEXT NOT NULL,
  blob_sha256   TEXT NOT NULL REFERENCES blobs(sha256),
  content_type  TEXT NOT NULL,
  size          BIGINT NOT NULL,
  is_binary     BOOLEAN NOT NULL DEFAULT FALSE,
  executable    BOOLEAN NOT NULL DEFAULT FALSE,
  PRIMARY KEY (skill_id, version, relative_path),
  FOREIGN KEY (skill_id, version) REFERENCES skill_versions (skill_id, version) ON DELETE CASCADE
);
CREATE INDEX skill_version_files_blob ON skill_version_files (blob_sha256);

-- Enable/disable state for skills the store does not own.
CREATE TABLE overrides (
  skill_key  TEXT PRIMARY KEY, -- e.g. "plugin:acme/deploy"
  enabled    BOOLEAN NOT NULL,
  updated_at BIGINT NOT NULL
);
