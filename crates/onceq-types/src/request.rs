//! JSON bodies of the calls. Every field a caller may leave out is an
//! `Option`; the server checks ranges itself so that its messages name the
//! field and the allowed range. Unknown fields are ignored (but a camelCase
//! near-miss of a field is refused: `declare`). Integer fields
//! take any JSON number without a fractional part (`30` and `30.0` alike,
//! as JSON Schema's `integer` and the OpenAPI document say).

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::QueueType;

mod declare;
/// The admin bodies (`crate::admin`) and push's are declared with the same
/// field rules.
pub(crate) use declare::request;
pub use declare::{Fields, near_miss};

request! {
    /// `POST /v1/queue/create`.
    pub struct CreateQueue {
        /// The queue's name.
        #[cfg_attr(
            feature = "openapi",
            schema(
                required = true,
                nullable = false,
                pattern = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$"
            )
        )]
        pub name: Option<String>,
        /// `standard` (default) or `fifo`.
        #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
        pub queue_type: Option<QueueType>,
        /// An existing queue to dead-letter into; default `<name>-dlq`, created.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(
            feature = "openapi",
            schema(pattern = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}(-dlq)?$")
        )]
        pub dead_letter_queue: Option<String>,
        /// Default 3.
        #[whole(minimum = 0, maximum = 1000)]
        pub max_retries: Option<i64>,
        /// 1..=30, default 7.
        #[whole(minimum = 1, maximum = 30)]
        pub message_retention_days: Option<i64>,
        /// 0..=43200 seconds, default 30.
        #[whole(minimum = 0, maximum = 43200)]
        pub visibility_timeout_default: Option<i64>,
        /// Default true.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub enable_priority: Option<bool>,
        /// Default none (a failed hand-out is available again at once).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub retry_backoff: Option<RetryBackoffBody>,
        /// 1..=100000, default none: the most messages in flight at once.
        #[whole(minimum = 1, maximum = 100000)]
        pub max_in_flight: Option<i64>,
        /// 0.01..=100000, default none: the most hand-outs per second.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(minimum = 0.01, maximum = 100000))]
        pub rate_per_sec: Option<f64>,
        /// How long acked and cancelled messages are kept, 0..=2592000
        /// seconds; default the server's `--completed-retention-seconds`
        /// (0: not at all).
        #[whole(minimum = 0, maximum = 2592000)]
        pub completed_retention_seconds: Option<i64>,
    }
}

request! {
    /// `retry_backoff` of `create` and `update` (the rule:
    /// [`crate::RetryBackoff`]).
    pub struct RetryBackoffBody {
        /// The delay after the first failed hand-out: 1..=604800 seconds.
        #[whole(minimum = 1, maximum = 604800, required = true, nullable = false)]
        pub initial_seconds: Option<i64>,
        /// 1..=10, default 2: each further failed hand-out multiplies the
        /// delay by this.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 10))]
        pub multiplier: Option<f64>,
        /// The cap: initial_seconds..=604800 seconds.
        #[whole(minimum = 1, maximum = 604800, required = true, nullable = false)]
        pub max_seconds: Option<i64>,
        /// 0..=1, default 0: the fraction of the delay drawn at random
        /// (1 is full jitter, anywhere from 0 to the delay).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 1))]
        pub jitter: Option<f64>,
    }
}

request! {
    /// `POST /v1/queue/publish`.
    pub struct Publish {
        /// The queue; created with defaults if it does not exist.
        #[queue]
        pub queue: Option<String>,
        /// Any JSON value but `null`.
        #[cfg_attr(feature = "openapi", schema(required = true, schema_with = crate::openapi::payload))]
        pub payload: Option<Box<RawValue>>,
        /// 0..=604800.
        #[whole(minimum = 0, maximum = 604800)]
        pub delay_seconds: Option<i64>,
        /// Higher goes out first; default 0.
        #[whole(minimum = -2147483648, maximum = 2147483647)]
        pub priority: Option<i64>,
        /// Deduplicates publishes within the dedupe window. The
        /// `Idempotency-Key` header is used when this is absent.
        #[token]
        pub idempotency_key: Option<String>,
        /// Another name of `idempotency_key` (as SQS spells it); both given
        /// and different is 400.
        #[token]
        pub deduplication_id: Option<String>,
        /// FIFO queues only: the ordering group; default `default`.
        #[token]
        pub message_group_id: Option<String>,
        /// Headers kept with the message and returned wherever it is.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(schema_with = crate::openapi::headers))]
        pub headers: Option<Box<RawValue>>,
    }
}

