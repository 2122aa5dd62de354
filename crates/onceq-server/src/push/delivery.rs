//! One delivery: POST a claimed message to its subscription's URL, then
//! settle its lease with the receipt: ack on a 2xx answer; on anything else
//! (another status, a timeout, a refused or failed connection, a URL the
//! guard now refuses) nack with a backoff, which dead-letters the message
//! after its last allowed attempt, as any failed hand-out does.

use std::sync::Arc;
use std::time::Duration;

use jiff::SignedDuration;
use onceq_store::{ClaimedMessage, LeaseRef, MessageAck, MessageNack, NackBy, StoreError};
use onceq_types::push::{
    HEADER_DELIVERY_COUNT, HEADER_MESSAGE_ID, HEADER_SIGNATURE, HEADER_SUBSCRIPTION_ID,
    HEADER_TIMESTAMP, PushDelivery,
};
use rand::Rng;
use reqwest::header::CONTENT_TYPE;
use serde_json::value::RawValue;
use tokio::sync::OwnedSemaphorePermit;

use super::subscriber::Target;
use crate::{
    AppState,
    metrics::ErrorSource,
    outbound::{Permit, backoff::backoff, client, signature},
};

/// What every delivery of this server shares.
pub(super) struct Ctx {
    /// Store, clock, settings, shutdown.
    pub(super) state: AppState,
    /// One connection pool for every endpoint (`state.outbound`'s).
    pub(super) client: reqwest::Client,
}

/// Delivers `message` and settles it; `_slot` is the subscription's
/// delivery slot and `_permit` its room under the outbound caps, both
/// freed when this returns.
pub(super) async fn run(
    ctx: Arc<Ctx>,
    target: Arc<Target>,
    message: ClaimedMessage,
    (_slot, _permit): (OwnedSemaphorePermit, Permit),
) {
    let grace = ctx.state.config.push.shutdown_grace;
    let shutdown = async {
        ctx.state.shutdown.cancelled().await;
        tokio::time::sleep(grace).await;
    };
    let answer = tokio::select! {
        answer = post(&ctx, &target, &message) => answer,
        _ = shutdown => {
            // Neither ack nor nack: the lease runs out and the message is
            // delivered again, by this server after a restart or by another.
            tracing::info!(
                subscription = %target.record.subscription_id,
                message_id = %message.message_id,
                "push delivery abandoned at shutdown; it is delivered again after its lease"
            );
            return;
        }
    };
    match answer {
        Ok(status) if status.is_success() => ack(&ctx, &target, &message).await,
        Ok(status) => nack(&ctx, &target, &message, &format!("answered {status}")).await,
        Err(reason) => nack(&ctx, &target, &message, &reason).await,
    }
}

/// The POST; its status, or why there is none.
async fn post(
    ctx: &Ctx,
    target: &Target,
    message: &ClaimedMessage,
) -> Result<reqwest::StatusCode, String> {
    // Again at each delivery: the operator's settings may have changed
    // since the subscription was made.
    ctx.state.outbound.guard.check("url", &target.url)?;
    let record = &target.record;
    let payload = RawValue::from_string(message.payload.clone())
        .map_err(|e| format!("stored payload is not JSON: {e}"))?;
    let body = serde_json::to_vec(&PushDelivery {
        message_id: message.message_id.clone(),
        queue: record.queue.queue.clone(),
        payload,
        delivery_count: message.delivery_count,
        headers: serde_json::from_str(message.headers.as_deref().unwrap_or("{}"))
            .map_err(|e| format!("stored headers are not an object: {e}"))?,
    })
    .map_err(|e| format!("encoding the body: {e}"))?;
    let timestamp = ctx.state.clock.now().as_second();
    let signature = signature::sign(&record.secret, timestamp, &body);
    let timeout = Duration::from_secs(record.timeout_seconds.max(1) as u64);
    let request = ctx
        .client
        .post(target.url.clone())
        .header(CONTENT_TYPE, "application/json")
        .header(HEADER_MESSAGE_ID, &message.message_id)
        .header(HEADER_DELIVERY_COUNT, message.delivery_count.to_string())
        .header(HEADER_SUBSCRIPTION_ID, &record.subscription_id)
        .header(HEADER_TIMESTAMP, timestamp.to_string())
        .header(HEADER_SIGNATURE, signature)
        .body(body);
    client::send(request, timeout).await
}

