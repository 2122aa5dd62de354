-- How many times the keys have changed (migration V20): polled by the
-- server, which drops its cached keys when it moves.
SELECT changes FROM onceq_key_changes
