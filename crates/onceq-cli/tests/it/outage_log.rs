//! A database outage is one WARN line in the server's log, not one per
//! failed request: PostgreSQL stopped, twenty calls answered 503, one
//! "store unavailable" warning with its cause.

use std::time::Duration;

use onceq_testdb::{StopMode, TestCluster};

use crate::process::ServerProcess;

#[test]
fn an_outage_is_logged_once() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let pg = rt.block_on(TestCluster::start());
    let db = rt.block_on(pg.create_database());
    let server = ServerProcess::on_postgres(&db.url, "outage-key", &[]);
    let client = reqwest::Client::new();
    let publish = || {
        rt.block_on(async {
            client
                .post(format!("{}/v1/queue/publish", server.url))
                .bearer_auth("outage-key")
                .json(&serde_json::json!({"queue": "jobs", "payload": {"n": 1}}))
                .timeout(Duration::from_secs(30))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        })
    };
    assert_eq!(publish(), 200);
    rt.block_on(pg.stop(StopMode::Fast));
    for _ in 0..20 {
        assert_eq!(publish(), 503);
    }
    let (_, logs) = server.terminate();
    let warnings: Vec<_> = logs
        .iter()
        // (The shutdown's own "could not remove this server's heartbeat"
        // is another matter, said once.)
        .filter(|l| {
            l.contains("WARN") && l.contains("store unavailable") && !l.contains("heartbeat")
        })
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    // No ERROR per request either (the shutdown's lost usage is its own).
    let errors: Vec<_> = logs
        .iter()
        .filter(|l| l.contains("ERROR") && !l.contains("at shutdown"))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}
