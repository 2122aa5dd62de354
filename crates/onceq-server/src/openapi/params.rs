//! Parameters shared by several operations.

use utoipa::IntoParams;

/// The `{queue}` path segment.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)] // only its schema is used; `extract::QueuePath` reads the value
pub struct QueueParam {
    /// The queue's name, in the key's project.
    #[param(pattern = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}(-dlq)?$")]
    queue: String,
}
