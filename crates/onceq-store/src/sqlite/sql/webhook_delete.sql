-- Its deliveries and attempts go with it (ON DELETE CASCADE).
DELETE FROM onceq_webhooks WHERE project = ?1 AND id = ?2
