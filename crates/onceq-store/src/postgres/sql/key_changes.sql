-- How many times the keys have changed (migration V18): polled by a
-- server behind a pooler, which drops its cached keys when it moves.
SELECT changes FROM onceq_key_changes
