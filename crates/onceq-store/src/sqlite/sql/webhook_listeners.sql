-- The webhooks of project ?1 that receive type ?2 (or only webhook ?3,
-- whatever it listens to).
SELECT id, project, url, events, secret, description, headers, created_at
FROM onceq_webhooks w
WHERE w.project = ?1
  AND CASE WHEN ?3 IS NULL
           THEN EXISTS (SELECT 1 FROM json_each(w.events) WHERE value IN (?2, '*'))
           ELSE w.id = ?3 END
ORDER BY created_at, id
