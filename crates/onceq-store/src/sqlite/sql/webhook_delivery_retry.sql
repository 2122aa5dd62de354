UPDATE onceq_webhook_deliveries SET due_at = ?2 WHERE id = ?1
