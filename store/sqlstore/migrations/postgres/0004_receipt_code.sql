-- A receipt's refusal code: why a load or read was refused (the path
-- check's path-*, symlink-escapes, range-invalid, too-large...), empty
-- when it was not.
ALTER TABLE receipts ADD COLUMN code TEXT NOT NULL DEFAULT '';
