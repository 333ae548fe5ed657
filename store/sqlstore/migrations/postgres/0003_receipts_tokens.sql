-- Receipts at scale. (Token changes are notified on loadout_changes with
-- "tokens" after the instance in the payload; they need no table.)
--
-- Raw receipts are kept for a window and up to a count (MaintainReceipts
-- prunes them); how often each agent used each skill is kept, per day, in
-- receipt_daily. The raw table keeps only its time index: the indexes by
-- agent and by skill cost about a third of an insert, and a listing by
-- agent or skill scans at most the raw table's bounded number of rows.
DROP INDEX receipts_agent_time;
DROP INDEX receipts_skill_time;

-- Receipts counted per UTC day, agent, skill, action and outcome. A name
-- that matched no skill counts under skill ''.
CREATE TABLE receipt_daily (
  day     BIGINT NOT NULL,               -- days since 1970-01-01, UTC
  agent   TEXT NOT NULL,
  skill   TEXT NOT NULL,
  action  TEXT NOT NULL,
  outcome TEXT NOT NULL,
  count   BIGINT NOT NULL,
  PRIMARY KEY (day, agent, skill, action, outcome)
);

-- The highest receipt id counted in receipt_daily: receipts above it are
-- counted by the next rollup (and by Usage, directly). Rollups lock the
-- receipts table first (see Dialect.lockReceipts), so no receipt at or
-- below it can still be uncommitted.
CREATE TABLE receipt_rollup (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  last_id BIGINT NOT NULL
);
INSERT INTO receipt_rollup (id, last_id) VALUES (1, 0);
