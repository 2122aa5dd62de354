SELECT capability, sum(calls), sum(billable_calls), sum(cost_micros)
FROM onceq_usage
WHERE project = ?1 AND minute >= ?2 AND minute < ?3
GROUP BY capability
ORDER BY capability
