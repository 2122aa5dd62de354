//! The bench's HTTP calls, made on plain hyper HTTP/1.1 connections (no
//! client retries, redirects or pool bookkeeping) so that each phase
//! measures the server, and the load generator takes as little of the
//! machine's CPU as it can: on the 2-core machines the side-by-side runs
//! on, every microsecond the client spends is taken from the server.
//! reqwest cost 53 µs of client CPU per publish (URL parsing, its tower
//! layers); docs/performance.md, session 17.

use std::sync::{
    Arc, Mutex,
    atomic::{AtomicU64, Ordering},
};

use anyhow::Context;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Method, Request, StatusCode};
use serde_json::{Value, json};

/// Keep-alive HTTP/1.1 connections to one server, with one key.
#[derive(Clone)]
pub struct Load {
    /// `host:port` to connect to.
    addr: String,
    /// The path prefix of `--url` (empty, or like `/onceq`).
    prefix: String,
    host: HeaderValue,
    auth: HeaderValue,
    /// Idle connections; a request takes one (or opens one) and gives it
    /// back once its answer is read. At most one request per connection.
    idle: Arc<Mutex<Vec<SendRequest<Full<Bytes>>>>>,
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
    /// A client for the server at `base` (`http://host:port[/prefix]`).
    pub fn new(base: &str, key: &str) -> anyhow::Result<Self> {
        let url = reqwest::Url::parse(base).with_context(|| format!("--url {base}"))?;
        anyhow::ensure!(
            url.scheme() == "http",
            "--url {base}: the bench speaks plain HTTP only (run it next to the \
             server, or against a plain-HTTP listener behind your TLS proxy)"
        );
        let host = url.host_str().context("--url has no host")?;
        let port = url.port_or_known_default().context("--url has no port")?;
        let authority = match url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_owned(),
        };
        Ok(Self {
            addr: format!("{host}:{port}"),
            prefix: url.path().trim_end_matches('/').to_owned(),
            host: HeaderValue::from_str(&authority)?,
            auth: HeaderValue::from_str(&format!("Bearer {key}"))?,
            idle: Arc::default(),
            requests: Arc::default(),
        })
    }

    /// Requests sent so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    async fn post(&self, path: &str, body: &Value) -> anyhow::Result<Value> {
        let body = serde_json::to_vec(body)?;
        self.send(Method::POST, path, Some(body)).await
    }

    /// A POST whose answer is only checked: its JSON is read only when the
    /// status is not a success, to name the error (a publish's answer is
    /// a tenth of the client's CPU when parsed).
    async fn post_ok(&self, path: &str, body: &Value) -> anyhow::Result<()> {
        let body = serde_json::to_vec(body)?;
        let (status, answer) = self
            .exchange(Method::POST, path, Some(body))
            .await
            .with_context(|| format!("POST {path}"))?;
        if status.is_success() {
            return Ok(());
        }
        let v: Value = serde_json::from_slice(&answer).unwrap_or_default();
        anyhow::bail!("POST {path}: {status}: {}", v["error"])
    }

    /// Sends one request with the key; its answer's JSON, or an error naming
    /// the method and path unless the status is a success.
    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> anyhow::Result<Value> {
        let (status, answer) = self
            .exchange(method.clone(), path, body)
            .await
            .with_context(|| format!("{method} {path}"))?;
        let v: Value = serde_json::from_slice(&answer)
            .with_context(|| format!("{method} {path}: answer ({status})"))?;
        anyhow::ensure!(
            status.is_success(),
            "{method} {path}: {status}: {}",
            v["error"]
        );
        Ok(v)
    }

    /// One request and its whole answer, on an idle connection or a new one.
    async fn exchange(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> anyhow::Result<(StatusCode, Bytes)> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let idle = self.idle.lock().expect("idle connections").pop();
        let mut conn = match idle {
            Some(conn) if !conn.is_closed() => conn,
            _ => self.connect().await?,
        };
        conn.ready().await?;
        let mut req = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.prefix))
            .header(HOST, &self.host)
            .header(AUTHORIZATION, &self.auth);
        if body.is_some() {
            req = req.header(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        }
        let req = req.body(Full::new(Bytes::from(body.unwrap_or_default())))?;
        let res = conn.send_request(req).await?;
        let status = res.status();
        let answer = res.into_body().collect().await?.to_bytes();
        self.idle.lock().expect("idle connections").push(conn);
        Ok((status, answer))
    }

    /// A new keep-alive connection, its driver on its own task.
    async fn connect(&self) -> anyhow::Result<SendRequest<Full<Bytes>>> {
        let tcp = tokio::net::TcpStream::connect(&self.addr).await?;
        tcp.set_nodelay(true)?;
        let (conn, driver) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp)).await?;
        tokio::spawn(async move {
            // Ends when the server closes the connection or the last handle
            // to it is dropped; a request on it has seen the error already.
            let _ = driver.await;
        });
        Ok(conn)
    }

    /// Messages `queue` still holds (waiting, delayed, or handed out and not
    /// yet acked), as the store counts them: its stats' `message_count`.
    pub async fn remaining(&self, queue: &str) -> anyhow::Result<i64> {
        let path = format!("/v1/queue/stats/{queue}");
        let v = self.send(Method::GET, &path, None).await?;
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
        self.post_ok("/v1/queue/publish", &body).await
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
        self.post_ok(
            "/v1/queue/publish_batch",
            &json!({"queue": queue, "messages": messages}),
        )
        .await
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
        let path = format!("/v1/queue/delete/{queue}");
        let _ = self.exchange(Method::DELETE, &path, None).await;
    }
}
