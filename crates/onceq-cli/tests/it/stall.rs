//! A stalled database (every PostgreSQL process SIGSTOPped: connections
//! open, TCP acknowledged, nothing answers) makes calls answer 503
//! `UNAVAILABLE` with `Retry-After` within the store timeout, and `/readyz`
//! say not-ready within it; once the database resumes, the server serves
//! again by itself.

use std::time::{Duration, Instant};

use onceq_testdb::TestCluster;

use crate::process::ServerProcess;

/// The server's `--store-timeout-ms` here (the default is 5 s).
const BOUND: Duration = Duration::from_secs(2);
/// What the answer may take beyond the bound (scheduling, the HTTP round trip).
const SLACK: Duration = Duration::from_secs(1);

#[test]
fn a_frozen_database_is_503_within_the_bound_then_recovers() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let pg = rt.block_on(TestCluster::start());
    let db = rt.block_on(pg.create_database());
    let bound_ms = BOUND.as_millis().to_string();
    let server =
        ServerProcess::on_postgres(&db.url, "stall-key", &["--store-timeout-ms", &bound_ms]);
    let http = reqwest::Client::new();
    let call = |path: &'static str| {
        let request = if path == "/readyz" {
            http.get(format!("{}{path}", server.url))
        } else {
            http.post(format!("{}{path}", server.url))
                .bearer_auth("stall-key")
                .json(&serde_json::json!({"queue": "jobs", "payload": {"n": 1}}))
        };
        rt.block_on(async {
            let started = Instant::now();
            let r = request
                .timeout(Duration::from_secs(30))
                .send()
                .await
                .unwrap();
            let retry_after = r.headers().get("retry-after").is_some();
            (r.status().as_u16(), retry_after, started.elapsed())
        })
    };
    assert_eq!(call("/v1/queue/publish").0, 200);
    assert_eq!(call("/readyz").0, 200);

    let frozen = Frozen::new(&pg);
    for path in ["/v1/queue/publish", "/readyz", "/v1/queue/publish"] {
        let (status, retry_after, took) = call(path);
        assert_eq!(status, 503, "{path} while frozen");
        assert!(retry_after, "{path}: 503 without Retry-After");
        assert!(took <= BOUND + SLACK, "{path} took {took:?} while frozen");
    }

    drop(frozen);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, _, _) = call("/v1/queue/publish");
        if status == 200 && call("/readyz").0 == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "no recovery after the thaw");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The cluster frozen until dropped, also when an assertion fails (a frozen
/// postgres would keep the test process from ever exiting).
struct Frozen<'a>(&'a TestCluster);

impl<'a> Frozen<'a> {
    fn new(pg: &'a TestCluster) -> Self {
        pg.freeze();
        Frozen(pg)
    }
}

impl Drop for Frozen<'_> {
    fn drop(&mut self) {
        self.0.thaw();
    }
}
