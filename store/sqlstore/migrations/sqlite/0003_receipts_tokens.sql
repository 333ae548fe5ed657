-- Receipts at scale, and a token change counter.
--
-- Raw receipts are kept for a window and up to a count (MaintainReceipts
-- prunes them); how often each agent used each skill is kept, per day, in
-- receipt_daily. The raw table keeps only its time index: the indexes by
-- agent and by skill cost more than the rest of an insert together (a
-- batch touched a page of the skill index per receipt), and a listing by
-- agent or skill scans at most the raw table's bounded number of rows.
DROP INDEX receipts_agent_time;
DROP INDEX receipts_skill_time;

-- Receipts counted per UTC day, agent, skill, action and outcome. A name
-- that matched no skill counts under skill ''.
CREATE TABLE receipt_daily (
  day     INTEGER NOT NULL,              -- days since 1970-01-01, UTC
  agent   TEXT NOT NULL,
  skill   TEXT NOT NULL,
  action  TEXT NOT NULL,
  outcome TEXT NOT NULL,
  count   INTEGER NOT NULL,
  PRIMARY KEY (day, agent, skill, action, outcome)
) STRICT, WITHOUT ROWID;

-- The highest receipt id counted in receipt_daily: receipts above it are
-- counted by the next rollup (and by Usage, directly).
CREATE TABLE receipt_rollup (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  last_id INTEGER NOT NULL
) STRICT;
INSERT INTO receipt_rollup (id, last_id) VALUES (1, 0);

-- Counts the token creations and revocations, as n counts the writes to
-- skills: the token change feed polls it.
ALTER TABLE change_seq ADD COLUMN tokens INTEGER NOT NULL DEFAULT 0;
