-- Two changes: a count of changes to the keys table, for servers that
-- cannot LISTEN; and a cheaper `onceq_attempts_append`, for kept acks.
--
-- The count of changes to the keys table, for servers that cannot LISTEN.
--
-- Behind a pooler in transaction mode (`pgbouncer=transaction`) a LISTEN
-- lands on whichever server connection ran it, so no notification of V7's
-- trigger reaches the server that asked. Such a server polls this row
-- instead (postgres/key_cache.rs) and drops its cached keys when the count
-- moves. The same trigger bumps it, in the transaction that changes the
-- keys, whoever makes the change (a server, `onceq keys ...`, psql): a
-- poll that starts after the change commits sees the new count.
-- (The embedded store has no counterpart: it does not cache key lookups.)
CREATE TABLE onceq_key_changes (
    -- One row only.
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    changes  bigint NOT NULL
);
INSERT INTO onceq_key_changes (only_row, changes) VALUES (true, 0);

CREATE OR REPLACE FUNCTION onceq_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE onceq_key_changes SET changes = changes + 1;
    PERFORM pg_notify('onceq_keys', '');
    RETURN NULL;
END
$$;

-- `onceq_attempts_append` (V10) again, in PL/pgSQL: the same answer for
-- every input, much cheaper per call. V10's SQL function holds an
-- aggregate, so PostgreSQL cannot inline it and runs its query through a
-- fresh executor on every call: for a kept ack (message_ack_keep_many.sql)
-- that was about 40 % of the statement's time (perf, docs/performance.md).
-- PL/pgSQL keeps its expressions' plans for the session, and an ack's
-- message has at most `keep` attempts already, so the loop drops at most
-- one.
CREATE OR REPLACE FUNCTION onceq_attempts_append(attempts text, attempt jsonb, keep integer)
RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    kept jsonb;
BEGIN
    IF keep IS NULL OR keep < 1 THEN
        RETURN NULL;
    END IF;
    kept := coalesce(attempts::jsonb, '[]'::jsonb) || jsonb_build_array(attempt);
    WHILE jsonb_array_length(kept) > keep LOOP
        kept := kept - 0;
    END LOOP;
    RETURN kept::text;
END
$$;
