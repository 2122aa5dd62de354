-- How many webhooks a project has; under the project's advisory lock
-- (webhook_lock.sql) so two registrations cannot both pass the limit.
SELECT count(*) FROM onceq_webhooks WHERE project = $1
