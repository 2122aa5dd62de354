//! How a call goes out: the key, the idempotency key, the trace context,
//! and the envelope back; retried when an idempotency key makes that safe.

use std::time::Duration;

use onceq_types::Envelope;
use reqwest::{Method, StatusCode, header};
use serde::{Serialize, de::DeserializeOwned};

use super::{Answer, Client, Error};

impl Client {
    /// This client, sending `Idempotency-Key: key` on its calls (1 to 255
    /// characters of visible ASCII): use it for one mutating call (create,
    /// update, delete, purge, ack, nack, extend, redrive, admin limits …),
    /// which the server then carries out once however often it is sent,
    /// so this client retries it on transient failures (and on 409
    /// `REQUEST_IN_FLIGHT`, after `Retry-After`) per its retry policy; a
    /// retry answers what the first call answered. On
    /// [`publish_batch`](Self::publish_batch) the key names the items
    /// without a key of their own (`<key>:<index>`). Keys are scoped by
    /// project and call: one key per intended change.
    pub fn with_idempotency_key(&self, key: &str) -> Result<Self, Error> {
        let valid = !key.is_empty()
            && key.len() <= 255
            && key.bytes().all(|b| (b' '..=b'~').contains(&b))
            && !key.starts_with(' ')
            && !key.ends_with(' ');
        let value = header::HeaderValue::from_str(key)
            .ok()
            .filter(|_| valid)
            .ok_or_else(|| {
                Error::Config(format!(
                    "idempotency key {key:?} must be 1 to 255 characters of visible ASCII"
                ))
            })?;
        Ok(Self {
            idempotency_key: Some(value),
            ..self.clone()
        })
    }

    /// One call; with an idempotency key, a mutating call is retried on
    /// transient failures (the server answers a retry from its ledger).
    pub(super) async fn call<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&B>,
    ) -> Result<Answer<T>, Error> {
        if self.idempotency_key.is_some() && method != Method::GET {
            self.retry
                .run(|| self.call_once(method.clone(), path, body))
                .await
        } else {
            self.call_once(method, path, body).await
        }
    }

    pub(super) async fn call_once<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&B>,
    ) -> Result<Answer<T>, Error> {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header(header::AUTHORIZATION, self.auth.clone());
        if let Some(key) = &self.idempotency_key {
            req = req.header("idempotency-key", key.clone());
        }
        if let Some(body) = body {
            req = req.json(body);
        }
        let mut trace = header::HeaderMap::new();
        crate::trace_context::inject(&mut trace);
        if !trace.is_empty() {
            req = req.headers(trace);
        }
        let res = req.send().await.map_err(Error::Transport)?;
        let status = res.status();
        let retry_after = res
            .headers()
            .get(header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let bytes = res.bytes().await.map_err(Error::Transport)?;
        let envelope: Envelope<T> = match serde_json::from_slice(&bytes) {
            Ok(e) => e,
            Err(e) if status.is_success() => return Err(Error::Decode(e.to_string())),
            Err(_) => return Err(Error::from_status(status, None, retry_after)),
        };
        match (status, envelope.data) {
            (s, Some(data)) if s == StatusCode::OK && envelope.ok => Ok(Answer {
                data,
                replay: envelope.metadata.idempotent_replay,
                cost_usd: envelope.metadata.cost_usd,
            }),
            _ => Err(Error::from_status(status, envelope.error, retry_after)),
        }
    }
}
