-- Same number as the SQLite V9.
-- A message's headers (queue-api-2.md §3): string -> string, names stored
-- lower-case, as the canonical JSON object the server validated (sorted,
-- compact). NULL when a message has none, so the common message costs
-- nothing and this ALTER rewrites no rows.
ALTER TABLE onceq_messages ADD COLUMN headers text
    CHECK (headers IS NULL OR jsonb_typeof(headers::jsonb) = 'object');
