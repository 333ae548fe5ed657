-- What a running server keeps beside the skills: bearer tokens and
-- activation receipts. (The change feed is LISTEN/NOTIFY on the channel
-- loadout_changes, with the schema and the writing instance as payload;
-- it needs no table.)

-- Bearer tokens. Only the sha256 of a secret is kept.
CREATE TABLE tokens (
  id            TEXT PRIMARY KEY,        -- short random hex, shown to people
  name          TEXT NOT NULL DEFAULT '',
  secret_sha256 TEXT NOT NULL UNIQUE,    -- hex of sha256(secret)
  scopes        JSON NOT NULL,           -- JSON array: "admin", "agent:ID"
  created_at    BIGINT NOT NULL,
  last_used     BIGINT,                  -- NULL until first use; updated at most once a minute
  revoked       BOOLEAN NOT NULL DEFAULT FALSE
);

-- One row per activation or file read, over any transport. Append-only.
CREATE TABLE receipts (
  id        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  time      BIGINT NOT NULL,             -- Unix microseconds
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
);
CREATE INDEX receipts_time ON receipts (time);
CREATE INDEX receipts_agent_time ON receipts (agent, time);
CREATE INDEX receipts_skill_time ON receipts (skill, time);