fn lease(target: &Target, message: &ClaimedMessage) -> LeaseRef {
    LeaseRef {
        queue: target.record.queue.clone(),
        message_id: message.message_id.clone(),
        receipt: Some(message.receipt.clone()),
    }
}

async fn ack(ctx: &Ctx, target: &Target, message: &ClaimedMessage) {
    let queue = &target.record.queue;
    let acked = ctx
        .state
        .messages()
        .ack(
            &queue.project,
            &queue.queue,
            MessageAck {
                lease: lease(target, message),
                result: None,
                now: ctx.state.clock.now(),
            },
        )
        .await;
    failed(ctx, &acked);
    if let Ok(true) = acked {
        crate::cron::task::delivery_ended(&ctx.state, queue, message, None).await;
    }
    let (subscription, message_id) = (&target.record.subscription_id, &message.message_id);
    match acked {
        Ok(true) => {
            tracing::debug!(%subscription, %message_id, delivery_count = message.delivery_count, "push delivered")
        }
        // The lease is gone (purged, or reaped after a stall longer than
        // the margin): whoever has the message now settles it.
        Ok(false) => {
            tracing::info!(%subscription, %message_id, "push delivered, but its lease had ended; not acked")
        }
        Err(e) => {
            tracing::warn!(%subscription, %message_id, error = %e, "push delivered, but the ack failed; it is delivered again after its lease")
        }
    }
}

async fn nack(ctx: &Ctx, target: &Target, message: &ClaimedMessage, reason: &str) {
    let config = &ctx.state.config.push;
    let delay = backoff(
        message.delivery_count,
        config.retry_base,
        config.retry_max,
        rand::rng().random_range(0.0..=1.0),
    );
    let queue = &target.record.queue;
    let nacked = ctx
        .state
        .messages()
        .nack(
            &queue.project,
            &queue.queue,
            MessageNack {
                lease: lease(target, message),
                requeue: true,
                delay: SignedDuration::try_from(delay).unwrap_or(SignedDuration::from_secs(3600)),
                // A queue's own retry backoff, when it has one, wins over
                // the dispatcher's (queue-api-2.md §6).
                by_backoff: true,
                // The attempt's error: what failed (status, timeout,
                // connection error), as the log line says it.
                error: Some(reason.to_owned()),
                by: NackBy::Push,
                now: ctx.state.clock.now(),
            },
        )
        .await;
    failed(ctx, &nacked);
    if let Ok(o) = &nacked
        && o.dead_lettered
    {
        crate::cron::task::delivery_ended(&ctx.state, queue, message, Some(reason)).await;
    }
    if matches!(&nacked, Ok(o) if o.nacked) {
        let event = crate::webhooks::Event::Failed {
            queue: queue.queue.clone(),
            reason: "push",
            message_id: Some(message.message_id.clone()),
            delivery_count: Some(message.delivery_count),
            error: Some(reason.to_owned()),
            subscription_id: Some(target.record.subscription_id.clone()),
            count: 1,
        };
        ctx.state.emit(&queue.project, event).await;
    }
    let (subscription, message_id) = (&target.record.subscription_id, &message.message_id);
    let delivery_count = message.delivery_count;
    match nacked {
        Ok(o) if o.dead_lettered => {
            tracing::warn!(%subscription, %message_id, delivery_count, %reason, "push delivery failed for the last time; dead-lettered")
        }
        Ok(o) if o.requeued => {
            tracing::info!(%subscription, %message_id, delivery_count, %reason, retry_in_ms = delay.as_millis() as u64, "push delivery failed; will retry (after the queue's retry backoff instead, if it has one)")
        }
        Ok(_) => {
            tracing::info!(%subscription, %message_id, %reason, "push delivery failed, and its lease had ended")
        }
        Err(e) => {
            tracing::warn!(%subscription, %message_id, %reason, error = %e, "push delivery failed, and so did the nack; it is delivered again after its lease")
        }
    }
}

/// Counts a settlement's store failure in `/metrics` (its success is
/// counted by [`crate::messages`], as for the ack and nack handlers).
fn failed<T>(ctx: &Ctx, settled: &onceq_store::Result<T>) {
    if let Err(e) = settled {
        ctx.state
            .metrics
            .db_error(ErrorSource::Push, matches!(e, StoreError::Unavailable(_)));
    }
}
