UPDATE onceq_projects
SET credit_limit_micros = ?2
WHERE name = ?1
