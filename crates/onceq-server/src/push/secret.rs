//! Signing secrets, for push subscriptions and account webhooks alike: the
//! caller's, checked, or a generated one.

use onceq_types::push::{MAX_SECRET_BYTES, MIN_SECRET_BYTES};
use rand::RngCore;

use crate::ApiError;

/// A caller's secret: 16..=255 printable ASCII characters (no spaces), so
/// that it is the same bytes in every language that verifies it.
pub fn checked(secret: String) -> Result<String, ApiError> {
    let len = secret.len();
    if !(MIN_SECRET_BYTES..=MAX_SECRET_BYTES).contains(&len)
        || !secret.bytes().all(|b| b.is_ascii_graphic())
    {
        return Err(ApiError::invalid(format!(
            "secret must be {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} printable ASCII characters \
             without spaces (got {len} bytes)"
        )));
    }
    Ok(secret)
}

/// `whsec_` and 256 random bits in hex.
pub fn generated() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("whsec_{}", hex::encode(bytes))
}
