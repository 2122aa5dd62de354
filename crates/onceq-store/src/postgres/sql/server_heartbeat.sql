-- Upsert this server's heartbeat, forget servers not seen since $3, and
-- count the live ones. The CTEs run on one snapshot, so the count is of
-- the other live servers, plus this one.
WITH beat AS (
    INSERT INTO onceq_servers (server_id, last_seen)
    VALUES ($1, $2)
    ON CONFLICT (server_id) DO UPDATE SET last_seen = EXCLUDED.last_seen
), gone AS (
    DELETE FROM onceq_servers WHERE last_seen < $3 AND server_id <> $1
)
SELECT (count(*) + 1)::integer AS live
FROM onceq_servers
WHERE last_seen >= $3 AND server_id <> $1
