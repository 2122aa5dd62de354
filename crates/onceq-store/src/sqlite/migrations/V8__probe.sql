-- The readiness probe's one row (`SqliteStore::ping`): each probe writes it
-- through the writer, so a store that cannot write (a full disk, a
-- read-only file) is not ready. SQLite only; PostgreSQL's probe asks the
-- server whether it can write instead. (Numbered 8: 7 is PostgreSQL's
-- key_notify, which the embedded store has no counterpart of.)
CREATE TABLE onceq_probe (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    probed_at INTEGER NOT NULL
);
