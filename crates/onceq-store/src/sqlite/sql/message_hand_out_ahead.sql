-- rules::hand_out::Ahead for a new message of priority ?2 (as stored) on
-- queue ?1 at ?3: whether an available message of at least its priority
-- waits there, and whether a delayed one's time has come. Each a probe of
-- its partial index (onceq_messages_available, onceq_messages_delayed).
SELECT EXISTS (SELECT 1 FROM onceq_messages
               WHERE queue_id = ?1 AND state = 'available' AND priority >= ?2),
       EXISTS (SELECT 1 FROM onceq_messages
               WHERE queue_id = ?1 AND state = 'delayed' AND visible_at <= ?3)
