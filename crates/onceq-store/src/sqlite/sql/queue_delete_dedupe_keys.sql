DELETE FROM onceq_dedupe_keys WHERE queue_id = ?1
