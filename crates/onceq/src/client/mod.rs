//! A typed client for the queue API.
//!
//! - `error`: [`Error`], one variant per failure a caller branches on.
//! - `retry`: [`RetryPolicy`], exponential backoff with full jitter.
//! - `admin`: the admin API's calls (keys and projects of every project).
//! - `cron`: cron schedules: create, list, get, update, pause, resume,
//!   delete.
//! - `webhooks`: account webhooks: register, list, deliveries, test, delete.
//! - `batch`: a batch's acks in one call: `ack_batch`, or carried by the
//!   next consume ([`Client::consume_acking`]).
//! - `life`: a message's life in hand: ack with a result, cancel, redrive
//!   of chosen dead letters.
//! - `call`: how one call goes out and comes back, and the idempotency key.
//! - this module: [`Client`] and its call options.

mod admin;
mod batch;
mod call;
mod cron;
mod error;
mod life;
mod retry;
mod webhooks;

use std::time::Duration;

use onceq_types::{
    ConsumedMessage, Headers, MessageDetail, PublishedMessage, QueueRecord, QueueStats,
    capability::{Capability, Discovery},
    reply::{Deleted, Extended, Items, Nacked, Paused, Purged, Redriven},
    request::{self, BatchItem},
};
use reqwest::{Method, header};
use serde::Serialize;
use serde_json::value::RawValue;

pub use batch::BatchAck;
pub use cron::CronCreated;
pub use error::{Error, Refusal};
pub use retry::RetryPolicy;

/// A client of one queue server and one API key. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    auth: header::HeaderValue,
    retry: RetryPolicy,
    /// Sent as `Idempotency-Key` on every call ([`Client::with_idempotency_key`]).
    idempotency_key: Option<header::HeaderValue>,
}

/// Options of [`Client::publish`].
#[derive(Debug, Clone, Default)]
pub struct PublishOptions {
    /// Dedupes the publish within the server's window. When `None` the
    /// client makes one up (UUID v7) so that its own retries are still safe.
    pub idempotency_key: Option<String>,
    /// Hold the message back this many seconds.
    pub delay_seconds: Option<i64>,
    /// Higher goes out first.
    pub priority: Option<i64>,
    /// Headers kept with the message and handed to its consumer (names
    /// are case-insensitive; the server stores them lower-case).
    pub headers: Headers,
}

/// What a publish returned.
#[derive(Debug, Clone)]
pub struct Published {
    /// The message as the server holds it (the first one, on a replay).
    pub message: PublishedMessage,
    /// True when the server answered from the idempotency key: no new
    /// message was stored by this call.
    pub replay: bool,
    /// The key the publish was sent with (the caller's, or generated).
    pub idempotency_key: String,
    /// What the call cost.
    pub cost_usd: f64,
}

/// Options of [`Client::consume`].
#[derive(Debug, Clone, Default)]
pub struct ConsumeOptions {
    /// 1..=10; 0 means 1.
    pub max_messages: u32,
    /// Lease length; `None` = the queue's default.
    pub visibility_timeout: Option<u32>,
    /// Long poll up to this many seconds (0..=20).
    pub wait_seconds: u32,
}

/// Options of [`Client::nack`].
#[derive(Debug, Clone)]
pub struct NackOptions {
    /// The lease's receipt.
    pub receipt: Option<String>,
    /// False dead-letters at once.
    pub requeue: bool,
    /// Hold the message back before it is available again.
    pub delay_seconds: Option<i64>,
    /// Why the work failed (at most 8 KiB); servers that keep attempts
    /// record it as the message's `last_error`.
    pub error: Option<String>,
}

impl Default for NackOptions {
    fn default() -> Self {
        Self {
            receipt: None,
            requeue: true,
            delay_seconds: None,
            error: None,
        }
    }
}

/// A decoded successful answer.
struct Answer<T> {
    data: T,
    replay: bool,
    cost_usd: f64,
}

