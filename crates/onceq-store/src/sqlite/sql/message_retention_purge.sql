-- ?1 is now; a day is 86 400 000 000 microseconds.
DELETE FROM onceq_messages
WHERE created_at < ?1 - 86400000000 * (SELECT q.message_retention_days
                                        FROM onceq_queues q
                                        WHERE q.id = onceq_messages.queue_id)
