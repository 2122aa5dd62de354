-- SQLite only (PostgreSQL has no V21): the same CHECK on a message's
-- state, written so that SQLite checks it with three comparisons.
--
-- SQLite codes `x IN (a, b, c)` with more than two constants as a
-- temporary b-tree, built and freed on every row checked: for
-- `onceq_messages.state` that was every insert (each publish) and every
-- update of a state (each claim, nack, promotion), 3 µs an insert on this
-- machine and 5 % of the writer thread's CPU in the batch enqueue
-- (docs/performance.md, session 17). `state = a OR state = b OR state = c`
-- allows exactly the same values and costs 1.3 µs. (The other lists of
-- three or more, a cron run's and a webhook attempt's outcome, are
-- written once per run or attempt, not per message: left as they are.)
--
-- A CHECK is not stored in the table's pages, only in its CREATE TABLE
-- text, so the text is changed in place as SQLite documents for such
-- changes (lang_altertable.html, "making other kinds of table schema
-- changes"), without copying the table. `writable_schema = RESET` reloads
-- this connection's schema; the table made and dropped below moves the
-- schema cookie, so every other connection reloads it too, and it fails
-- the migration (its CHECK) unless the new text is in place.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
   SET sql = replace(sql,
                     'CHECK (state IN (''available'', ''delayed'', ''in_flight''))',
                     'CHECK (state = ''available'' OR state = ''delayed'' OR state = ''in_flight'')')
 WHERE type = 'table' AND name = 'onceq_messages';
PRAGMA writable_schema = RESET;

CREATE TABLE onceq_migration_check (rewritten INTEGER NOT NULL CHECK (rewritten = 1));
INSERT INTO onceq_migration_check (rewritten)
SELECT count(*) FROM sqlite_schema
 WHERE type = 'table' AND name = 'onceq_messages'
   AND instr(sql, 'CHECK (state = ''available'' OR state = ''delayed'' OR state = ''in_flight'')') > 0
   AND instr(sql, 'state IN (') = 0;
DROP TABLE onceq_migration_check;
