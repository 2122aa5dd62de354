//! Push subscriptions: subscribe a webhook to a queue, list a queue's
//! subscriptions, unsubscribe. Deliveries themselves are `crate::push`.

use axum::{
    extract::{FromRequestParts, State},
    http::request::Parts,
};
use onceq_store::{SubscriptionDelete, SubscriptionInsert, SubscriptionRecord};
use onceq_types::{
    ErrorCode,
    push::{
        DEFAULT_MAX_IN_FLIGHT, DEFAULT_TIMEOUT_SECONDS, MAX_IN_FLIGHT, MAX_TIMEOUT_SECONDS,
        PushSubscribe, PushSubscription, PushUnsubscribed,
    },
    reply::Items,
};

use crate::{
    ApiError, AppState,
    caller::Caller,
    envelope::Reply,
    extract::{Body, QueuePath},
    openapi::{
        params::{QueueParam, SubscriptionParams},
        responses::{
            InvalidParams, NotFound, Ok, OkList, Refused, StoreFailed, TimedOut, TooLarge,
            Unauthorized,
        },
    },
    outbound::{guard::Guard, secret},
    validate,
};

/// `POST /v1/queue/push_subscribe/{queue}`.
#[utoipa::path(
    post,
    path = "/v1/queue/push_subscribe/{queue}",
    operation_id = "push_subscribe",
    tag = "push",
    summary = "Subscribe a webhook to a queue",
    description = "Adds a push subscription to an existing queue (at most 10 per queue): the server claims the queue's messages and POSTs each one, signed, to the URL; a 2xx answer acks it, anything else is a failed attempt, retried with backoff and dead-lettered like a nack. One of url and endpoint is required: an https:// URL (http:// and loopback only where the operator allows them; internal addresses and credentials are refused). The answer is the only one that shows the secret (the caller's, or a generated whsec_ one). max_retries, visibility_timeout and dead_letter_queue are the queue's settings, which deliveries follow: given here they are refused (400). 400 also when the queue already has 10 subscriptions; 404 when the queue does not exist.",
    params(QueueParam),
    request_body = PushSubscribe,
    responses(Ok<PushSubscription>, InvalidParams, Unauthorized, Refused, NotFound, TooLarge, TimedOut, StoreFailed)
)]
pub async fn subscribe(
    State(state): State<AppState>,
    caller: Caller,
    QueuePath(queue): QueuePath,
    Body(req): Body<PushSubscribe>,
) -> Result<Reply<PushSubscription>, ApiError> {
    refuse_queue_settings(&req)?;
    let (field, raw) = match (req.url, req.endpoint) {
        (Some(url), Some(endpoint)) if url != endpoint => {
            return Err(ApiError::invalid(
                "url and endpoint are two names of one field; they differ, give one",
            ));
        }
        (Some(url), _) => ("url", url),
        (None, Some(endpoint)) => ("endpoint", endpoint),
        (None, None) => return Err(ApiError::invalid("url is required (or endpoint)")),
    };
    let url = Guard::new(&state.config.push)
        .check_url(field, &raw)
        .map_err(ApiError::invalid)?;
    let secret = match req.secret {
        Some(s) => secret::checked(s)?,
        None => secret::generated(),
    };
    let max_in_flight = validate::int_in(
        "max_in_flight",
        req.max_in_flight,
        1,
        MAX_IN_FLIGHT,
        DEFAULT_MAX_IN_FLIGHT,
    )?;
    let timeout_seconds = validate::int_in(
        "timeout_seconds",
        req.timeout_seconds,
        1,
        MAX_TIMEOUT_SECONDS,
        DEFAULT_TIMEOUT_SECONDS,
    )?;
    let record = state
        .store()
        .subscription_insert(SubscriptionInsert {
            queue: caller.queue(&queue)?,
            // As the URL parser wrote it back (e.g. `https://h` becomes
            // `https://h/`): what deliveries request.
            url: url.into(),
            secret,
            max_in_flight: max_in_flight as i32,
            timeout_seconds: timeout_seconds as i32,
            now: state.clock.now(),
        })
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?;
    // The only answer that shows the secret.
    let secret = Some(record.secret.clone());
    Ok(caller.reply(PushSubscription {
        secret,
        ..shown(record)
    }))
}

/// `GET /v1/queue/push_subscriptions/{queue}`.
#[utoipa::path(
    get,
    path = "/v1/queue/push_subscriptions/{queue}",
    operation_id = "push_subscriptions",
    tag = "push",
    summary = "A queue's push subscriptions",
    description = "Oldest first, never with their secrets.",
    params(QueueParam),
    responses(OkList<PushSubscription>, InvalidParams, Unauthorized, Refused, NotFound, StoreFailed)
)]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    QueuePath(queue): QueuePath,
) -> Result<Reply<Items<PushSubscription>>, ApiError> {
    let items = state
        .store()
        .subscription_list(&caller.queue(&queue)?)
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?
        .into_iter()
        .map(shown)
        .collect();
    Ok(caller.reply(Items { items }))
}

