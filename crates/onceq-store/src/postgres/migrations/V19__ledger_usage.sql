-- Same number as the SQLite V19 (V18 is the key cache's change). The call
-- ledger's per-project usage as counters (docs/security.md, "The call
-- ledger's bound"), so the bound's check after a new claim is one
-- primary-key read whatever the project keeps, where it read up to
-- max_entries + 1 of the project's entries before.
--
-- Triggers on the shared request ledger keep the counters, in the
-- transaction of the statement that changed the entry: the shared claim,
-- complete, release and purge statements run unchanged, and no path that
-- writes the ledger can forget them. Only the server's scopes count
-- (`server:<bytes of project>:<project> <capability>`, rules/ledger.rs);
-- the toolkit's, when it shares the database, are left alone.

-- The project of a server scope: what lies between the length prefix and
-- the last space (a capability holds no space; a project may).
CREATE FUNCTION onceq_ledger_project(scope text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT substring(scope FROM '^server:[0-9]+:(.*) [^ ]*$') $$;

-- A project's entries (answered or in flight, kept until purged) and the
-- bytes of their recorded answers, in 16 slots: the slot is the first byte
-- of an entry's fingerprint (SHA-256, so even), and the project's usage
-- is the sum of its slots. Concurrent claims of one project then mostly
-- update different rows, instead of all queueing on one row's lock until
-- each commits. A slot may go below zero (a claim counted in one slot,
-- taken over by another request and purged from another); the sum is exact.
CREATE TABLE onceq_ledger_usage (
    project text     NOT NULL,
    slot    smallint NOT NULL CHECK (slot BETWEEN 0 AND 15),
    entries bigint   NOT NULL,
    bytes   bigint   NOT NULL,
    PRIMARY KEY (project, slot)
);

-- A new entry (a claim of a new key).
CREATE FUNCTION onceq_ledger_usage_added() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO onceq_ledger_usage AS u (project, slot, entries, bytes)
    VALUES (onceq_ledger_project(NEW.scope), get_byte(NEW.fingerprint, 0) % 16,
            1, coalesce(octet_length(NEW.body), 0))
    ON CONFLICT (project, slot) DO UPDATE
        SET entries = u.entries + 1, bytes = u.bytes + EXCLUDED.bytes;
    RETURN NULL;
END
$$;

-- An entry's answer changed: recorded (complete), or dropped (a claim
-- taking over an expired entry). The entry itself stays.
CREATE FUNCTION onceq_ledger_usage_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO onceq_ledger_usage AS u (project, slot, entries, bytes)
    VALUES (onceq_ledger_project(NEW.scope), get_byte(NEW.fingerprint, 0) % 16, 0,
            coalesce(octet_length(NEW.body), 0) - coalesce(octet_length(OLD.body), 0))
    ON CONFLICT (project, slot) DO UPDATE SET bytes = u.bytes + EXCLUDED.bytes;
    RETURN NULL;
END
$$;

-- Entries gone (release, purge), once per statement: a purge of many
-- projects' entries updates each slot once, in (project, slot) order, so
-- two servers purging at once take the counters' locks in one order and
-- never deadlock.
CREATE FUNCTION onceq_ledger_usage_removed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO onceq_ledger_usage AS u (project, slot, entries, bytes)
    SELECT onceq_ledger_project(scope), get_byte(fingerprint, 0) % 16,
           -count(*), -coalesce(sum(octet_length(body)), 0)
    FROM gone
    WHERE scope LIKE 'server:%'
    GROUP BY 1, 2
    ORDER BY 1, 2
    ON CONFLICT (project, slot) DO UPDATE
        SET entries = u.entries + EXCLUDED.entries, bytes = u.bytes + EXCLUDED.bytes;
    RETURN NULL;
END
$$;

-- The triggers lock the table against writes until this migration
-- commits, so the backfill below counts exactly what is there, and every
-- write after it is counted by them (servers of the previous version may
-- still be running).
CREATE TRIGGER onceq_ledger_usage_added
    AFTER INSERT ON onceq_request_ledger
    FOR EACH ROW WHEN (NEW.scope LIKE 'server:%')
    EXECUTE FUNCTION onceq_ledger_usage_added();
CREATE TRIGGER onceq_ledger_usage_changed
    AFTER UPDATE ON onceq_request_ledger
    FOR EACH ROW WHEN (NEW.scope LIKE 'server:%'
        AND octet_length(NEW.body) IS DISTINCT FROM octet_length(OLD.body))
    EXECUTE FUNCTION onceq_ledger_usage_changed();
CREATE TRIGGER onceq_ledger_usage_removed
    AFTER DELETE ON onceq_request_ledger
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT
    EXECUTE FUNCTION onceq_ledger_usage_removed();

INSERT INTO onceq_ledger_usage (project, slot, entries, bytes)
SELECT onceq_ledger_project(scope), get_byte(fingerprint, 0) % 16,
       count(*), coalesce(sum(octet_length(body)), 0)
FROM onceq_request_ledger
WHERE scope LIKE 'server:%'
GROUP BY 1, 2;

-- A refused call's Retry-After: when the project's first live entry ends,
-- one probe of this index (ledger_first_expiry.sql).
CREATE INDEX onceq_request_ledger_server_expiry
    ON onceq_request_ledger (onceq_ledger_project(scope), expires_at)
    WHERE scope LIKE 'server:%';
