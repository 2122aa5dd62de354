//! The check at the end: what the client was promised (each 202) against
//! what was built (`exports` rows), with the job facts, the ledger and the
//! queue as witnesses.
//!
//! A row is attributed to a key by its job fact `export:<key>`; a row under
//! any other job fact (the broken ledger publishes under fresh keys) is
//! attributed by its tenant, which is unique per key. Then, per key:
//! promised (≥ one 202) and no row = **lost**; more than one row =
//! **duplicated**; a row and no 202 = unpromised. Rows nobody can be
//! traced to count as duplicated work too.

use std::collections::{HashMap, HashSet};

use crate::client::KeyRecord;
use crate::cluster;
use crate::drain::HELD_SQL;

/// Everything the check found. The run passes when [`Findings::passed`].
#[derive(Debug, Clone, Default)]
pub struct Findings {
    /// Rows in `exports`.
    pub exports_built: u64,
    /// Keys that got a 202 and have no row.
    pub lost: Vec<String>,
    /// Keys with more than one row, and how many.
    pub duplicated: Vec<(String, u64)>,
    /// Rows traced to no key at all (their job facts).
    pub stray_rows: Vec<String>,
    /// Rows traced to their key by tenant only: built under a foreign job
    /// fact.
    pub foreign_fact_rows: u64,
    /// Keys that never got a 202 (the client gave up at its deadline).
    pub unanswered: Vec<String>,
    /// Keys without a 202 that have a row anyway.
    pub unpromised: Vec<String>,
    /// Keys whose 202s named different message ids.
    pub disagreeing: Vec<String>,
    /// Keys that got an answer other than 202, 409 or 5xx.
    pub odd_answers: Vec<String>,
    /// `done` facts without exactly one row, and rows without a `done` fact.
    pub fact_mismatches: Vec<String>,
    /// Facts still `running` after the drain.
    pub facts_running: Vec<String>,
    /// Promised keys whose ledger entry is missing, or completed with another
    /// status or message id.
    pub ledger_mismatches: Vec<String>,
    /// Promised keys whose ledger entry is still in flight: the API sent
    /// its 202 but could not record it (the layer logs "recording the
    /// answer failed" and lets the claim's lease expire, so that a retry
    /// reruns the handler, deduped by the publish key). Not a broken
    /// promise: reported, not failed.
    pub ledger_unrecorded: Vec<String>,
    /// Messages left in the queue.
    pub left_in_queue: u64,
    /// Messages left in the DLQ whose export is built (dead-lettered by
    /// deferrals while their holder finished them).
    pub dlq_explained: u64,
    /// Messages left in the DLQ with no export.
    pub dlq_unexplained: u64,
}

impl Findings {
    /// Keys lost.
    pub fn lost_count(&self) -> u64 {
        self.lost.len() as u64
    }

    /// Keys duplicated plus rows traced to no key.
    pub fn duplicated_count(&self) -> u64 {
        (self.duplicated.len() + self.stray_rows.len()) as u64
    }

    /// Every other broken invariant, counted.
    pub fn other_violations(&self) -> u64 {
        (self.unpromised.len()
            + self.disagreeing.len()
            + self.odd_answers.len()
            + self.fact_mismatches.len()
            + self.facts_running.len()
            + self.ledger_mismatches.len()) as u64
            + self.foreign_fact_rows
            + self.left_in_queue
            + self.dlq_unexplained
    }

    /// Nothing lost, nothing duplicated, nothing else broken.
    pub fn passed(&self) -> bool {
        self.lost_count() == 0 && self.duplicated_count() == 0 && self.other_violations() == 0
    }
}

