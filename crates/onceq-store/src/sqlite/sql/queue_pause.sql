-- `Store::queue_pause`: pauses (?2 = 1) or resumes (?2 = 0) queue ?1.
UPDATE onceq_queues
SET paused = ?2
WHERE id = ?1