/// `DELETE /v1/queue/push_unsubscribe/{queue}/{subscription_id}`.
#[utoipa::path(
    delete,
    path = "/v1/queue/push_unsubscribe/{queue}/{subscription_id}",
    operation_id = "push_unsubscribe",
    tag = "push",
    summary = "Delete a push subscription",
    description = "Deliveries already in progress finish. POST to the same path does the same (operation push_unsubscribe_post). 404 QUEUE_NOT_FOUND for an unknown queue, 404 NOT_FOUND when the queue has no such subscription.",
    params(SubscriptionParams),
    responses(Ok<PushUnsubscribed>, InvalidParams, Unauthorized, Refused, NotFound, StoreFailed)
)]
pub async fn unsubscribe(
    State(state): State<AppState>,
    caller: Caller,
    SubscriptionPath(queue, subscription_id): SubscriptionPath,
) -> Result<Reply<PushUnsubscribed>, ApiError> {
    let deleted = state
        .store()
        .subscription_delete(SubscriptionDelete {
            queue: caller.queue(&queue)?,
            subscription_id: subscription_id.clone(),
        })
        .await
        .map_err(|e| ApiError::from_store(e, &queue))?;
    if !deleted {
        return Err(ApiError::new(
            ErrorCode::NotFound,
            format!("push subscription {subscription_id:?} not found on queue {queue:?}"),
        ));
    }
    Ok(caller.reply(PushUnsubscribed {
        subscription_id,
        queue,
        deleted: true,
    }))
}

/// `POST /v1/queue/push_unsubscribe/{queue}/{subscription_id}`:
/// [`unsubscribe`] for clients that cannot send `DELETE`, with an operation
/// id of its own (one id per method: generators refuse duplicates).
#[utoipa::path(
    post,
    path = "/v1/queue/push_unsubscribe/{queue}/{subscription_id}",
    operation_id = "push_unsubscribe_post",
    tag = "push",
    summary = "Delete a push subscription (POST)",
    description = "The same as DELETE on this path, for clients that cannot send DELETE.",
    params(SubscriptionParams),
    responses(Ok<PushUnsubscribed>, InvalidParams, Unauthorized, Refused, NotFound, StoreFailed)
)]
pub async fn unsubscribe_post(
    state: State<AppState>,
    caller: Caller,
    path: SubscriptionPath,
) -> Result<Reply<PushUnsubscribed>, ApiError> {
    unsubscribe(state, caller, path).await
}

/// A record as listed: never the secret.
fn shown(r: SubscriptionRecord) -> PushSubscription {
    PushSubscription {
        subscription_id: r.subscription_id,
        queue: r.queue.queue,
        url: r.url,
        max_in_flight: r.max_in_flight,
        timeout_seconds: r.timeout_seconds,
        created_at: r.created_at,
        secret: None,
    }
}

/// `max_retries`, `visibility_timeout` and `dead_letter_queue` are settings
/// of the queue, which deliveries follow (they are the queue's claims and
/// nacks): on a subscription they are refused, never silently ignored.
fn refuse_queue_settings(req: &PushSubscribe) -> Result<(), ApiError> {
    let given = [
        ("max_retries", req.max_retries.is_some(), "max_retries"),
        (
            "visibility_timeout",
            req.visibility_timeout.is_some(),
            "visibility_timeout_default",
        ),
        (
            "dead_letter_queue",
            req.dead_letter_queue.is_some(),
            "dead_letter_queue",
        ),
    ];
    // Every such field given is named, not only the first: a client
    // written for another queue sends them together.
    let given: Vec<(&str, &str)> = given
        .into_iter()
        .filter(|(_, is, _)| *is)
        .map(|(field, _, setting)| (field, setting))
        .collect();
    if given.is_empty() {
        return Ok(());
    }
    let fields: Vec<&str> = given.iter().map(|(f, _)| *f).collect();
    let settings: Vec<&str> = given.iter().map(|(_, s)| *s).collect();
    let (fields, settings) = (fields.join(", "), settings.join(", "));
    let (is, follow) = if given.len() == 1 {
        ("is not a setting", "setting")
    } else {
        ("are not settings", "settings")
    };
    Err(ApiError::invalid(format!(
        "{fields} {is} of a push subscription: deliveries follow the queue's {follow} {settings}"
    ))
    .with_hint(format!(
        "drop {fields}, and set the queue's {settings} with POST /v1/queue/update"
    )))
}

/// The `{queue}/{subscription_id}` path segments, validated.
pub struct SubscriptionPath(pub String, pub String);

impl<S: Send + Sync> FromRequestParts<S> for SubscriptionPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let axum::extract::Path((queue, id)) =
            axum::extract::Path::<(String, String)>::from_request_parts(parts, state)
                .await
                .map_err(|e| ApiError::invalid(format!("path: {e}")))?;
        validate::queue_name("queue", &queue)?;
        validate::token("subscription_id", &id)?;
        Ok(SubscriptionPath(queue, id))
    }
}
