SELECT count(*) FROM onceq_servers
