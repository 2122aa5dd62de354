//! Identifiers the store hands out.

use sha2::{Digest, Sha256};

/// A new message id: `qmsg_` and a UUID v7 in hex. Time-ordered, so new ids
/// land at the right edge of the primary-key index instead of all over it.
pub fn message_id() -> String {
    format!("qmsg_{}", uuid::Uuid::now_v7().simple())
}

/// A new lease receipt: `rcpt_` and 128 random bits.
pub fn receipt() -> String {
    format!("rcpt_{}", uuid::Uuid::new_v4().simple())
}

/// SHA-256 of a canonical payload: what dedupe compares.
pub fn payload_hash(payload: &str) -> [u8; 32] {
    Sha256::digest(payload.as_bytes()).into()
}

/// A new push subscription id: `psub_` and a UUID v7 in hex.
pub fn subscription_id() -> String {
    format!("psub_{}", uuid::Uuid::now_v7().simple())
}

/// A new cron schedule id: `cron_` and a UUID v7 in hex.
pub fn cron_id() -> String {
    format!("cron_{}", uuid::Uuid::now_v7().simple())
}

/// A new account webhook id: `whk_` and a UUID v7 in hex.
pub fn webhook_id() -> String {
    format!("whk_{}", uuid::Uuid::now_v7().simple())
}

/// A new webhook event id: `evt_` and a UUID v7 in hex.
pub fn event_id() -> String {
    format!("evt_{}", uuid::Uuid::now_v7().simple())
}
