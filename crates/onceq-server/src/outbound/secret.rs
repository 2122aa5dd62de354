//! Signing secrets, for push subscriptions and account webhooks alike: the
//! caller's, checked, or a generated one.

use onceq_types::push::{MAX_SECRET_BYTES, MIN_SECRET_BYTES};
use rand::RngCore;

use crate::ApiError;

/// A caller's secret: 16..=255 printable ASCII characters (no spaces), so
/// that it is the same bytes in every language that verifies it. Each rule
/// has its own refusal, so the message names the one that failed.
pub fn checked(secret: String) -> Result<String, ApiError> {
    let len = secret.len();
    if let Some((at, c)) = secret.char_indices().find(|(_, c)| !c.is_ascii_graphic()) {
        let what = match c {
            ' ' => "a space".to_owned(),
            c if c.is_ascii_control() => format!("control character {:?}", c),
            c => format!("non-ASCII character {c:?}"),
        };
        return Err(ApiError::invalid(format!(
            "secret must be printable ASCII without spaces: it has {what} at byte {at}"
        )));
    }
    if !(MIN_SECRET_BYTES..=MAX_SECRET_BYTES).contains(&len) {
        return Err(ApiError::invalid(format!(
            "secret must be {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes long (got {len})"
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
