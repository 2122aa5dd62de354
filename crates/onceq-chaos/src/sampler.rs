//! Redeliveries seen: acked messages are deleted with their
//! `delivery_count`, so a sampler reads the queue database directly every
//! 200 ms and keeps the highest count seen per message. The sum of
//! `count - 1` is a lower bound of the redeliveries (a message handed out
//! twice between two samples is seen once).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// Highest `delivery_count` seen per message id, for those above 1.
#[derive(Debug, Default)]
pub struct Seen {
    max: Mutex<HashMap<String, i32>>,
}

impl Seen {
    /// Sum of `delivery_count - 1` over the messages seen redelivered.
    pub fn redeliveries(&self) -> u64 {
        let max = self.max.lock().expect("sampler lock");
        max.values()
            .map(|c| u64::try_from(c - 1).unwrap_or(0))
            .sum()
    }

    /// Messages seen handed out more than once.
    pub fn messages(&self) -> usize {
        self.max.lock().expect("sampler lock").len()
    }
}

/// Samples until `stop` is cancelled.
pub async fn run(queue_url: String, seen: Arc<Seen>, stop: CancellationToken) {
    let mut db: Option<tokio_postgres::Client> = None;
    while !stop.is_cancelled() {
        if db.as_ref().is_none_or(|c| c.is_closed()) {
            db = match onceq_pg::PgConnect::parse(&queue_url) {
                Ok(pg) => pg.connect().await.ok(),
                Err(_) => None,
            };
        }
        if let Some(client) = &db
            && let Ok(rows) = client
                .query(
                    "SELECT m.id, m.delivery_count FROM onceq_messages m \
                     JOIN onceq_queues q ON q.id = m.queue_id \
                     WHERE m.delivery_count > 1 AND q.project = $1",
                    &[&crate::PROJECT],
                )
                .await
        {
            let mut max = seen.max.lock().expect("sampler lock");
            for row in rows {
                let count: i32 = row.get(1);
                let e = max.entry(row.get(0)).or_insert(count);
                *e = (*e).max(count);
            }
        }
        tokio::select! {
            () = stop.cancelled() => {}
            () = tokio::time::sleep(Duration::from_millis(200)) => {}
        }
    }
}
