DELETE FROM onceq_webhook_deliveries WHERE id = $1