impl Client {
    /// A client of the server at `base_url` (e.g. `http://127.0.0.1:8787`).
    pub fn new(base_url: &str, api_key: &str) -> Result<Self, Error> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .build()
            .map_err(Error::Transport)?;
        Self::with_http(http, base_url, api_key)
    }

    /// A client on a caller-built `reqwest::Client` (timeouts, TLS, proxies).
    pub fn with_http(http: reqwest::Client, base_url: &str, api_key: &str) -> Result<Self, Error> {
        let auth = header::HeaderValue::from_str(&format!("Bearer {api_key}"))
            .map_err(|_| Error::Config("the API key must be visible ASCII".into()))?;
        Ok(Self {
            http,
            base: base_url.trim_end_matches('/').to_owned(),
            auth,
            retry: RetryPolicy::default(),
            idempotency_key: None,
        })
    }

    /// Replaces the retry policy of publishes.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Publishes one message. Transient failures (transport errors, 5xx,
    /// 429) are retried with the same idempotency key per the retry policy.
    pub async fn publish<P: Serialize + ?Sized>(
        &self,
        queue: &str,
        payload: &P,
        opts: PublishOptions,
    ) -> Result<Published, Error> {
        let key = opts
            .idempotency_key
            .unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
        let mut headers = opts.headers;
        crate::trace_context::inject_message(&mut headers);
        let body = request::Publish {
            queue: Some(queue.to_owned()),
            payload: Some(to_raw(payload)?),
            delay_seconds: opts.delay_seconds,
            priority: opts.priority,
            idempotency_key: Some(key.clone()),
            deduplication_id: None,
            message_group_id: None,
            headers: if headers.is_empty() {
                None
            } else {
                Some(to_raw(&headers)?)
            },
        };
        let answer: Answer<PublishedMessage> = self
            .retry
            .run(|| self.call_once(Method::POST, "/v1/queue/publish", Some(&body)))
            .await?;
        Ok(Published {
            message: answer.data,
            replay: answer.replay,
            idempotency_key: key,
            cost_usd: answer.cost_usd,
        })
    }

    /// Publishes 1..=10 messages, all or none. Retried like
    /// [`publish`](Self::publish) only when every item carries an
    /// idempotency key (otherwise a retry could store a second copy).
    pub async fn publish_batch(
        &self,
        queue: &str,
        mut messages: Vec<BatchItem>,
    ) -> Result<Vec<PublishedMessage>, Error> {
        for item in &mut messages {
            trace_item(item)?;
        }
        // Safe to retry when every item has a key, its own or the
        // client's `<key>:<index>`.
        let safe = self.idempotency_key.is_some()
            || messages
                .iter()
                .all(|m| m.idempotency_key.is_some() || m.deduplication_id.is_some());
        let body = request::PublishBatch {
            queue: Some(queue.to_owned()),
            messages: Some(messages),
        };
        let call = || self.call_once(Method::POST, "/v1/queue/publish_batch", Some(&body));
        let answer: Answer<Items<PublishedMessage>> = if safe {
            self.retry.run(call).await?
        } else {
            call().await?
        };
        Ok(answer.data.items)
    }

    /// Takes up to `max_messages` messages under a lease.
    pub async fn consume(
        &self,
        queue: &str,
        opts: ConsumeOptions,
    ) -> Result<Vec<ConsumedMessage>, Error> {
        Ok(self.consume_acking(queue, opts, Vec::new()).await?.items)
    }

    /// Deletes a message held under a lease; false if the lease was lost.
    /// [`Client::ack_with_result`] also hands the server what the work
    /// produced.
    pub async fn ack(
        &self,
        queue: &str,
        message_id: &str,
        receipt: Option<&str>,
    ) -> Result<bool, Error> {
        self.ack_with_result(queue, message_id, receipt, None).await
    }

    /// Gives a message back (or dead-letters it with `requeue: false`).
    pub async fn nack(
        &self,
        queue: &str,
        message_id: &str,
        opts: NackOptions,
    ) -> Result<Nacked, Error> {
        let body = request::Nack {
            queue: Some(queue.to_owned()),
            message_id: Some(message_id.to_owned()),
            requeue: Some(opts.requeue),
            delay_seconds: opts.delay_seconds,
            receipt: opts.receipt,
            error: opts.error,
        };
        Ok(self
            .call(Method::POST, "/v1/queue/nack", Some(&body))
            .await?
            .data)
    }

    /// Extends a lease to `visibility_timeout` seconds from now (heartbeat).
    pub async fn extend(
        &self,
        queue: &str,
        message_id: &str,
        receipt: Option<&str>,
        visibility_timeout: u32,
    ) -> Result<Extended, Error> {
        let body = request::Extend {
            queue: Some(queue.to_owned()),
            message_id: Some(message_id.to_owned()),
            receipt: receipt.map(str::to_owned),
            visibility_timeout: Some(i64::from(visibility_timeout)),
        };
        Ok(self
            .call(Method::POST, "/v1/queue/extend", Some(&body))
            .await?
            .data)
    }

    /// Creates a queue (identical settings return the existing one).
    pub async fn create_queue(&self, req: &request::CreateQueue) -> Result<QueueRecord, Error> {
        Ok(self
            .call(Method::POST, "/v1/queue/create", Some(req))
            .await?
            .data)
    }

    /// Changes the settings `req` names (`POST /v1/queue/update`); the
    /// others keep their values.
    pub async fn update_queue(&self, req: &request::UpdateQueue) -> Result<QueueRecord, Error> {
        Ok(self
            .call(Method::POST, "/v1/queue/update", Some(req))
            .await?
            .data)
    }

    /// Pauses a queue (`POST /v1/queue/pause/{queue}`): publishes are still
    /// accepted, nothing is handed out (consume answers empty, push
    /// delivery stops) until [`Client::resume`]; leases already out run on.
    /// Pausing a paused queue answers `paused: true`.
    pub async fn pause(&self, queue: &str) -> Result<Paused, Error> {
        let path = format!("/v1/queue/pause/{}", segment(queue)?);
        Ok(self.call::<(), _>(Method::POST, &path, None).await?.data)
    }

    /// Resumes a paused queue (`POST /v1/queue/resume/{queue}`).
    pub async fn resume(&self, queue: &str) -> Result<Paused, Error> {
        let path = format!("/v1/queue/resume/{}", segment(queue)?);
        Ok(self.call::<(), _>(Method::POST, &path, None).await?.data)
    }

    /// One message wherever its queue keeps it (in the queue, its
    /// dead-letter queue, or kept finished), with its attempts, last error
    /// and result; `Error::MessageNotFound` when none holds it.
    pub async fn get_message(&self, queue: &str, message_id: &str) -> Result<MessageDetail, Error> {
        let path = format!(
            "/v1/queue/message/{}/{}",
            segment(queue)?,
            id_segment(message_id)?
        );
        Ok(self.call::<(), _>(Method::GET, &path, None).await?.data)
    }

    /// Every queue of the key's project.
    pub async fn list_queues(&self) -> Result<Vec<QueueRecord>, Error> {
        let a: Answer<Items<QueueRecord>> = self
            .call::<(), _>(Method::GET, "/v1/queue/list", None)
            .await?;
        Ok(a.data.items)
    }

    /// One queue.
    pub async fn get_queue(&self, queue: &str) -> Result<QueueRecord, Error> {
        let path = format!("/v1/queue/get/{}", segment(queue)?);
        Ok(self.call::<(), _>(Method::GET, &path, None).await?.data)
    }

    /// Deletes a queue and its messages.
    pub async fn delete_queue(&self, queue: &str) -> Result<Deleted, Error> {
        let path = format!("/v1/queue/delete/{}", segment(queue)?);
        Ok(self.call::<(), _>(Method::DELETE, &path, None).await?.data)
    }

    /// Counts by state.
    pub async fn stats(&self, queue: &str) -> Result<QueueStats, Error> {
        let path = format!("/v1/queue/stats/{}", segment(queue)?);
        Ok(self.call::<(), _>(Method::GET, &path, None).await?.data)
    }

    /// Removes every held message.
    pub async fn purge(&self, queue: &str) -> Result<i64, Error> {
        let path = format!("/v1/queue/purge/{}", segment(queue)?);
        let a: Answer<Purged> = self.call::<(), _>(Method::POST, &path, None).await?;
        Ok(a.data.purged)
    }

    /// Moves dead-lettered messages back into `queue` (at most
    /// `max_messages`); [`Client::redrive_ids`] moves chosen ones.
    pub async fn redrive(&self, queue: &str, max_messages: Option<i64>) -> Result<Redriven, Error> {
        let path = format!("/v1/queue/dlq/redrive/{}", segment(queue)?);
        let body = request::Redrive {
            max_messages,
            message_ids: None,
        };
        Ok(self.call(Method::POST, &path, Some(&body)).await?.data)
    }

    /// The server's endpoints and prices.
    pub async fn discovery(&self) -> Result<Discovery, Error> {
        Ok(self
            .call::<(), _>(Method::GET, "/v1/discovery", None)
            .await?
            .data)
    }

    /// One capability of [`discovery`](Self::discovery) by its id
    /// (`queue.publish`, …); an unknown id is an [`Error::Server`] with
    /// code `NOT_FOUND`.
    pub async fn capability(&self, id: &str) -> Result<Capability, Error> {
        let path = format!("/v1/discovery/{}", id_segment(id)?);
        Ok(self.call::<(), _>(Method::GET, &path, None).await?.data)
    }
}

