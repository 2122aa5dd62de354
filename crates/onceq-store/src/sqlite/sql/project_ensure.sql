-- Projects exist as soon as something (a key, a queue) names them.
INSERT INTO onceq_projects (name, created_at)
VALUES (?1, ?2)
ON CONFLICT (name) DO NOTHING
