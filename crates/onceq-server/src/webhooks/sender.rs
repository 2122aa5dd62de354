//! [`Sender`]: one attempt of one delivery, made as a push delivery is
//! (`crate::outbound`: the same client, SSRF guard, signature and backoff),
//! then settled in the store: removed when the endpoint answered 2xx,
//! rescheduled with backoff otherwise, or given up after
//! [`MAX_ATTEMPTS`] attempts or once the event is [`MAX_EVENT_AGE_SECONDS`]
//! old.

use std::time::Instant;

use jiff::{SignedDuration, Timestamp};
use onceq_store::{WebhookAttemptRecord, WebhookDelivery, WebhookDeliverySettle};
use onceq_types::{
    push::{HEADER_SIGNATURE, HEADER_TIMESTAMP},
    webhook::{
        ATTEMPT_TIMEOUT_SECONDS, HEADER_ATTEMPT, HEADER_EVENT_ID, HEADER_EVENT_TYPE,
        HEADER_WEBHOOK_ID, MAX_ATTEMPTS, MAX_EVENT_AGE_SECONDS,
    },
};
use rand::Rng;
use reqwest::{Url, header::CONTENT_TYPE};

use crate::{
    AppState,
    metrics::ErrorSource,
    outbound::{backoff::backoff, client, signature},
};

/// The HTTP client webhook deliveries send through (`state.outbound`'s).
#[derive(Debug)]
pub struct Sender {
    client: reqwest::Client,
}

/// How long an attempt may hold its delivery: its timeout plus push's
/// margin for the settle after it.
pub(super) fn claim_for(state: &AppState) -> SignedDuration {
    let push = &state.config.push;
    SignedDuration::try_from(push.webhook_timeout + push.lease_margin)
        .unwrap_or(SignedDuration::from_secs(ATTEMPT_TIMEOUT_SECONDS + 30))
}

impl Sender {
    /// The sender of `state`'s settings; `None` (logged) when no HTTP
    /// client can be made.
    pub(super) fn new(state: &AppState) -> Option<Self> {
        match &state.outbound.client {
            Ok(client) => Some(Self {
                client: client.clone(),
            }),
            Err(e) => {
                tracing::error!(error = %e, "webhook deliveries disabled: cannot build the HTTP client");
                None
            }
        }
    }

    /// Attempts `d` and settles it; the attempt as recorded.
    pub(super) async fn attempt(
        &self,
        state: &AppState,
        d: &WebhookDelivery,
    ) -> WebhookAttemptRecord {
        let attempted_at = state.clock.now();
        let started = Instant::now();
        let answer = self.post(state, d).await;
        let latency_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        let (status, error) = match answer {
            Ok(s) if s.is_success() => (Some(i32::from(s.as_u16())), None),
            Ok(s) => (Some(i32::from(s.as_u16())), Some(format!("answered {s}"))),
            Err(reason) => (None, Some(reason)),
        };
        let now = state.clock.now();
        let retry_at = error.as_ref().and_then(|_| retry_at(state, d, now));
        let outcome = match (&error, retry_at) {
            (None, _) => "delivered",
            (Some(_), Some(_)) => "retrying",
            (Some(_), None) => "gave_up",
        };
        let record = WebhookAttemptRecord {
            attempted_at,
            event_type: d.event_type.clone(),
            event_id: d.event_id.clone(),
            attempt: d.attempt,
            outcome: outcome.to_owned(),
            status,
            latency_ms,
            error,
        };
        let settled = state
            .store()
            .webhook_delivery_settle(WebhookDeliverySettle {
                delivery_id: d.delivery_id,
                webhook_id: d.webhook.webhook_id.clone(),
                attempt: record.clone(),
                retry_at,
            })
            .await;
        let (webhook, event_id) = (&d.webhook.webhook_id, &d.event_id);
        match settled {
            Ok(_) => {
                tracing::debug!(%webhook, %event_id, attempt = d.attempt, outcome, "webhook attempt")
            }
            // Not settled: the claim runs out and the event is attempted
            // again (at least once).
            Err(e) => {
                let unavailable = matches!(e, onceq_store::StoreError::Unavailable(_));
                state.metrics.db_error(ErrorSource::Push, unavailable);
                tracing::warn!(%webhook, %event_id, error = %e, "webhook attempt not settled; it is attempted again after its claim");
            }
        }
        record
    }

    /// The POST; its status, or why there is none.
    async fn post(
        &self,
        state: &AppState,
        d: &WebhookDelivery,
    ) -> Result<reqwest::StatusCode, String> {
        let url = Url::parse(&d.webhook.url).map_err(|e| format!("stored url: {e}"))?;
        // Again at each attempt: the operator's settings may have changed.
        state.outbound.guard.check("url", &url)?;
        let timestamp = state.clock.now().as_second();
        let signature = signature::sign(&d.webhook.secret, timestamp, d.body.as_bytes());
        let mut request = self.client.post(url);
        for (name, value) in crate::headers::stored(d.webhook.headers.as_deref())
            .map_err(|_| "stored headers are not an object".to_owned())?
        {
            request = request.header(name, value);
        }
        let request = request
            .header(CONTENT_TYPE, "application/json")
            .header(HEADER_EVENT_ID, &d.event_id)
            .header(HEADER_EVENT_TYPE, &d.event_type)
            .header(HEADER_WEBHOOK_ID, &d.webhook.webhook_id)
            .header(HEADER_ATTEMPT, d.attempt.to_string())
            .header(HEADER_TIMESTAMP, timestamp.to_string())
            .header(HEADER_SIGNATURE, signature)
            .body(d.body.clone());
        client::send(request, state.config.push.webhook_timeout).await
    }
}

/// When a failed attempt is tried again: push's backoff after it, or `None`
/// (given up) after the last attempt or once the event is too old.
fn retry_at(state: &AppState, d: &WebhookDelivery, now: Timestamp) -> Option<Timestamp> {
    let age = now.duration_since(d.event_at);
    if d.attempt >= MAX_ATTEMPTS || age >= SignedDuration::from_secs(MAX_EVENT_AGE_SECONDS) {
        return None;
    }
    let config = &state.config.push;
    let delay = backoff(
        d.attempt,
        config.retry_base,
        config.retry_max,
        rand::rng().random_range(0.0..=1.0),
    );
    Some(now + SignedDuration::try_from(delay).unwrap_or(SignedDuration::from_secs(3600)))
}
