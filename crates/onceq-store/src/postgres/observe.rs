//! What `/metrics` reads: every queue's depth, and the pool's use.

use super::db::GenericClient;
use super::errors::Error;
use super::{PgStore, sql};
use crate::depths::{DepthRow, with_dead_letters};
use crate::{PoolStats, QueueDepth, QueueRef};

impl PgStore {
    pub(super) async fn queue_depths_once(
        &self,
        now: jiff::Timestamp,
    ) -> Result<Vec<QueueDepth>, Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::QUEUE_DEPTHS).await?;
        let rows = client.query(&stmt, &[&now]).await?;
        let rows: Vec<DepthRow> = rows
            .iter()
            .map(|r| {
                let (held, delayed, in_flight): (i64, i64, i64) =
                    (r.get("held"), r.get("delayed"), r.get("in_flight"));
                DepthRow {
                    id: r.get("id"),
                    dlq_id: r.get("dead_letter_queue_id"),
                    depth: QueueDepth {
                        queue: QueueRef::new(
                            r.get::<_, String>("project"),
                            r.get::<_, String>("name"),
                        ),
                        available: held - delayed - in_flight,
                        delayed,
                        in_flight,
                        dead_lettered: 0,
                        oldest_created_at: r.get("oldest"),
                        paused: r.get("paused"),
                    },
                }
            })
            .collect();
        Ok(with_dead_letters(rows))
    }

    pub(super) fn pool_stats_now(&self) -> Vec<PoolStats> {
        let s = self.db.status();
        vec![PoolStats {
            pool: "postgres",
            max_size: Some(s.max_size),
            size: s.size,
            available: s.available,
            waiting: s.waiting,
        }]
    }
}
