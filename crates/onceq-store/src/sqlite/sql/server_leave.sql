DELETE FROM onceq_servers WHERE server_id = ?1
