-- One statement per flush (about once a second per server, whatever the
-- request rate): add every bucket, and add their cost to the projects'
-- spend. The caller sends each (project, capability, minute) once.
WITH rows AS (
    SELECT *
    FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::bigint[], $5::bigint[], $6::bigint[])
        AS r (project, capability, minute, calls, billable_calls, cost_micros)
), added AS (
    INSERT INTO onceq_usage AS u (project, capability, minute, calls, billable_calls, cost_micros)
    SELECT project, capability, minute, calls, billable_calls, cost_micros FROM rows
    ON CONFLICT (project, capability, minute) DO UPDATE
    SET calls = u.calls + EXCLUDED.calls,
        billable_calls = u.billable_calls + EXCLUDED.billable_calls,
        cost_micros = u.cost_micros + EXCLUDED.cost_micros
)
UPDATE onceq_projects p
SET spent_micros = p.spent_micros + s.cost
FROM (
    SELECT project, sum(cost_micros)::bigint AS cost
    FROM rows
    GROUP BY project
    HAVING sum(cost_micros) > 0
) s
WHERE p.name = s.project
