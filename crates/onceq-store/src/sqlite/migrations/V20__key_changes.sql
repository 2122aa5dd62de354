-- A count of changes to the keys table (sqlite/key_cache.rs).
--
-- The server keeps the keys it has looked up in memory. A change made by
-- any onceq process (this server, `onceq keys ...` from the CLI) also
-- touches a marker file that the server checks on every lookup, so it is
-- seen at once. A change made any other way (an operator in the sqlite3
-- shell) is seen through this count instead: the server reads it every
-- 0.5 s and drops its cached keys when it moves. The triggers bump it in
-- the transaction that changes the keys, whoever makes the change.
CREATE TABLE onceq_key_changes (
    -- One row only.
    only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
    changes  INTEGER NOT NULL
);
INSERT INTO onceq_key_changes (only_row, changes) VALUES (1, 0);

CREATE TRIGGER onceq_keys_inserted AFTER INSERT ON onceq_api_keys
BEGIN
    UPDATE onceq_key_changes SET changes = changes + 1;
END;

CREATE TRIGGER onceq_keys_updated AFTER UPDATE ON onceq_api_keys
BEGIN
    UPDATE onceq_key_changes SET changes = changes + 1;
END;

CREATE TRIGGER onceq_keys_deleted AFTER DELETE ON onceq_api_keys
BEGIN
    UPDATE onceq_key_changes SET changes = changes + 1;
END;