/// Adds the current span's trace context to a batch item's headers, as
/// [`Client::publish`] does. Headers that are not a string map are left as
/// they are, for the server to refuse naming the entry.
fn trace_item(item: &mut BatchItem) -> Result<(), Error> {
    let mut headers: Headers = match &item.headers {
        None => Headers::new(),
        Some(raw) => match serde_json::from_str(raw.get()) {
            Ok(h) => h,
            Err(_) => return Ok(()),
        },
    };
    let before = headers.len();
    crate::trace_context::inject_message(&mut headers);
    if headers.len() != before {
        item.headers = Some(to_raw(&headers)?);
    }
    Ok(())
}

fn to_raw<P: Serialize + ?Sized>(payload: &P) -> Result<Box<RawValue>, Error> {
    serde_json::value::to_raw_value(payload).map_err(|e| Error::Config(format!("payload: {e}")))
}

/// A queue name is put in a path; refuse anything that is not a valid
/// name rather than percent-encoding it into a different request.
fn segment(queue: &str) -> Result<&str, Error> {
    if onceq_types::names::is_addressable_queue_name(queue) {
        Ok(queue)
    } else {
        Err(Error::Config(format!("invalid queue name {queue:?}")))
    }
}

/// A message id is put in a path: ids are `qmsg_` and URL-safe characters,
/// so refuse anything else rather than encode it into another request.
fn id_segment(id: &str) -> Result<&str, Error> {
    let safe = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '~');
    if !id.is_empty() && id.len() <= 255 && id.chars().all(safe) {
        Ok(id)
    } else {
        Err(Error::Config(format!("invalid message id {id:?}")))
    }
}
