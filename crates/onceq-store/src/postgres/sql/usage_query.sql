SELECT capability,
       sum(calls)::bigint AS calls,
       sum(billable_calls)::bigint AS billable_calls,
       sum(cost_micros)::bigint AS cost_micros
FROM onceq_usage
WHERE project = $1 AND minute >= $2 AND minute < $3
GROUP BY capability
ORDER BY capability
