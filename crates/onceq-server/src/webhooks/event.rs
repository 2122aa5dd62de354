//! [`Event`]: what happened, as a webhook receives it: its type name and
//! its `data` (documented per type in `docs/api.md`, "Account webhooks").

use serde_json::{Value, json};

/// One event of a project. Each variant is one type of
/// `onceq_types::webhook::EVENT_TYPES`.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Messages moved to a dead-letter queue: one message (a nack: its id
    /// and hand-outs), or `count` of a queue's expired leases at once.
    DeadLettered {
        /// The queue they left.
        queue: String,
        /// `nack` (including a failed push delivery's) or `lease_expired`.
        reason: &'static str,
        /// The message, when one.
        message_id: Option<String>,
        /// Its hand-outs, when one.
        delivery_count: Option<i32>,
        /// How many.
        count: u64,
    },
    /// A hand-out failed: a nack carrying an error, a failed push delivery,
    /// or `count` expired leases of a queue.
    Failed {
        /// The message's queue.
        queue: String,
        /// `nack`, `push` or `lease_expired`.
        reason: &'static str,
        /// The message, when one.
        message_id: Option<String>,
        /// Its hand-outs, when one.
        delivery_count: Option<i32>,
        /// The nack's error, or why the push delivery failed.
        error: Option<String>,
        /// The push subscription, for a failed push.
        subscription_id: Option<String>,
        /// How many.
        count: u64,
    },
    /// A queue was created (explicitly; not the default dead-letter queue
    /// made with it, nor one made by a first publish).
    QueueCreated {
        /// Its name.
        queue: String,
    },
    /// A queue was deleted.
    QueueDeleted {
        /// Its name.
        queue: String,
        /// The messages deleted with it.
        messages_deleted: i64,
    },
    /// A queue was paused.
    QueuePaused {
        /// Its name.
        queue: String,
    },
    /// A queue was resumed.
    QueueResumed {
        /// Its name.
        queue: String,
    },
    /// A cron schedule's run could not be published.
    CronRunFailed {
        /// The schedule's id.
        schedule_id: String,
        /// Why.
        error: String,
    },
    /// The project's credit is used up: calls are refused with 402.
    CreditExhausted {
        /// Its credit limit, in USD.
        limit_usd: f64,
        /// What it has spent, in USD.
        spent_usd: f64,
    },
    /// Sent by `POST /v1/account/webhooks/test/{id}`.
    WebhookTest {
        /// The webhook tested.
        webhook_id: String,
    },
}

/// `message.dead_lettered`.
pub const DEAD_LETTERED: &str = "message.dead_lettered";
/// `message.failed`.
pub const FAILED: &str = "message.failed";

impl Event {
    /// Its type's name.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::DeadLettered { .. } => DEAD_LETTERED,
            Event::Failed { .. } => FAILED,
            Event::QueueCreated { .. } => "queue.created",
            Event::QueueDeleted { .. } => "queue.deleted",
            Event::QueuePaused { .. } => "queue.paused",
            Event::QueueResumed { .. } => "queue.resumed",
            Event::CronRunFailed { .. } => "cron.run_failed",
            Event::CreditExhausted { .. } => "credit.exhausted",
            Event::WebhookTest { .. } => "webhook.test",
        }
    }

    /// Its `data`. Absent optional fields are left out, not `null`.
    pub fn data(&self) -> Value {
        let mut data = match self {
            Event::DeadLettered {
                queue,
                reason,
                message_id,
                delivery_count,
                count,
            } => json!({"queue": queue, "reason": reason, "message_id": message_id,
                        "delivery_count": delivery_count, "count": count}),
            Event::Failed {
                queue,
                reason,
                message_id,
                delivery_count,
                error,
                subscription_id,
                count,
            } => json!({"queue": queue, "reason": reason, "message_id": message_id,
                        "delivery_count": delivery_count, "error": error,
                        "subscription_id": subscription_id, "count": count}),
            Event::QueueCreated { queue }
            | Event::QueuePaused { queue }
            | Event::QueueResumed { queue } => json!({ "queue": queue }),
            Event::QueueDeleted {
                queue,
                messages_deleted,
            } => json!({"queue": queue, "messages_deleted": messages_deleted}),
            Event::CronRunFailed { schedule_id, error } => {
                json!({"schedule_id": schedule_id, "error": error})
            }
            Event::CreditExhausted {
                limit_usd,
                spent_usd,
            } => json!({"limit_usd": limit_usd, "spent_usd": spent_usd}),
            Event::WebhookTest { webhook_id } => json!({
                "webhook_id": webhook_id,
                "message": "a test event sent by POST /v1/account/webhooks/test"
            }),
        };
        if let Value::Object(fields) = &mut data {
            fields.retain(|_, v| !v.is_null());
        }
        data
    }
}

#[cfg(test)]
mod tests {
    use onceq_types::webhook::EVENT_TYPES;

    use super::*;

    #[test]
    fn every_documented_type_has_a_variant_and_back() {
        let events = [
            Event::DeadLettered {
                queue: "q".into(),
                reason: "nack",
                message_id: None,
                delivery_count: None,
                count: 1,
            },
            Event::Failed {
                queue: "q".into(),
                reason: "nack",
                message_id: Some("m".into()),
                delivery_count: Some(1),
                error: Some("boom".into()),
                subscription_id: None,
                count: 1,
            },
            Event::QueueCreated { queue: "q".into() },
            Event::QueueDeleted {
                queue: "q".into(),
                messages_deleted: 0,
            },
            Event::QueuePaused { queue: "q".into() },
            Event::QueueResumed { queue: "q".into() },
            Event::CronRunFailed {
                schedule_id: "s".into(),
                error: "e".into(),
            },
            Event::CreditExhausted {
                limit_usd: 1.0,
                spent_usd: 1.0,
            },
            Event::WebhookTest {
                webhook_id: "w".into(),
            },
        ];
        let kinds: Vec<_> = events.iter().map(Event::kind).collect();
        assert_eq!(kinds, EVENT_TYPES);
        assert_eq!(
            events[1].data(),
            json!({"queue": "q", "reason": "nack", "message_id": "m",
                   "delivery_count": 1, "error": "boom", "count": 1})
        );
    }
}
