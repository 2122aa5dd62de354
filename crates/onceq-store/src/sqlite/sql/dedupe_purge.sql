DELETE FROM onceq_dedupe_keys WHERE expires_at <= ?1
