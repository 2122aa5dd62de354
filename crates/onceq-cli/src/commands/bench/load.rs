//! The bench's HTTP calls, made directly with reqwest so that each phase
//! measures the server and nothing else (no client retries).

use std::sync::{
    Arc,
    atomic::{AtomicU64, Ordering},
};

use anyhow::Context;
use serde_json::{Value, json};

/// A keep-alive HTTP client bound to one server and key.
#[derive(Clone)]
pub struct Load {
    http: reqwest::Client,
    base: String,
    auth: String,
    /// Requests sent so far, by every clone (for context switches per
    /// request).
    requests: Arc<AtomicU64>,
}

/// A consumed message, reduced to what the bench needs.
pub struct Taken {
    pub message_id: String,
    pub receipt: String,
    pub payload: Value,
}

impl Load {
    pub fn new(base: &str, key: &str, connections: usize) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(connections)
            .tcp_nodelay(true)
            .build()?;
        Ok(Self {
            http,
            base: base.trim_end_matches('/').to_owned(),
            auth: format!("Bearer {key}"),
            requests: Arc::default(),
        })
    }

    /// Requests sent so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    async fn post(&self, path: &str, body: &Value) -> anyhow::Result<Value> {
        let url = format!("{}{path}", self.base);
        self.send(self.http.post(url).json(body), &format!("POST {path}"))
            .await
    }

    /// Sends one request with the key; its answer's JSON, or an error naming
    /// `what` (method and path) unless the status is a success.
    async fn send(&self, req: reqwest::RequestBuilder, what: &str) -> anyhow::Result<Value> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let res = req
            .header("authorization", &self.auth)
            .send()
            .await
            .with_context(|| what.to_owned())?;
        let status = res.status();
        let v: Value = res
            .json()
            .await
            .with_context(|| format!("{what}: answer"))?;
        anyhow::ensure!(status.is_success(), "{what}: {status}: {}", v["error"]);
        Ok(v)
    }

    /// Messages `queue` still holds (waiting, delayed, or handed out and not
    /// yet acked), as the store counts them: its stats' `message_count`.
    pub async fn remaining(&self, queue: &str) -> anyhow::Result<i64> {
        let path = format!("/v1/queue/stats/{queue}");
        let url = format!("{}{path}", self.base);
        let v = self
            .send(self.http.get(url), &format!("GET {path}"))
            .await?;
        v["data"]["message_count"]
            .as_i64()
            .with_context(|| format!("GET {path}: no message_count in {v}"))
    }

    /// One publish; `key` dedupes it.
    pub async fn publish(
        &self,
        queue: &str,
        payload: Value,
        key: Option<String>,
    ) -> anyhow::Result<()> {
        let mut body = json!({"queue": queue, "payload": payload});
        if let Some(k) = key {
            body["idempotency_key"] = Value::String(k);
        }
        self.post("/v1/queue/publish", &body).await.map(|_| ())
    }

    /// One publish_batch.
    pub async fn publish_batch(
        &self,
        queue: &str,
        items: Vec<(Value, Option<String>)>,
    ) -> anyhow::Result<()> {
        let messages: Vec<Value> = items
            .into_iter()
            .map(|(payload, key)| match key {
                Some(k) => json!({"payload": payload, "idempotency_key": k}),
                None => json!({"payload": payload}),
            })
            .collect();
        self.post(
            "/v1/queue/publish_batch",
            &json!({"queue": queue, "messages": messages}),
        )
        .await
        .map(|_| ())
    }

    /// One consume of up to 10, long-polling up to `wait` seconds, carrying the acks of `done` (the previous
    /// batch, applied before the claim): what it handed out, and how many
    /// of the acks ended their lease.
    pub async fn consume_acking(
        &self,
        queue: &str,
        wait: u32,
        done: &[Taken],
    ) -> anyhow::Result<(Vec<Taken>, usize)> {
        let mut body = json!({"queue": queue, "max_messages": 10, "wait_seconds": wait});
        if !done.is_empty() {
            let acks: Vec<Value> = done
                .iter()
                .map(|m| json!({"message_id": m.message_id, "receipt": m.receipt}))
                .collect();
            body["acks"] = Value::Array(acks);
        }
        let mut v = self.post("/v1/queue/consume", &body).await?;
        let acked = v["data"]["acks"]["successful"]
            .as_array()
            .map_or(0, Vec::len);
        let items = v["data"]["items"].as_array_mut().map(std::mem::take);
        let taken = items
            .unwrap_or_default()
            .into_iter()
            .map(|mut m| Taken {
                message_id: m["message_id"].as_str().unwrap_or_default().to_owned(),
                receipt: m["receipt"].as_str().unwrap_or_default().to_owned(),
                payload: m["payload"].take(),
            })
            .collect();
        Ok((taken, acked))
    }

    /// One ack with the receipt.
    pub async fn ack(&self, queue: &str, m: &Taken) -> anyhow::Result<bool> {
        let v = self
            .post(
                "/v1/queue/ack",
                &json!({"queue": queue, "message_id": m.message_id, "receipt": m.receipt}),
            )
            .await?;
        Ok(v["data"]["acked"].as_bool().unwrap_or(false))
    }

    /// Makes sure a queue exists (so consumers can start before producers).
    pub async fn create_queue(&self, queue: &str) -> anyhow::Result<()> {
        self.post("/v1/queue/create", &json!({"name": queue}))
            .await
            .map(|_| ())
    }

    /// Best-effort cleanup.
    pub async fn delete_queue(&self, queue: &str) {
        let _ = self
            .http
            .delete(format!("{}/v1/queue/delete/{queue}", self.base))
            .header("authorization", &self.auth)
            .send()
            .await;
    }
}