/// Reads both databases and compares them with the client's records.
pub async fn run(keys: &[KeyRecord], queue_url: &str, app_url: &str) -> anyhow::Result<Findings> {
    let within = std::time::Duration::from_secs(30);
    let app = cluster::connect(app_url, within).await?;
    let queue = cluster::connect(queue_url, within).await?;
    let mut f = Findings::default();

    let rows: Vec<(String, Option<String>)> = app
        .query("SELECT job_fact, tenant FROM exports", &[])
        .await?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    f.exports_built = rows.len() as u64;
    let by_fact: HashMap<String, usize> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (format!("export:{}", k.key), i))
        .collect();
    let by_tenant: HashMap<&str, usize> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k.tenant.as_str(), i))
        .collect();
    let mut rows_per_key = vec![0u64; keys.len()];
    let mut rows_per_fact: HashMap<&str, u64> = HashMap::new();
    for (fact, tenant) in &rows {
        *rows_per_fact.entry(fact.as_str()).or_default() += 1;
        if let Some(&i) = by_fact.get(fact) {
            rows_per_key[i] += 1;
        } else if let Some(&i) = tenant.as_deref().and_then(|t| by_tenant.get(t)) {
            rows_per_key[i] += 1;
            f.foreign_fact_rows += 1;
        } else {
            f.stray_rows.push(fact.clone());
        }
    }
    for (k, &n) in keys.iter().zip(&rows_per_key) {
        let promised = !k.message_ids.is_empty();
        match (promised, n) {
            (true, 0) => f.lost.push(k.key.clone()),
            (false, 0) => {}
            (false, _) => f.unpromised.push(k.key.clone()),
            (true, _) => {}
        }
        if n > 1 {
            f.duplicated.push((k.key.clone(), n));
        }
        if !promised {
            f.unanswered.push(k.key.clone());
        }
        if k.message_ids.iter().collect::<HashSet<_>>().len() > 1 {
            f.disagreeing.push(k.key.clone());
        }
        for a in &k.odd_answers {
            f.odd_answers.push(format!("{}: {a}", k.key));
        }
    }

    // Job facts: every `done` fact has exactly one row, every row a `done`
    // fact. (Without facts — the naive worker — the table does not exist.)
    let facts: Vec<(String, String)> = if table_exists(&app, "onceq_job_facts").await? {
        app.query("SELECT fact, state FROM onceq_job_facts", &[])
            .await?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect()
    } else {
        Vec::new()
    };
    let mut done = HashSet::new();
    for (fact, state) in &facts {
        if state == "done" {
            done.insert(fact.as_str());
            let n = rows_per_fact.get(fact.as_str()).copied().unwrap_or(0);
            if n != 1 {
                f.fact_mismatches
                    .push(format!("{fact}: done with {n} rows"));
            }
        } else {
            f.facts_running.push(fact.clone());
        }
    }
    for (fact, n) in &rows_per_fact {
        if !done.contains(fact) {
            f.fact_mismatches
                .push(format!("{fact}: {n} row(s) and no done fact"));
        }
    }

    // The ledger: each promised key completed with the message id it gave.
    let ledger: HashMap<String, (Option<i32>, Option<String>)> =
        if table_exists(&app, "onceq_request_ledger").await? {
            app.query(
                "SELECT key, status, convert_from(body, 'UTF8') FROM onceq_request_ledger",
                &[],
            )
            .await?
            .iter()
            .map(|r| (r.get(0), (r.get(1), r.get(2))))
            .collect()
        } else {
            HashMap::new()
        };
    for k in keys.iter().filter(|k| !k.message_ids.is_empty()) {
        let Some((status, body)) = ledger.get(&k.key) else {
            f.ledger_mismatches
                .push(format!("{}: no ledger entry", k.key));
            continue;
        };
        let Some(status) = status else {
            f.ledger_unrecorded.push(k.key.clone());
            continue;
        };
        let id = body
            .as_deref()
            .and_then(|b| serde_json::from_str::<serde_json::Value>(b).ok())
            .and_then(|v| v["message_id"].as_str().map(str::to_owned));
        match id {
            Some(id) if *status == 202 && k.message_ids.iter().all(|m| *m == id) => {}
            _ => f.ledger_mismatches.push(format!(
                "{}: ledger recorded {status} {id:?}, client got {:?}",
                k.key, k.message_ids
            )),
        }
    }

    // The queue and its DLQ.
    for row in queue.query(HELD_SQL, &[]).await? {
        let name: String = row.get(0);
        let fact: Option<String> = row.get(1);
        if name.starts_with(crate::cron::QUEUE) {
            // The cron scenario's own (`crate::cron`).
            continue;
        }
        if name == crate::QUEUE {
            f.left_in_queue += 1;
        } else if fact
            .as_deref()
            .is_some_and(|x| rows_per_fact.contains_key(x))
        {
            f.dlq_explained += 1;
        } else {
            f.dlq_unexplained += 1;
        }
    }
    Ok(f)
}

async fn table_exists(db: &tokio_postgres::Client, table: &str) -> anyhow::Result<bool> {
    Ok(db
        .query_one("SELECT to_regclass($1) IS NOT NULL", &[&table])
        .await?
        .get(0))
}
