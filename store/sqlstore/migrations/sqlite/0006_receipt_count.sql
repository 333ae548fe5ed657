-- How many loads or reads a receipt stands for: the server merges
-- receipts identical in every field but time that were recorded within
-- one flush of its receipt buffer (at most 50 ms) into one row, with the
-- first one's time. Rows written before stand for one each.
ALTER TABLE receipts ADD COLUMN count INTEGER NOT NULL DEFAULT 1;
