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

/// The `{queue}/{subscription_id}` path segments of `push_unsubscribe`.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)] // only its schema is used; `routes::push::SubscriptionPath` reads the values
pub struct SubscriptionParams {
    /// The queue's name, in the key's project.
    #[param(pattern = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}(-dlq)?$")]
    queue: String,
    /// The subscription's id, as `push_subscribe` answered it (`psub_` and
    /// 32 hex digits).
    #[param(
        min_length = 1,
        max_length = 255,
        pattern = "^[^\\u0000-\\u001F\\u007F-\\u009F]+$"
    )]
    subscription_id: String,
}

/// The `{queue}/{message_id}` path segments of `message_get`.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)] // only its schema is used; `routes::message::MessagePath` reads the values
pub struct MessageParams {
    /// The queue's name, in the key's project.
    #[param(pattern = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}(-dlq)?$")]
    queue: String,
    /// The message's id, as publish answered it (`qmsg_...`).
    #[param(
        min_length = 1,
        max_length = 255,
        pattern = "^[^\\u0000-\\u001F\\u007F-\\u009F]+$"
    )]
    message_id: String,
}

/// The `{id}` path segment of the account webhook calls.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)] // only its schema is used; `routes::webhooks::WebhookPath` reads the value
pub struct WebhookParam {
    /// The webhook's id, as `register` answered it (`whk_` and 32 hex
    /// digits).
    #[param(
        min_length = 1,
        max_length = 255,
        pattern = "^[^\\u0000-\\u001F\\u007F-\\u009F]+$"
    )]
    id: String,
}

/// The query of `webhooks/deliveries/{id}`.
#[derive(Debug, serde::Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeliveriesQuery {
    /// At most this many attempts, newest first: 1..=100, default 50.
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}
