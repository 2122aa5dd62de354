//! `update`'s body (queue-api-2.md, section 6), read by the same rules as
//! `create`'s (`queue_settings`).

use onceq_store::QueueChanges;
use onceq_types::request::UpdateQueue;

use super::queue_settings as setting;
use crate::{ApiError, validate};

/// `update`.
#[derive(Debug)]
pub struct UpdateInput {
    /// The queue to change.
    pub name: String,
    /// What to change.
    pub changes: QueueChanges,
}

/// `update`: every setting of section 6, by the same rules as `create`'s.
pub fn update(req: UpdateQueue) -> Result<UpdateInput, ApiError> {
    let name = validate::required_queue("name", req.name)?;
    let dead_letter_queue = setting::dead_letter_queue(&name, req.dead_letter_queue)?;
    let changes = QueueChanges {
        queue_type: req.queue_type,
        dead_letter_queue,
        max_retries: setting::max_retries(req.max_retries)?,
        message_retention_days: setting::message_retention_days(req.message_retention_days)?,
        visibility_timeout_default: setting::visibility_timeout_default(
            req.visibility_timeout_default,
        )?,
        enable_priority: req.enable_priority,
        // Absent keeps it, `null` removes it, an object replaces it whole.
        retry_backoff: req
            .retry_backoff
            .map(|b| b.map(setting::retry_backoff).transpose())
            .transpose()?,
        max_in_flight: req
            .max_in_flight
            .map(|n| n.map(setting::max_in_flight_number).transpose())
            .transpose()?,
        rate_per_sec: req.rate_per_sec.map(setting::rate_per_sec).transpose()?,
        completed_retention_seconds: setting::completed_retention_seconds(
            req.completed_retention_seconds,
        )?,
    };
    Ok(UpdateInput { name, changes })
}
