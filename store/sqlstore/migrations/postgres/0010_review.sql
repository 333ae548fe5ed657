-- Drafts, review and exact versions per agent. A stored skill gets a
-- published version (what agents are served) beside its latest one
-- (skills.version, what authors edit); every skill that exists before this
-- migration is published at its current version, so nothing an agent sees
-- changes. published 0: nothing published yet (a skill created as a draft).
ALTER TABLE skills ADD COLUMN published INTEGER NOT NULL DEFAULT 0;
ALTER TABLE skills ADD COLUMN withdrawn BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE skills SET published = version;

-- One draft version awaiting (or past) review.
CREATE TABLE reviews (
  id             TEXT PRIMARY KEY,
  skill_id       TEXT NOT NULL REFERENCES skills(id) ON DELETE CASCADE,
  skill          TEXT NOT NULL,
  version        INTEGER NOT NULL,          -- the draft
  base           INTEGER NOT NULL,          -- the published version it was made from (0: none)
  digest         TEXT NOT NULL,             -- the draft's Bundle.Digest
  author_token   TEXT NOT NULL DEFAULT '',
  author         TEXT NOT NULL DEFAULT '',
  state          TEXT NOT NULL,             -- pending, approved, rejected, withdrawn
  reviewer_token TEXT NOT NULL DEFAULT '',
  reviewer       TEXT NOT NULL DEFAULT '',
  comment        TEXT NOT NULL DEFAULT '',
  created_at     BIGINT NOT NULL,
  decided_at     BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX reviews_state ON reviews (state, created_at);
CREATE INDEX reviews_skill ON reviews (skill_id, version);

-- What version of a stored skill an agent is served, when not the
-- published one: an exact version, or "latest".
CREATE TABLE agent_pins (
  agent_id   TEXT NOT NULL,
  skill      TEXT NOT NULL,
  follow     TEXT NOT NULL,                 -- version, published or latest
  version    INTEGER NOT NULL DEFAULT 0,    -- with follow = version
  actor      TEXT NOT NULL DEFAULT '',
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (agent_id, skill)
);
CREATE INDEX agent_pins_skill ON agent_pins (skill);
