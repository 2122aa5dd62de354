-- Servers not seen since ?1 are gone.
DELETE FROM onceq_servers WHERE last_seen < ?1
