-- One bucket of a flush; the whole flush is one writer transaction.
INSERT INTO onceq_usage AS u (project, capability, minute, calls, billable_calls, cost_micros)
VALUES (?1, ?2, ?3, ?4, ?5, ?6)
ON CONFLICT (project, capability, minute) DO UPDATE
SET calls = u.calls + excluded.calls,
    billable_calls = u.billable_calls + excluded.billable_calls,
    cost_micros = u.cost_micros + excluded.cost_micros
