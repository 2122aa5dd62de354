INSERT INTO onceq_servers (server_id, last_seen)
VALUES (?1, ?2)
ON CONFLICT (server_id) DO UPDATE SET last_seen = excluded.last_seen
