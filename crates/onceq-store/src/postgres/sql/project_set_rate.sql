UPDATE onceq_projects
SET rate_per_sec = $2, rate_burst = $3
WHERE name = $1
