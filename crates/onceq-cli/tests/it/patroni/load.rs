//! The load every Patroni test runs through a fault: publishers that retry
//! each key until it is acknowledged (as a real client does, same key), and
//! consumers that take and ack what they are given. Every answer is kept,
//! so a test can say what clients saw and when publishing came back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

/// The queue published to and consumed from.
pub const QUEUE: &str = "orders";
const PUBLISHERS: usize = 3;
const CONSUMERS: usize = 2;

/// One publish answer.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The idempotency key sent.
    pub key: String,
    pub at: Instant,
    /// HTTP status; 0 when no answer came (the client's own timeout).
    pub status: u16,
    pub retry_after: bool,
    pub body: String,
}

/// What the load saw.
#[derive(Debug, Default)]
pub struct Seen {
    /// Idempotency key → message id, for every publish answered 200.
    pub acked: HashMap<String, String>,
    pub answers: Vec<Answer>,
    /// Messages consumed and acked (ack answered `true`).
    pub consumed: u64,
    /// Acks answered "lease lost" (`false`) on their first attempt: a
    /// receipt that did not survive. Within its lease, none should.
    pub leases_lost: Vec<String>,
    /// Acks answered `false` on a retry, after an attempt that failed
    /// (503): that attempt may have been done, its answer lost
    /// (docs/guarantees.md: "acking again is harmless"); then the message
    /// must be gone.
    pub acked_unanswered: Vec<String>,
    /// Acks that failed (503 during the fault) and were sent again.
    pub ack_retries: u64,
}

/// The running load; [`stop`](Self::stop) ends it.
pub struct Load {
    pub seen: Arc<Mutex<Seen>>,
    stop: CancellationToken,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Load {
    /// Publishers and consumers against `server` with `key`.
    pub fn start(server: &str, key: &str) -> Load {
        let seen: Arc<Mutex<Seen>> = Arc::default();
        let stop = CancellationToken::new();
        let http = reqwest::Client::new();
        let mut tasks = Vec::new();
        for p in 0..PUBLISHERS {
            let (http, url, key, seen, stop) = (
                http.clone(),
                server.to_owned(),
                key.to_owned(),
                seen.clone(),
                stop.clone(),
            );
            tasks.push(tokio::spawn(async move {
                publish_until(&http, &url, &key, p, &seen, &stop).await
            }));
        }
        let client = onceq::Client::new(server, key)
            .unwrap()
            .with_retry(onceq::RetryPolicy {
                max_attempts: 1,
                base_delay: Duration::from_millis(10),
                max_delay: Duration::from_millis(10),
            });
        for _ in 0..CONSUMERS {
            let (client, seen, stop) = (client.clone(), seen.clone(), stop.clone());
            tasks.push(tokio::spawn(
                async move { consume(&client, &seen, &stop).await },
            ));
        }
        Load { seen, stop, tasks }
    }

    /// Waits until `n` more publishes than now are acknowledged.
    pub async fn until_more_acked(&self, n: usize, within: Duration) {
        let target = self.seen.lock().unwrap().acked.len() + n;
        let deadline = Instant::now() + within;
        while self.seen.lock().unwrap().acked.len() < target {
            assert!(
                Instant::now() < deadline,
                "publishing did not go on within {within:?}: {:?}",
                self.last_failures(5)
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn last_failures(&self, n: usize) -> Vec<Answer> {
        let seen = self.seen.lock().unwrap();
        let failed: Vec<_> = seen.answers.iter().filter(|a| a.status != 200).collect();
        failed.iter().rev().take(n).map(|a| (*a).clone()).collect()
    }

    /// Stops every task and returns what they saw.
    pub async fn stop(self) -> Seen {
        self.stop.cancel();
        for t in self.tasks {
            t.await.unwrap();
        }
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

impl Seen {
    /// Every answer that was not a 200 was a 503 with `Retry-After`: what
    /// `docs/guarantees.md` promises while no primary accepts writes.
    pub fn assert_only_retryable_failures(&self, what: &str) {
        let bad: Vec<&Answer> = self
            .answers
            .iter()
            .filter(|a| a.status != 200 && !(a.status == 503 && a.retry_after))
            .collect();
        assert!(
            bad.is_empty(),
            "{what}: {} answers were neither 200 nor 503 with Retry-After, e.g. {:?}",
            bad.len(),
            bad.iter().take(3).collect::<Vec<_>>()
        );
    }

    /// How many answers were 503.
    pub fn unavailable(&self) -> usize {
        self.answers.iter().filter(|a| a.status == 503).count()
    }
}

/// Publishes `p-0`, `p-1`, … in turn, each retried with its key until it
/// is acknowledged.
async fn publish_until(
    http: &reqwest::Client,
    server: &str,
    key: &str,
    p: usize,
    seen: &Mutex<Seen>,
    stop: &CancellationToken,
) {
    for i in 0.. {
        let idem = format!("{p}-{i}");
        loop {
            if stop.is_cancelled() {
                return;
            }
            let answer = publish(http, server, key, &idem).await;
            let ok = answer.status == 200;
            if ok {
                let id = message_id(&answer.body);
                seen.lock().unwrap().acked.insert(idem.clone(), id);
            }
            seen.lock().unwrap().answers.push(answer);
            if ok {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// One publish of `idem` to [`QUEUE`].
pub async fn publish(http: &reqwest::Client, server: &str, key: &str, idem: &str) -> Answer {
    let sent = http
        .post(format!("{server}/v1/queue/publish"))
        .bearer_auth(key)
        .header("Idempotency-Key", idem)
        .json(&serde_json::json!({"queue": QUEUE, "payload": {"key": idem}}))
        .timeout(Duration::from_secs(30))
        .send()
        .await;
    match sent {
        Ok(r) => {
            let status = r.status().as_u16();
            let retry_after = r.headers().get("retry-after").is_some();
            Answer {
                key: idem.to_owned(),
                at: Instant::now(),
                status,
                retry_after,
                body: r.text().await.unwrap_or_default(),
            }
        }
        Err(e) => Answer {
            key: idem.to_owned(),
            at: Instant::now(),
            status: 0,
            retry_after: false,
            body: e.to_string(),
        },
    }
}

/// The `message_id` of a publish answer.
pub fn message_id(body: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    v["data"]["message_id"].as_str().unwrap().to_owned()
}

async fn consume(client: &onceq::Client, seen: &Mutex<Seen>, stop: &CancellationToken) {
    while !stop.is_cancelled() {
        let opts = onceq::ConsumeOptions {
            max_messages: 10,
            visibility_timeout: Some(30),
            wait_seconds: 0,
        };
        let Ok(batch) = client.consume(QUEUE, opts).await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        if batch.is_empty() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        for m in batch {
            // An ack that fails is tried again with the same receipt: the
            // lease outlives the outage (30 s).
            for attempt in 0..200 {
                match client.ack(QUEUE, &m.message_id, Some(&m.receipt)).await {
                    Ok(true) => {
                        seen.lock().unwrap().consumed += 1;
                        break;
                    }
                    Ok(false) => {
                        let mut seen = seen.lock().unwrap();
                        match attempt {
                            0 => seen.leases_lost.push(m.message_id.clone()),
                            _ => seen.acked_unanswered.push(m.message_id.clone()),
                        }
                        break;
                    }
                    Err(_) => {
                        seen.lock().unwrap().ack_retries += 1;
                        if stop.is_cancelled() {
                            return;
                        }
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                }
            }
        }
    }
}
