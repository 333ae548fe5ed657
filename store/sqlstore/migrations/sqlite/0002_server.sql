-- What a running server keeps beside the skills: bearer tokens, activation
-- receipts, and the change counter the change feed polls.

-- Bearer tokens. Only the sha256 of a secret is kept.
CREATE TABLE tokens (
  id            TEXT PRIMARY KEY,        -- short random hex, shown to people
  name          TEXT NOT NULL DEFAULT '',
  secret_sha256 TEXT NOT NULL UNIQUE,    -- hex of sha256(secret)
  scopes        TEXT NOT NULL,           -- JSON array: "admin", "agent:ID"
  created_at    INTEGER NOT NULL,
  last_used     INTEGER,                 -- NULL until first use; updated at most once a minute
  revoked       INTEGER NOT NULL DEFAULT 0
) STRICT;

-- One row per activation or file read, over any transport. Append-only.
CREATE TABLE receipts (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  time      INTEGER NOT NULL,            -- Unix microseconds
  agent     TEXT NOT NULL DEFAULT '',
  skill     TEXT NOT NULL DEFAULT '',
  action    TEXT NOT NULL DEFAULT '',    -- load, read
  path      TEXT NOT NULL DEFAULT '',
  source    TEXT NOT NULL DEFAULT '',    -- folder, store, plugin
  plugin    TEXT NOT NULL DEFAULT '',
  trust     TEXT NOT NULL DEFAULT '',
  digest    TEXT NOT NULL DEFAULT '',
  transport TEXT NOT NULL DEFAULT '',    -- http, mcp-http, mcp-stdio, cli
  outcome   TEXT NOT NULL DEFAULT '',    -- ok, not_found, refused, too_large, error
  token     TEXT NOT NULL DEFAULT ''     -- the token's id, never its secret
) STRICT;
CREATE INDEX receipts_time ON receipts (time);
CREATE INDEX receipts_agent_time ON receipts (agent, time);
CREATE INDEX receipts_skill_time ON receipts (skill, time);

-- Counts the committed writes to skills, files and overrides. Each such
-- write transaction bumps it; every instance polls PRAGMA data_version
-- (which moves on any commit, receipts and tokens included) and reads n
-- only when that moved, so only these writes reach the change feed.
CREATE TABLE change_seq (
  id       INTEGER PRIMARY KEY CHECK (id = 1),
  n        INTEGER NOT NULL,
  instance TEXT NOT NULL DEFAULT ''      -- the store instance that wrote last
) STRICT;
INSERT INTO change_seq (id, n) VALUES (1, 0);
