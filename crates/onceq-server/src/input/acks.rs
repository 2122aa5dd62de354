//! The acks of a batch: `ack_batch`'s `entries` and `consume`'s `acks`.
//! Each entry names its message and receipt (and may carry a result); a
//! message named twice is refused, naming both entries, so that every
//! entry has one answer of its own.

use onceq_types::{
    MAX_BATCH,
    request::{AckBatch, AckEntry},
};

use crate::{ApiError, validate};

/// One ack of a batch, checked.
#[derive(Debug, Clone)]
pub struct AckInput {
    /// The message.
    pub message_id: String,
    /// The lease's receipt.
    pub receipt: String,
    /// What to keep as its result (compact JSON).
    pub result: Option<String>,
}

/// `ack_batch`: the queue and 1..=[`MAX_BATCH`] acks.
pub fn ack_batch(req: AckBatch) -> Result<(String, Vec<AckInput>), ApiError> {
    let queue = validate::required_queue("queue", req.queue)?;
    let entries = validate::required("entries", req.entries)?;
    if entries.is_empty() {
        return Err(ApiError::invalid(format!(
            "entries must hold 1 to {MAX_BATCH} acks (got 0)"
        )));
    }
    Ok((queue, acks("entries", entries)?))
}

/// `field`'s acks (`entries`, or `consume`'s `acks`): at most
/// [`MAX_BATCH`], each message once.
pub fn acks(field: &str, entries: Vec<AckEntry>) -> Result<Vec<AckInput>, ApiError> {
    if entries.len() > MAX_BATCH {
        return Err(ApiError::invalid(format!(
            "{field} must hold at most {MAX_BATCH} acks, as many as a consume hands out (got {})",
            entries.len()
        )));
    }
    let mut checked: Vec<AckInput> = Vec::with_capacity(entries.len());
    for (i, entry) in entries.into_iter().enumerate() {
        let at = |name: &str| format!("{field}[{i}].{name}");
        let message_id = validate::required_token(&at("message_id"), entry.message_id)?;
        if let Some(first) = checked.iter().position(|a| a.message_id == message_id) {
            return Err(ApiError::invalid(format!(
                "{}: message {message_id:?} is acked twice in one batch (also {field}[{first}]); \
                 name each message once",
                at("message_id")
            )));
        }
        checked.push(AckInput {
            message_id,
            receipt: validate::required_token(&at("receipt"), entry.receipt)?,
            result: validate::ack_result(&at("result"), entry.result)?,
        });
    }
    Ok(checked)
}
