//! Push subscriptions.

use super::QueueRef;
use jiff::Timestamp;

/// `subscription_insert`: a push subscription on an existing queue.
#[derive(Debug, Clone)]
pub struct SubscriptionInsert {
    /// The queue whose messages it receives; it must exist.
    pub queue: QueueRef,
    /// Where deliveries are POSTed (already checked by the caller).
    pub url: String,
    /// The HMAC key deliveries are signed with. Stored as given: signing
    /// needs the key itself, so unlike an API key it cannot be kept hashed.
    pub secret: String,
    /// Deliveries in flight at once, 1..=100.
    pub max_in_flight: i32,
    /// Seconds a delivery may take, 1..=300.
    pub timeout_seconds: i32,
    /// The time of the call.
    pub now: Timestamp,
}

/// A push subscription as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscriptionRecord {
    /// `psub_` and 32 hex digits.
    pub subscription_id: String,
    /// Project and name of its queue.
    pub queue: QueueRef,
    /// Where deliveries are POSTed.
    pub url: String,
    /// The signing key.
    pub secret: String,
    /// Deliveries in flight at once.
    pub max_in_flight: i32,
    /// Seconds a delivery may take.
    pub timeout_seconds: i32,
    /// When it was created.
    pub created_at: Timestamp,
}

/// `subscription_delete`.
#[derive(Debug, Clone)]
pub struct SubscriptionDelete {
    /// Its queue, which must exist.
    pub queue: QueueRef,
    /// Which subscription.
    pub subscription_id: String,
}

/// One row of `subscription_scan`: a subscription, and whether its queue
/// has a message to hand out now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscriptionDue {
    /// The subscription.
    pub subscription: SubscriptionRecord,
    /// Its queue holds a message that is available, or delayed with its
    /// time come. (On a FIFO queue that message may sit behind its group's
    /// head, so a claim may still find nothing.)
    pub due: bool,
}
