//! A webhook receiver for tests: an axum server on 127.0.0.1:0 that answers
//! each delivery as scripted (a status, never, or when the test releases
//! it) and records what it got.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::{
    Router,
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode, Uri},
};
use serde_json::Value;
use tokio::sync::{Semaphore, watch};

/// How the receiver answers one request.
#[derive(Debug, Clone, Copy)]
pub enum Answer {
    /// At once, with this status.
    Status(u16),
    /// Never: the sender's timeout ends it.
    Hang,
    /// 200, once the test calls [`Receiver::release`].
    Held,
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Seen {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("delivery body is JSON")
    }

    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .unwrap_or_else(|| panic!("no {name} header"))
            .to_str()
            .unwrap()
    }

    pub fn message_id(&self) -> String {
        self.json()["message_id"].as_str().unwrap().to_owned()
    }

    pub fn delivery_count(&self) -> i64 {
        self.json()["delivery_count"].as_i64().unwrap()
    }
}

struct Inner {
    script: Mutex<VecDeque<Answer>>,
    otherwise: Answer,
    seen: Mutex<Vec<Seen>>,
    arrivals: watch::Sender<usize>,
    held: Semaphore,
    current: AtomicUsize,
    peak: AtomicUsize,
}

/// A running receiver; stops with the test's runtime.
pub struct Receiver {
    pub addr: SocketAddr,
    inner: Arc<Inner>,
}

impl Receiver {
    /// Answers `script` in order, then `otherwise` to every request.
    pub async fn start(script: impl IntoIterator<Item = Answer>, otherwise: Answer) -> Self {
        let inner = Arc::new(Inner {
            script: Mutex::new(script.into_iter().collect()),
            otherwise,
            seen: Mutex::default(),
            arrivals: watch::channel(0).0,
            held: Semaphore::new(0),
            current: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        });
        let app = Router::new().fallback(handle).with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { addr, inner }
    }

    /// Answers every request with `status`.
    pub async fn answering(status: u16) -> Self {
        Self::start([], Answer::Status(status)).await
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Lets `n` held requests answer 200.
    pub fn release(&self, n: usize) {
        self.inner.held.add_permits(n);
    }

    /// Everything received so far, in order of arrival.
    pub fn seen(&self) -> Vec<Seen> {
        self.inner.seen.lock().unwrap().clone()
    }

    /// Waits (30 s at most) until `n` requests have arrived; returns them.
    pub async fn wait_for(&self, n: usize) -> Vec<Seen> {
        let mut rx = self.inner.arrivals.subscribe();
        tokio::time::timeout(Duration::from_secs(30), rx.wait_for(|c| *c >= n))
            .await
            .unwrap_or_else(|_| panic!("waited 30 s for {n} deliveries, got {}", self.seen().len()))
            .unwrap();
        self.seen()
    }

    /// Waits (`within` at most) until `n` requests have arrived; whether
    /// they did (for a test that measures the wait rather than fail at
    /// [`Receiver::wait_for`]'s 30 s).
    pub async fn arrived_within(&self, n: usize, within: Duration) -> bool {
        let mut rx = self.inner.arrivals.subscribe();
        tokio::time::timeout(within, rx.wait_for(|c| *c >= n))
            .await
            .is_ok()
    }

    /// How many requests for `path` arrived so far.
    pub fn seen_at(&self, path: &str) -> usize {
        let seen = self.inner.seen.lock().unwrap();
        seen.iter().filter(|s| s.path == path).count()
    }

    /// The most requests it was ever answering at once.
    pub fn peak(&self) -> usize {
        self.inner.peak.load(Ordering::SeqCst)
    }
}

/// Counts a request as being answered until it is (or is dropped).
struct Answering(Arc<Inner>);

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.current.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn handle(
    State(inner): State<Arc<Inner>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let answer = inner
        .script
        .lock()
        .unwrap()
        .pop_front()
        .unwrap_or(inner.otherwise);
    let now = inner.current.fetch_add(1, Ordering::SeqCst) + 1;
    inner.peak.fetch_max(now, Ordering::SeqCst);
    let _answering = Answering(inner.clone());
    let count = {
        let mut seen = inner.seen.lock().unwrap();
        seen.push(Seen {
            path: uri.path().to_owned(),
            headers,
            body,
        });
        seen.len()
    };
    inner.arrivals.send_replace(count);
    match answer {
        Answer::Status(s) => StatusCode::from_u16(s).unwrap(),
        Answer::Hang => std::future::pending().await,
        Answer::Held => {
            inner.held.acquire().await.unwrap().forget();
            StatusCode::OK
        }
    }
}
