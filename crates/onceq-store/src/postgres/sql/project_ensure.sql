-- Projects exist implicitly: the first key or queue of a project creates it.
INSERT INTO onceq_projects (name, created_at)
VALUES ($1, $2)
ON CONFLICT (name) DO NOTHING
