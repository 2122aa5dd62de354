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
        /// Why the work failed, at most 8 KiB (queue-api-2.md section 5).
        /// Checked, not stored yet: attempts and `last_error` are later work.
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
