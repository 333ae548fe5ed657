-- The audit trail: one append-only, hash-chained row per write (see
-- store/sqlstore/audit.go for the hash's encoding, docs/audit.md for the
-- model). Rows are never updated; pruning deletes the oldest and appends a
-- record naming them, so the chain still verifies.
CREATE TABLE audit_log (
  seq         BIGINT PRIMARY KEY,        -- 1, 2, 3… with no gap
  at          BIGINT NOT NULL,           -- microseconds since 1970, UTC
  actor_token TEXT NOT NULL,
  actor       TEXT NOT NULL,
  role        TEXT NOT NULL,
  action      TEXT NOT NULL,
  target      TEXT NOT NULL,
  before_digest TEXT NOT NULL,
  after_digest  TEXT NOT NULL,
  client      TEXT NOT NULL,
  transport   TEXT NOT NULL,
  detail      TEXT NOT NULL,
  prev_hash   TEXT NOT NULL,
  hash        TEXT NOT NULL
);
-- The list's filters, each newest first.
CREATE INDEX audit_log_actor ON audit_log (actor, seq);
CREATE INDEX audit_log_action ON audit_log (action, seq);
CREATE INDEX audit_log_target ON audit_log (target, seq);
CREATE INDEX audit_log_at ON audit_log (at);

-- The chain's head: the last record's seq and hash. Every append reads it
-- locked (FOR UPDATE; SQLite's write lock) and moves it in the same
-- transaction, so appends from any number of instances form one chain.
-- It also lets verify notice rows deleted from the end.
CREATE TABLE audit_head (
  id   INTEGER PRIMARY KEY CHECK (id = 1),
  seq  BIGINT NOT NULL,
  hash TEXT NOT NULL
);
INSERT INTO audit_head (id, seq, hash) VALUES (1, 0, '');
