//! Shared by both backends' `queue_depths`: a queue's `dead_lettered` is
//! what its dead-letter queue holds, known once every queue is counted.

use std::collections::HashMap;

use crate::QueueDepth;

/// A queue's depth with the ids that link it to its DLQ.
pub(crate) struct DepthRow {
    pub(crate) id: i64,
    pub(crate) dlq_id: Option<i64>,
    pub(crate) depth: QueueDepth,
}

/// Fills each queue's `dead_lettered` with what its DLQ holds (in every
/// state), in the rows' order.
pub(crate) fn with_dead_letters(rows: Vec<DepthRow>) -> Vec<QueueDepth> {
    let held: HashMap<i64, i64> = rows
        .iter()
        .map(|r| {
            let d = &r.depth;
            (r.id, d.available + d.delayed + d.in_flight)
        })
        .collect();
    rows.into_iter()
        .map(|r| QueueDepth {
            dead_lettered: r.dlq_id.and_then(|id| held.get(&id).copied()).unwrap_or(0),
            ..r.depth
        })
        .collect()
}
