//! The seed's worker *without* its job-fact guard: take a message, write
//! the export, ack. Kept only as a deliberately broken pipeline for the
//! chaos run's teeth: a redelivery (a lease that ran out, a crash before the
//! ack) builds the export a second time, and the checker must say so.

use std::time::Duration;

use onceq::ConsumeOptions;
use tokio_util::sync::CancellationToken;

pub async fn run(
    client: onceq::Client,
    pool: deadpool_postgres::Pool,
    queue: String,
    visibility_secs: u32,
    work: Duration,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    while !shutdown.is_cancelled() {
        let opts = ConsumeOptions {
            max_messages: 10,
            visibility_timeout: Some(visibility_secs),
            wait_seconds: 1,
        };
        let messages = match client.consume(&queue, opts).await {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(error = %e, "consume failed");
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        for m in messages {
            let payload: serde_json::Value = serde_json::from_str(m.payload.get())?;
            let fact = payload["job_fact"]
                .as_str()
                .unwrap_or(&m.message_id)
                .to_owned();
            tokio::time::sleep(work).await;
            let db = pool.get().await?;
            db.execute(
                "INSERT INTO exports (job_fact, tenant, format) VALUES ($1, $2, $3)",
                &[
                    &fact,
                    &payload["tenant"].as_str(),
                    &payload["format"].as_str(),
                ],
            )
            .await?;
            let _ = client.ack(&queue, &m.message_id, None).await;
        }
    }
    Ok(())
}
