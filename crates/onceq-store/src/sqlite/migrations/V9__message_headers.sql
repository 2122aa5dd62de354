-- Same number as the PostgreSQL V9.
-- A message's headers (queue-api-2.md §3): string -> string, names stored
-- lower-case, as the canonical JSON object the server validated (sorted,
-- compact). NULL when a message has none.
ALTER TABLE onceq_messages ADD COLUMN headers TEXT
    CHECK (headers IS NULL OR json_type(headers) = 'object');