request! {
    /// One message of a `publish_batch`.
    pub struct BatchItem {
        /// Any JSON value but `null`.
        #[cfg_attr(feature = "openapi", schema(required = true, schema_with = crate::openapi::payload))]
        pub payload: Option<Box<RawValue>>,
        /// 0..=604800.
        #[whole(minimum = 0, maximum = 604800)]
        pub delay_seconds: Option<i64>,
        /// Higher goes out first; default 0.
        #[whole(minimum = -2147483648, maximum = 2147483647)]
        pub priority: Option<i64>,
        /// Deduplicates this item.
        #[token]
        pub idempotency_key: Option<String>,
        /// Another name of `idempotency_key`; both given and different is
        /// 400.
        #[token]
        pub deduplication_id: Option<String>,
        /// FIFO queues only.
        #[token]
        pub message_group_id: Option<String>,
        /// Headers kept with the message and returned wherever it is.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(schema_with = crate::openapi::headers))]
        pub headers: Option<Box<RawValue>>,
    }
}

request! {
    /// `POST /v1/queue/publish_batch`.
    pub struct PublishBatch {
        /// The queue; created with defaults if it does not exist.
        #[queue]
        pub queue: Option<String>,
        /// 1..=10 messages, stored all or none.
        #[items]
        #[cfg_attr(
            feature = "openapi",
            schema(required = true, nullable = false, min_items = 1, max_items = 10)
        )]
        pub messages: Option<Vec<BatchItem>>,
    }
}

request! {
    /// `POST /v1/queue/consume`.
    pub struct Consume {
        /// The queue.
        #[queue]
        pub queue: Option<String>,
        /// 1..=10, default 1.
        #[whole(minimum = 1, maximum = 10)]
        pub max_messages: Option<i64>,
        /// Lease length, 0..=43200 s; default the queue's.
        #[whole(minimum = 0, maximum = 43200)]
        pub visibility_timeout: Option<i64>,
        /// Long poll: wait up to this many seconds (0..=20) for a message.
        #[whole(minimum = 0, maximum = 20)]
        pub wait_seconds: Option<i64>,
        /// The previous batch's acks (0..=10, each message once), applied
        /// before the claim in its transaction, so committed before any
        /// wait; answered in `acks` as `ack_batch` answers.
        #[items]
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(nullable = false, max_items = 10))]
        pub acks: Option<Vec<AckEntry>>,
    }
}

request! {
    /// One ack of an `ack_batch` (or of `consume`'s `acks`).
    pub struct AckEntry {
        /// The message.
        #[required_token]
        pub message_id: Option<String>,
        /// The lease's receipt, as the consume that handed the message out
        /// answered it.
        #[required_token]
        pub receipt: Option<String>,
        /// What the work produced, as `ack`'s `result` (at most 64 KiB
        /// as compact JSON).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(value_type = Option<Value>))]
        pub result: Option<Box<RawValue>>,
    }
}

request! {
    /// `POST /v1/queue/ack_batch`.
    pub struct AckBatch {
        /// The queue.
        #[queue]
        pub queue: Option<String>,
        /// 1..=10 acks, each message once.
        #[items]
        #[cfg_attr(
            feature = "openapi",
            schema(required = true, nullable = false, min_items = 1, max_items = 10)
        )]
        pub entries: Option<Vec<AckEntry>>,
    }
}

request! {
    /// `POST /v1/queue/ack`.
    pub struct Ack {
        /// The queue.
        #[queue]
        pub queue: Option<String>,
        /// The message.
        #[required_token]
        pub message_id: Option<String>,
        /// The lease's receipt; when given, only that lease's holder can ack.
        #[token]
        pub receipt: Option<String>,
        /// What the work produced: any JSON, at most 64 KiB as compact
        /// JSON; kept as the message's `result` while its queue retains
        /// completed messages (`completed_retention_seconds`), else dropped.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(value_type = Option<Value>))]
        pub result: Option<Box<RawValue>>,
    }
}

request! {
    /// `POST /v1/queue/cancel`.
    pub struct Cancel {
        /// The queue.
        #[queue]
        pub queue: Option<String>,
        /// The message: waiting, delayed or in flight.
        #[required_token]
        pub message_id: Option<String>,
    }
}

request! {
    /// `POST /v1/queue/nack`.
    pub struct Nack {
        /// The queue.
        #[queue]
        pub queue: Option<String>,
        /// The message.
        #[required_token]
        pub message_id: Option<String>,
        /// Default true; false dead-letters at once.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub requeue: Option<bool>,
        /// Hold the message back this long before it is available again.
        #[whole(minimum = 0, maximum = 604800)]
        pub delay_seconds: Option<i64>,
        /// The lease's receipt.
        #[token]
        pub receipt: Option<String>,
        /// Why the work failed, at most 8 KiB (queue-api-2.md section 5):
        /// recorded in the attempt, and as the message's `last_error`.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(max_length = 8192))]
        pub error: Option<String>,
    }
}

