//! `POST /v1/queue/update`'s body (queue-api-2.md, section 6).

use serde::{Deserialize, Serialize};

use crate::{QueueType, request::request};

request! {
    /// `POST /v1/queue/update`: the settings to change; a field left out
    /// (or `null`) keeps its value.
    pub struct UpdateQueue {
        /// The queue to change.
        #[cfg_attr(
            feature = "openapi",
            schema(
                required = true,
                nullable = false,
                pattern = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}(-dlq)?$"
            )
        )]
        pub name: Option<String>,
        /// The queue's type, if the caller states it: a type is fixed when
        /// the queue is created, so another one is refused (400).
        #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
        pub queue_type: Option<QueueType>,
        /// An existing standard queue to dead-letter into from now on.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(
            feature = "openapi",
            schema(pattern = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}(-dlq)?$")
        )]
        pub dead_letter_queue: Option<String>,
        /// 0..=1000.
        #[whole(minimum = 0, maximum = 1000)]
        pub max_retries: Option<i64>,
        /// 1..=30.
        #[whole(minimum = 1, maximum = 30)]
        pub message_retention_days: Option<i64>,
        /// 0..=43200 seconds.
        #[whole(minimum = 0, maximum = 43200)]
        pub visibility_timeout_default: Option<i64>,
        /// Whether publishes may set `priority`.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub enable_priority: Option<bool>,
        /// How long acked and cancelled messages are kept from now on,
        /// 0..=2592000 seconds (0: not at all).
        #[whole(minimum = 0, maximum = 2592000)]
        pub completed_retention_seconds: Option<i64>,
        /// A new retry backoff; `null` removes it (failed hand-outs are
        /// then available again at once).
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "crate::request::present::opt"
        )]
        #[cfg_attr(
            feature = "openapi",
            schema(value_type = Option<crate::request::RetryBackoffBody>, nullable = true)
        )]
        pub retry_backoff: Option<Option<crate::request::RetryBackoffBody>>,
        /// A new cap on messages in flight at once (1..=100000); `null`
        /// removes it. A whole number.
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "crate::request::present::opt"
        )]
        #[cfg_attr(
            feature = "openapi",
            schema(value_type = Option<i64>, nullable = true, minimum = 1, maximum = 100000)
        )]
        pub max_in_flight: Option<Option<f64>>,
        /// A new cap on hand-outs per second (0.01..=100000); `null`
        /// removes it.
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "crate::request::present::opt"
        )]
        #[cfg_attr(
            feature = "openapi",
            schema(value_type = Option<f64>, nullable = true, minimum = 0.01, maximum = 100000)
        )]
        pub rate_per_sec: Option<Option<f64>>,
    }
}
