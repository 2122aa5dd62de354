UPDATE onceq_projects
SET spent_micros = spent_micros + ?2
WHERE name = ?1
