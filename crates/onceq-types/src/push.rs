//! Push subscriptions: the server POSTs a queue's messages to a webhook
//! (`docs/api.md`, "Push subscriptions"). The bodies of the three calls that
//! manage subscriptions, the subscription record, and what one delivery
//! carries: its JSON body and its headers.
//!
//! The signature scheme, in one line: `Onceq-Signature: v1=<hex>` where
//! `<hex>` is HMAC-SHA256 keyed with the subscription's secret over
//! `<Onceq-Timestamp> + "." + <raw body>`. The toolkit's `onceq::push`
//! verifies it.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::request::request;

/// Header carrying the delivered message's id.
pub const HEADER_MESSAGE_ID: &str = "onceq-message-id";
/// Header carrying the message's hand-outs so far, this one included (1 on
/// the first delivery).
pub const HEADER_DELIVERY_COUNT: &str = "onceq-delivery-count";
/// Header carrying the subscription's id.
pub const HEADER_SUBSCRIPTION_ID: &str = "onceq-subscription-id";
/// Header carrying the time of signing, in whole seconds since the Unix
/// epoch. It is part of what is signed, so a receiver can refuse replays of
/// old deliveries.
pub const HEADER_TIMESTAMP: &str = "onceq-timestamp";
/// Header carrying the signature: `v1=<64 lowercase hex digits>`.
pub const HEADER_SIGNATURE: &str = "onceq-signature";
/// The scheme tag in [`HEADER_SIGNATURE`].
pub const SIGNATURE_SCHEME: &str = "v1";

/// The most subscriptions one queue may have.
pub const MAX_SUBSCRIPTIONS_PER_QUEUE: usize = 10;
/// The most deliveries one subscription has in flight at once.
pub const MAX_IN_FLIGHT: i64 = 100;
/// `max_in_flight` when the caller gives none.
pub const DEFAULT_MAX_IN_FLIGHT: i64 = 10;
/// The longest a delivery may take before it counts as failed, in seconds.
pub const MAX_TIMEOUT_SECONDS: i64 = 300;
/// `timeout_seconds` when the caller gives none.
pub const DEFAULT_TIMEOUT_SECONDS: i64 = 30;
/// The longest webhook URL accepted, in bytes.
pub const MAX_URL_BYTES: usize = 2048;
/// The shortest secret a caller may choose, in bytes.
pub const MIN_SECRET_BYTES: usize = 16;
/// The longest secret a caller may choose, in bytes.
pub const MAX_SECRET_BYTES: usize = 255;

request! {
    /// `POST /v1/queue/push_subscribe/{queue}`. One of `url` and `endpoint` is
    /// required. Integer fields take any JSON number without a fractional part,
    /// as in [`crate::request`].
    pub struct PushSubscribe {
        /// Where to POST messages: an `https://` URL (`http://` only where the
        /// operator allows it).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 2048))]
        pub url: Option<String>,
        /// Accepted as another name of `url`.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 2048))]
        pub endpoint: Option<String>,
        /// The HMAC key deliveries are signed with, 16..=255 bytes of printable
        /// ASCII; generated (and answered once) when absent.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(pattern = "^[!-~]{16,255}$"))]
        pub secret: Option<String>,
        /// Deliveries in flight at once on each server process, 1..=100;
        /// default 10.
        #[whole(minimum = 1, maximum = 100)]
        pub max_in_flight: Option<i64>,
        /// How long a delivery may take before it counts as failed, 1..=300 s;
        /// default 30.
        #[whole(minimum = 1, maximum = 300)]
        pub timeout_seconds: Option<i64>,
        /// Refused (400): deliveries are the queue's claims, so the queue's
        /// own `max_retries` applies (`/v1/queue/update` changes it). Read
        /// only to be refused, never silently ignored.
        #[serde(default, skip_serializing)]
        #[cfg_attr(feature = "openapi", schema(ignore))]
        pub max_retries: Option<serde_json::Value>,
        /// Refused (400): the queue's `visibility_timeout_default` (and
        /// `timeout_seconds`) bound a delivery.
        #[serde(default, skip_serializing)]
        #[cfg_attr(feature = "openapi", schema(ignore))]
        pub visibility_timeout: Option<serde_json::Value>,
        /// Refused (400): failed deliveries dead-letter into the queue's own
        /// dead-letter queue.
        #[serde(default, skip_serializing)]
        #[cfg_attr(feature = "openapi", schema(ignore))]
        pub dead_letter_queue: Option<serde_json::Value>,
    }
}

/// A push subscription as the API shows it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushSubscription {
    /// `psub_` and 32 hex digits.
    pub subscription_id: String,
    /// The queue whose messages it receives.
    pub queue: String,
    /// Where they are POSTed.
    pub url: String,
    /// Deliveries in flight at once.
    pub max_in_flight: i32,
    /// Seconds a delivery may take.
    pub timeout_seconds: i32,
    /// When it was created.
    pub created_at: Timestamp,
    /// The signing secret: only in the answer that created the subscription
    /// (the caller's own, or the one generated for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

/// The answer of `push_unsubscribe`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushUnsubscribed {
    /// The subscription's id.
    pub subscription_id: String,
    /// Its queue.
    pub queue: String,
    /// Always true: an unknown subscription is a 404.
    pub deleted: bool,
}

/// The JSON body of one delivery. Signed as sent, byte for byte: verify the
/// raw body, not a re-serialisation of this.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PushDelivery {
    /// The message's id (also in [`HEADER_MESSAGE_ID`]).
    pub message_id: String,
    /// The queue it came from.
    pub queue: String,
    /// The payload as published.
    pub payload: Box<RawValue>,
    /// Hand-outs so far, this one included (also in
    /// [`HEADER_DELIVERY_COUNT`]).
    pub delivery_count: i32,
    /// The message's headers (`{}` when none).
    #[serde(default)]
    pub headers: crate::Headers,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_may_be_written_with_a_zero_fraction() {
        let s: PushSubscribe = serde_json::from_str(
            r#"{"url": "https://h/", "max_in_flight": 5.0, "timeout_seconds": 7}"#,
        )
        .unwrap();
        assert_eq!((s.max_in_flight, s.timeout_seconds), (Some(5), Some(7)));
        let none: PushSubscribe = serde_json::from_str(r#"{"max_in_flight": null}"#).unwrap();
        assert_eq!((none.max_in_flight, none.timeout_seconds), (None, None));
        for bad in [
            r#"{"max_in_flight": 1.5}"#,
            r#"{"timeout_seconds": "30"}"#,
            r#"{"timeout_seconds": 1e300}"#,
        ] {
            let err = serde_json::from_str::<PushSubscribe>(bad)
                .unwrap_err()
                .to_string();
            assert!(err.contains("an integer"), "{bad}: {err}");
        }
    }
}
