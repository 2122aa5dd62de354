//! `POST /v1/account/webhooks/test/{id}`: a `webhook.test` event recorded
//! for that webhook only, claimed by the request itself and attempted at
//! once; the answer is that attempt. A failed test is retried like any
//! event by the dispatcher once its claim ends.

use onceq_store::WebhookAttemptRecord;

use super::{Event, sender::claim_for};
use crate::AppState;

/// Sends the test event to `webhook_id` of `project`: `Ok(None)` when the
/// project has no such webhook.
pub async fn send_test(
    state: &AppState,
    project: &str,
    webhook_id: &str,
) -> onceq_store::Result<Option<WebhookAttemptRecord>> {
    let until = state.clock.now() + claim_for(state);
    let event = Event::WebhookTest {
        webhook_id: webhook_id.to_owned(),
    };
    let made = state
        .record(project, event, Some((webhook_id, until)))
        .await?;
    let Some(delivery) = made.into_iter().next() else {
        return Ok(None);
    };
    let Some(sender) = state.events.sender(state) else {
        return Err(onceq_store::StoreError::internal(
            "webhook deliveries are disabled",
        ));
    };
    // Sent at once, but within the project's outbound caps like any
    // attempt: a test is no way around them.
    let destination = reqwest::Url::parse(&delivery.webhook.url)
        .map(|u| crate::outbound::destination(&u))
        .unwrap_or_default();
    let _room = state
        .outbound
        .limits
        .acquire(crate::outbound::Kind::Webhook, project, &destination)
        .await;
    Ok(Some(sender.attempt(state, &delivery).await))
}
