//! After the load and the faults: wait until the queue is empty. A message
//! in the dead-letter queue whose export is not built yet (it ran out of
//! hand-outs while servers, workers and PostgreSQL were being killed) is
//! redriven, as an operator would; one whose export is built (dead-lettered
//! by deferrals while its live holder finished it) is left there and
//! explained by the checker.

use std::time::Duration;

use tokio::time::Instant;

use crate::cluster;

/// How the drain ended.
#[derive(Debug, Clone, Default)]
pub struct Drained {
    /// The queue emptied (and the DLQ holds only built work) in time.
    pub settled: bool,
    /// How long it took.
    pub elapsed: Duration,
    /// Dead letters redriven because their work was not built.
    pub redriven: u64,
}

/// Messages held in the victim's project ([`crate::PROJECT`]; a hostile
/// tenant's queues may have the same names), per queue name, and the
/// DLQ's messages' job facts.
pub(crate) const HELD_SQL: &str = "SELECT q.name, m.payload::jsonb->>'job_fact', m.state, m.delivery_count \
     FROM onceq_messages m JOIN onceq_queues q ON q.id = m.queue_id WHERE q.project = 'default'";

/// Waits (up to `within`) until the queue is empty and the DLQ holds only
/// messages whose export exists, twice in a row.
pub async fn run(
    queue_url: &str,
    app_url: &str,
    server_port: u16,
    within: Duration,
) -> anyhow::Result<Drained> {
    let started = Instant::now();
    let deadline = started + within;
    let http = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(10))
        .build()?;
    let mut out = Drained::default();
    let mut calm = 0;
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let (Ok(queue), Ok(app)) = (
            cluster::connect(queue_url, Duration::from_secs(5)).await,
            cluster::connect(app_url, Duration::from_secs(5)).await,
        ) else {
            continue;
        };
        let Ok(held) = queue.query(HELD_SQL, &[]).await else {
            continue;
        };
        let mut in_queue = 0;
        let mut unbuilt_dead = 0;
        for row in &held {
            let name: String = row.get(0);
            if name == crate::QUEUE {
                in_queue += 1;
            } else if name == crate::DLQ {
                let fact: Option<String> = row.get(1);
                let built = app
                    .query_one("SELECT count(*) FROM exports WHERE job_fact = $1", &[&fact])
                    .await
                    .map(|r| r.get::<_, i64>(0) > 0)
                    .unwrap_or(false);
                if !built {
                    unbuilt_dead += 1;
                }
            }
        }
        if unbuilt_dead > 0 {
            let answer = http
                .post(format!(
                    "http://127.0.0.1:{server_port}/v1/queue/dlq/redrive/{}",
                    crate::QUEUE
                ))
                .bearer_auth(crate::API_KEY)
                .json(&serde_json::json!({}))
                .send()
                .await;
            if let Ok(resp) = answer
                && let Ok(v) = resp.json::<serde_json::Value>().await
            {
                out.redriven += v["data"]["redriven"].as_u64().unwrap_or(0);
            }
            calm = 0;
            continue;
        }
        if in_queue == 0 {
            calm += 1;
            if calm >= 2 {
                out.settled = true;
                break;
            }
        } else {
            calm = 0;
        }
    }
    out.elapsed = started.elapsed();
    Ok(out)
}
