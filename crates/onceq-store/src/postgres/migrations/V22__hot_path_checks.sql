-- PostgreSQL only (V20 and V21 are SQLite's): per-row work the hot
-- statements paid for and no rule needs (docs/performance.md, session 24).
--
-- 1. The foreign keys of onceq_dedupe_keys and onceq_finished on their
-- queue. Each was a trigger and an SPI query per row inserted: a publish's
-- key (about a quarter of PostgreSQL's CPU in a batch enqueue, with the
-- messages' own check) and a kept ack's finished row. What they gave, the
-- rows going with their queue, `queue_delete_once` now does itself: it
-- deletes them by queue, after it has locked the queue and deleted its
-- messages, so it sees every key and finished row that committed before
-- it. A publish still cannot store a message in a queue being deleted: the
-- messages' foreign key stays (its KEY SHARE lock waits for the delete,
-- then fails, and the group is retried), and so does the lease reaper's,
-- dead-lettering's and redrive's reliance on it. A group's key claim
-- probes the queue instead (sql/dedupe_key_claim_many.sql), so a cached
-- id of a deleted queue claims nothing. What is left without the keys'
-- check: a group whose key claim ran just before a queue delete committed,
-- and whose message insert just after, keeps a key on the deleted queue's
-- id. Queue ids come from a sequence and are never reused, so no queue
-- ever reads it; the purge removes it at its expiry.
-- A finished row comes only from a message the same statement deleted, so
-- the messages' row lock orders it against the queue's delete.
ALTER TABLE onceq_dedupe_keys DROP CONSTRAINT onceq_dedupe_keys_queue_id_fkey;
ALTER TABLE onceq_finished DROP CONSTRAINT onceq_finished_queue_id_fkey;
-- (The deletes by queue have their indexes: the keys' primary key and
-- onceq_finished_queue_newest, V14, both start with queue_id.)

-- 2. `onceq_attempt_time` (V10) declared STABLE, which it is (`to_char` is
-- stable). Declared IMMUTABLE over a stable body PostgreSQL refuses to
-- inline it, and ran it as a SQL function call per use, its body parsed
-- again each time: 5.7 % of PostgreSQL's CPU in a kept ack.
ALTER FUNCTION onceq_attempt_time(timestamptz) STABLE;

-- 3. `onceq_attempts_append` (V18's PL/pgSQL) as one SQL expression that
-- PostgreSQL inlines into the statement: the same answer for every input
-- (rules::attempts, postgres/rule_tests.rs), without a PL/pgSQL call per
-- row. The attempts so far with the new one, then the last `keep` of them.
CREATE OR REPLACE FUNCTION onceq_attempts_append(attempts text, attempt jsonb, keep integer)
RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN keep >= 1 THEN
        jsonb_path_query_array(
            coalesce(attempts::jsonb, '[]'::jsonb) || jsonb_build_array(attempt),
            '$[last - $keep + 1 to last]',
            jsonb_build_object('keep', keep))::text
    END
$$;