request! {
    /// `POST /v1/queue/extend`.
    pub struct Extend {
        /// The queue.
        #[queue]
        pub queue: Option<String>,
        /// The message.
        #[required_token]
        pub message_id: Option<String>,
        /// The lease's receipt.
        #[token]
        pub receipt: Option<String>,
        /// The new lease, counted from now: 0..=43200 s.
        #[cfg_attr(
            feature = "openapi",
            schema(required = true, nullable = false, minimum = 0, maximum = 43200)
        )]
        #[serde(default, deserialize_with = "whole::opt")]
        pub visibility_timeout: Option<i64>,
    }
}

request! {
    /// `POST /v1/queue/dlq/redrive/{queue}`.
    pub struct Redrive {
        /// Move at most this many; default all.
        #[whole(minimum = 1)]
        pub max_messages: Option<i64>,
        /// Move only these dead letters (1..=100 ids); not with
        /// `max_messages`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 100))]
        pub message_ids: Option<Vec<String>>,
    }
}

request! {
    /// `POST /v1/queue/delete` (the body form of `DELETE /v1/queue/delete/{queue}`).
    pub struct DeleteQueue {
        /// The queue.
        #[queue]
        pub queue: Option<String>,
    }
}

mod queue_update;
pub use queue_update::UpdateQueue;

/// `Option<i64>` fields that accept `30.0` as well as `30` (here and in
/// [`crate::push`]).
/// A field where `null` means something of its own (clear it) apart from
/// leaving it out (keep it): absent is `None`, `null` is `Some(None)`.
pub(crate) mod present {
    use serde::{Deserialize, Deserializer};

    /// For `#[serde(default, deserialize_with = "present::opt")]`.
    pub fn opt<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
    where
        D: Deserializer<'de>,
        T: Deserialize<'de>,
    {
        Option::<T>::deserialize(d).map(Some)
    }
}

pub(crate) mod whole {
    use std::fmt;

    use serde::{
        Deserialize, Deserializer,
        de::{self, Unexpected, Visitor},
    };

    /// An integer written as any JSON number without a fractional part.
    struct Whole(i64);

    impl<'de> Deserialize<'de> for Whole {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(WholeVisitor).map(Whole)
        }
    }

    struct WholeVisitor;

    impl Visitor<'_> for WholeVisitor {
        type Value = i64;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an integer")
        }

        fn visit_i64<E: de::Error>(self, v: i64) -> Result<i64, E> {
            Ok(v)
        }

        fn visit_u64<E: de::Error>(self, v: u64) -> Result<i64, E> {
            i64::try_from(v).map_err(|_| E::invalid_value(Unexpected::Unsigned(v), &self))
        }

        fn visit_f64<E: de::Error>(self, v: f64) -> Result<i64, E> {
            // i64::MAX as f64 rounds up to 2^63, itself out of range.
            if v.fract() == 0.0 && v >= i64::MIN as f64 && v < i64::MAX as f64 {
                Ok(v as i64)
            } else {
                Err(E::invalid_value(Unexpected::Float(v), &self))
            }
        }
    }

    /// For `#[serde(default, deserialize_with = "whole::opt")]`.
    pub(crate) fn opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        Ok(Option::<Whole>::deserialize(d)?.map(|w| w.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_may_be_written_with_a_zero_fraction() {
        let c: Consume = serde_json::from_str(
            r#"{"max_messages": 9.0, "wait_seconds": 3, "visibility_timeout": null}"#,
        )
        .unwrap();
        assert_eq!(
            (c.max_messages, c.wait_seconds, c.visibility_timeout),
            (Some(9), Some(3), None)
        );
        let p: Publish = serde_json::from_str(r#"{"priority": -2147483648.0}"#).unwrap();
        assert_eq!((p.priority, p.delay_seconds), (Some(-2_147_483_648), None));
        for bad in [
            r#"{"max_messages": 1.5}"#,
            r#"{"max_messages": "1"}"#,
            r#"{"max_messages": 1e300}"#,
            r#"{"max_messages": 9223372036854775808}"#,
            r#"{"max_messages": true}"#,
        ] {
            let err = serde_json::from_str::<Consume>(bad)
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("an integer") || err.contains("i64"),
                "{bad}: {err}"
            );
        }
        let huge: Consume =
            serde_json::from_str(r#"{"max_messages": -9223372036854775808}"#).unwrap();
        assert_eq!(huge.max_messages, Some(i64::MIN));
    }
}
