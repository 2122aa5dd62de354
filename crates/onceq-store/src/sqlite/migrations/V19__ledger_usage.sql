-- Same number as the PostgreSQL V19 (V18 is taken by the PostgreSQL key
-- cache's change). The call ledger's per-project usage as counters, kept
-- by triggers in the transaction of each statement that changes an entry,
-- so the bound's check is one primary-key read (see the PostgreSQL file
-- for why triggers). Only the server's scopes count.
--
-- A server scope is `server:<bytes of project>:<project> <capability>`
-- (rules/ledger.rs); its project is the bytes after the length prefix, as
-- many as it says:
--   CAST(substr(CAST(scope AS BLOB), 8 + instr(substr(scope, 8), ':'), CAST(substr(scope, 8, instr(substr(scope, 8), ':') - 1) AS INTEGER)) AS TEXT)
-- written out in full wherever it is needed (SQLite has no stored
-- functions, and an expression index is used only by the very same
-- expression: ledger_first_expiry.sql).

-- One row per project: the writer is one connection, so there is no
-- contention to spread over slots as on PostgreSQL.
CREATE TABLE onceq_ledger_usage (
    project TEXT    NOT NULL PRIMARY KEY,
    -- entries kept (answered or in flight) until purged
    entries INTEGER NOT NULL,
    -- bytes of their recorded answers
    bytes   INTEGER NOT NULL
) STRICT;

CREATE TRIGGER onceq_ledger_usage_added
AFTER INSERT ON onceq_request_ledger
WHEN substr(NEW.scope, 1, 7) = 'server:'
BEGIN
    INSERT INTO onceq_ledger_usage (project, entries, bytes)
    VALUES (CAST(substr(CAST(NEW.scope AS BLOB), 8 + instr(substr(NEW.scope, 8), ':'), CAST(substr(NEW.scope, 8, instr(substr(NEW.scope, 8), ':') - 1) AS INTEGER)) AS TEXT), 1, coalesce(length(NEW.body), 0))
    ON CONFLICT (project) DO UPDATE
        SET entries = entries + 1, bytes = bytes + excluded.bytes;
END;

-- An answer recorded (complete) or dropped (a claim taking over an
-- expired entry); the entry stays.
CREATE TRIGGER onceq_ledger_usage_changed
AFTER UPDATE OF body ON onceq_request_ledger
WHEN substr(NEW.scope, 1, 7) = 'server:'
    AND length(NEW.body) IS NOT length(OLD.body)
BEGIN
    INSERT INTO onceq_ledger_usage (project, entries, bytes)
    VALUES (CAST(substr(CAST(NEW.scope AS BLOB), 8 + instr(substr(NEW.scope, 8), ':'), CAST(substr(NEW.scope, 8, instr(substr(NEW.scope, 8), ':') - 1) AS INTEGER)) AS TEXT), 0,
            coalesce(length(NEW.body), 0) - coalesce(length(OLD.body), 0))
    ON CONFLICT (project) DO UPDATE SET bytes = bytes + excluded.bytes;
END;

CREATE TRIGGER onceq_ledger_usage_removed
AFTER DELETE ON onceq_request_ledger
WHEN substr(OLD.scope, 1, 7) = 'server:'
BEGIN
    INSERT INTO onceq_ledger_usage (project, entries, bytes)
    VALUES (CAST(substr(CAST(OLD.scope AS BLOB), 8 + instr(substr(OLD.scope, 8), ':'), CAST(substr(OLD.scope, 8, instr(substr(OLD.scope, 8), ':') - 1) AS INTEGER)) AS TEXT), -1, -coalesce(length(OLD.body), 0))
    ON CONFLICT (project) DO UPDATE
        SET entries = entries - 1, bytes = bytes + excluded.bytes;
END;

INSERT INTO onceq_ledger_usage (project, entries, bytes)
SELECT CAST(substr(CAST(scope AS BLOB), 8 + instr(substr(scope, 8), ':'), CAST(substr(scope, 8, instr(substr(scope, 8), ':') - 1) AS INTEGER)) AS TEXT), count(*), coalesce(sum(length(body)), 0)
FROM onceq_request_ledger
WHERE substr(scope, 1, 7) = 'server:'
GROUP BY 1;

-- A refused call's Retry-After: when the project's first live entry ends,
-- one probe of this index.
CREATE INDEX onceq_request_ledger_server_expiry
    ON onceq_request_ledger (CAST(substr(CAST(scope AS BLOB), 8 + instr(substr(scope, 8), ':'), CAST(substr(scope, 8, instr(substr(scope, 8), ':') - 1) AS INTEGER)) AS TEXT), expires_at)
    WHERE substr(scope, 1, 7) = 'server:';
