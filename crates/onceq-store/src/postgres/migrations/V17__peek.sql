-- The `peek` action (docs/security.md): reading a stored payload without
-- consuming it (message get, cron answers, the dashboard) now needs it,
-- where `read` sufficed before. `full` holds it, so keys stored as `full`
-- keep it. A key holding both `read` and `consume` could read payloads
-- before and can take any message of its queues anyway: it keeps them by
-- getting `peek`. A key with `read` and not `consume` (a dashboard, a
-- support tool) no longer sees payloads; give it `peek` on purpose.
-- Stored actions are their canonical text: `full`, `full,accounts`, or
-- names joined by commas.
UPDATE onceq_api_keys
   SET actions = actions || ',peek'
 WHERE actions NOT IN ('full', 'full,accounts')
   AND (',' || actions || ',') LIKE '%,read,%'
   AND (',' || actions || ',') LIKE '%,consume,%'
   AND (',' || actions || ',') NOT LIKE '%,peek,%';
