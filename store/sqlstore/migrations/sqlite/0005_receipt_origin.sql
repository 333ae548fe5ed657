-- Where the loaded skill came from, beyond its kind: for a remote skill
-- its source URL, ref, revision and folder ("git URL@REF REVISION PATH"),
-- for a plugin skill the plugin's version; empty for folder and stored
-- skills, whose digest and location say it.
ALTER TABLE receipts ADD COLUMN origin TEXT NOT NULL DEFAULT '';
