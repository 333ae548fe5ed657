-- The size of the raw receipts, as estimated by store.ReceiptBytes (128
-- bytes a row plus 1.25 times its text), per rollup chunk: MaintainReceipts
-- adds a row for each chunk it counts, and deletes the oldest raw receipts
-- while the chunks still kept sum past Retention.MaxBytes. A row whose
-- chunk was partly deleted keeps its whole size: the sum errs high.
CREATE TABLE receipt_bytes (
  last_id INTEGER PRIMARY KEY, -- the chunk's highest receipt id
  bytes   INTEGER NOT NULL
);
-- The receipts counted before this migration, as one chunk.
INSERT INTO receipt_bytes (last_id, bytes)
SELECT r.last_id, (SELECT coalesce(sum(128 + (octet_length(agent) + octet_length(skill) + octet_length(action) + octet_length(path)
  + octet_length(source) + octet_length(plugin) + octet_length(trust) + octet_length(digest) + octet_length(transport)
  + octet_length(outcome) + octet_length(token) + octet_length(code) + octet_length(origin)) * 5 / 4), 0)
  FROM receipts WHERE id <= r.last_id)
FROM receipt_rollup r WHERE r.last_id > 0;
