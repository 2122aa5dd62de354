-- A delayed message whose time has come counts as available
-- (`rules::visibility::reported`, src/rules/visibility.rs): the next claim
-- hands it out.
SELECT coalesce(sum(state = 'available' OR (state = 'delayed' AND visible_at <= ?2)), 0),
       coalesce(sum(state = 'delayed' AND visible_at > ?2), 0),
       coalesce(sum(state = 'in_flight'), 0),
       min(created_at)
FROM onceq_messages
WHERE queue_id = ?1
