//! The hostile tenant's HTTP client: its own key, straight to the servers
//! (no proxy of the run's: its traffic is not what faults cut), from
//! several source addresses on 127.0.0.0/8 so that the servers' per-address
//! connection cap is not what stops it (a tenant with a few machines, as in
//! issue 26), one server after the other.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use tokio::time::Instant;

/// An answer: status, the JSON body (`Null` when it was not JSON) and the
/// `Retry-After` seconds, if any.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The body.
    pub body: serde_json::Value,
    /// `Retry-After`, in seconds.
    pub retry_after: Option<u64>,
}

/// The tenant's client.
pub struct Api {
    clients: Vec<reqwest::Client>,
    ports: Vec<u16>,
    key: String,
    next: AtomicUsize,
    /// Setup calls given up (no answer within their window), and the last
    /// one's failure.
    pub given_up: std::sync::Mutex<(u64, String)>,
}

impl Api {
    /// A client per source address `127.0.0.2` … `127.0.0.(1 + sources)`.
    pub fn new(ports: Vec<u16>, key: String, sources: usize) -> anyhow::Result<Api> {
        let clients = (0..sources.max(1))
            .map(|i| {
                let octet = u8::try_from(2 + i).unwrap_or(254);
                reqwest::Client::builder()
                    .no_proxy()
                    .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, octet)))
                    .pool_idle_timeout(Duration::from_secs(5))
                    .build()
            })
            .collect::<Result<_, _>>()?;
        Ok(Api {
            clients,
            ports,
            key,
            next: AtomicUsize::new(0),
            given_up: std::sync::Mutex::new((0, String::new())),
        })
    }

    /// One call, to the next server from the next source address.
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&serde_json::Value>,
        idempotency_key: Option<&str>,
        timeout: Duration,
    ) -> reqwest::Result<Answer> {
        let n = self.next.fetch_add(1, Relaxed);
        let port = self.ports[n % self.ports.len()];
        let client = &self.clients[(n / self.ports.len()) % self.clients.len()];
        let mut req = client
            .request(method, format!("http://127.0.0.1:{port}{path}"))
            .bearer_auth(&self.key)
            .timeout(timeout);
        if let Some(b) = body {
            req = req.json(b);
        }
        if let Some(k) = idempotency_key {
            req = req.header("Idempotency-Key", k);
        }
        let resp = req.send().await?;
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok());
        let text = resp.text().await?;
        Ok(Answer {
            status,
            body: serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
            retry_after,
        })
    }

    /// A setup call, retried (with the same `Idempotency-Key`, if any, as a
    /// real client does) through server kills, PostgreSQL restarts, 5xx, 429 and
    /// 409 `REQUEST_IN_FLIGHT` until it gets another answer or `within` is up.
    pub async fn until_answered(
        &self,
        path: &str,
        body: Option<&serde_json::Value>,
        idempotency_key: Option<&str>,
        within: Duration,
    ) -> anyhow::Result<Answer> {
        let deadline = Instant::now() + within;
        let mut wait = Duration::from_millis(50);
        loop {
            let sent = self
                .call(
                    reqwest::Method::POST,
                    path,
                    body,
                    idempotency_key,
                    Duration::from_secs(10),
                )
                .await;
            let (pause, last) = match sent {
                Ok(a) if a.status == 429 || a.body["error"]["code"] == "REQUEST_IN_FLIGHT" => (
                    Duration::from_secs(a.retry_after.unwrap_or(1).clamp(1, 5)),
                    format!("{} {}", a.status, a.body["error"]),
                ),
                Ok(a) if a.status < 500 => return Ok(a),
                Ok(a) => (wait, format!("{} {}", a.status, a.body["error"])),
                Err(e) => (wait, e.to_string()),
            };
            anyhow::ensure!(
                Instant::now() + pause < deadline,
                "{path} got no answer within {within:?} (last: {last})"
            );
            tokio::time::sleep(pause).await;
            wait = (wait * 2).min(Duration::from_secs(1));
        }
    }
}
