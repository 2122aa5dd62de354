SELECT name, created_at, credit_limit_micros, spent_micros, rate_per_sec, rate_burst
FROM onceq_projects
WHERE name = ?1
