//! Job facts: what a message's work is called, and the `onceq_job_facts`
//! rows that say who is doing it and whether it is done.
//!
//! The statements are the crate's `sql/job_fact/postgres/*.sql`, shared
//! with the Node package; their states are drawn in docs/state-machines.md
//! ("A job fact") and pinned by `sql/cases/job_fact.json`. The
//! [`Worker`](super::Worker) runs them; they are public for tools that
//! manage facts themselves (and for the case table's runner).

use jiff::Timestamp;
use onceq_types::ConsumedMessage;
use tokio_postgres::GenericClient;

const SCHEMA: &str = include_str!("../../sql/job_fact/postgres/schema.sql");
const CLAIM: &str = include_str!("../../sql/job_fact/postgres/claim.sql");
const HEARTBEAT: &str = include_str!("../../sql/job_fact/postgres/heartbeat.sql");
const MARK_DONE: &str = include_str!("../../sql/job_fact/postgres/mark_done.sql");
const RELEASE: &str = include_str!("../../sql/job_fact/postgres/release.sql");
const PURGE: &str = include_str!("../../sql/job_fact/postgres/purge.sql");

/// The fact a message's work is known by: `payload.job_fact` when it is a
/// non-empty string, else the publish idempotency key, else the message id.
///
/// The first two survive a re-publish of the same work (a retried request
/// makes a new message with the same key or `job_fact`); the message id
/// only covers redeliveries of one message.
pub fn job_fact(payload: &serde_json::Value, message: &ConsumedMessage) -> String {
    let from_payload = payload
        .get("job_fact")
        .and_then(serde_json::Value::as_str)
        .filter(|s| !s.is_empty());
    let from_key = message.idempotency_key.as_deref().filter(|s| !s.is_empty());
    from_payload
        .or(from_key)
        .unwrap_or(&message.message_id)
        .to_owned()
}

/// What a claim found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Claim {
    /// The fact is ours for this attempt (new, or taken over).
    Mine,
    /// The work was done already.
    Done,
    /// Another attempt holds it and its lease has not run out.
    HeldUntil(Timestamp),
}

/// A claim's answer: what it found, and how many attempts the fact has had
/// (1 when inserted, one more per takeover after a lease ran out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed {
    /// What the claim found.
    pub state: Claim,
    /// Attempts so far, this one included when the fact is ours.
    pub attempts: i32,
}

/// Creates the table if it is missing; safe when many workers start at once.
pub async fn ensure_schema(
    db: &mut tokio_postgres::Client,
) -> Result<(), tokio_postgres::Error> {
    let tx = db.transaction().await?;
    tx.batch_execute(SCHEMA).await?;
    tx.commit().await
}

/// One attempt's hold on a fact: the fact and the token naming the attempt.
#[derive(Debug, Clone)]
pub struct Hold<'a> {
    /// The fact ([`job_fact`]).
    pub fact: &'a str,
    /// Names this attempt; only it may heartbeat, finish or release.
    pub claim: &'a str,
}

impl Hold<'_> {
    /// Claims the fact (`sql/job_fact/postgres/claim.sql`) as `owner`, with
    /// a lease until `until`.
    pub async fn claim(
        &self,
        db: &impl GenericClient,
        owner: &str,
        now: Timestamp,
        until: Timestamp,
    ) -> Result<Claimed, tokio_postgres::Error> {
        let row = db
            .query_one(CLAIM, &[&self.fact, &owner, &self.claim, &now, &until])
            .await?;
        let state: &str = row.get("state");
        let state = match (state, row.get::<_, bool>("mine")) {
            ("done", _) => Claim::Done,
            (_, true) => Claim::Mine,
            _ => Claim::HeldUntil(row.get("locked_until")),
        };
        Ok(Claimed {
            state,
            attempts: row.get("attempts"),
        })
    }

    /// Pushes the lease; false when the fact is no longer ours.
    pub async fn heartbeat(
        &self,
        db: &impl GenericClient,
        until: Timestamp,
    ) -> Result<bool, tokio_postgres::Error> {
        Ok(db
            .execute(HEARTBEAT, &[&self.fact, &self.claim, &until])
            .await?
            == 1)
    }

    /// Marks the fact done inside `tx`; false when it is no longer ours.
    pub async fn mark_done(
        &self,
        tx: &impl GenericClient,
        now: Timestamp,
    ) -> Result<bool, tokio_postgres::Error> {
        Ok(tx
            .execute(MARK_DONE, &[&self.fact, &self.claim, &now])
            .await?
            == 1)
    }

    /// Gives the fact up (only while it is ours and running).
    pub async fn release(&self, db: &impl GenericClient) -> Result<bool, tokio_postgres::Error> {
        Ok(db.execute(RELEASE, &[&self.fact, &self.claim]).await? == 1)
    }
}

/// Deletes done facts finished before `before`.
pub async fn purge(
    db: &impl GenericClient,
    before: Timestamp,
) -> Result<u64, tokio_postgres::Error> {
    db.execute(PURGE, &[&before]).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(key: Option<&str>) -> ConsumedMessage {
        let text = json!({
            "message_id": "qmsg_1", "queue": "q", "payload": {}, "status": "in_flight",
            "delivery_count": 1, "receipt": "r", "created_at": "2026-07-26T12:00:00Z",
            "lease_expires_at": "2026-07-26T12:00:30Z", "idempotency_key": key,
        });
        // RawValue payloads deserialise from text only.
        serde_json::from_str(&text.to_string()).unwrap()
    }

    #[test]
    fn payload_then_key_then_message_id() {
        let m = message(Some("k"));
        assert_eq!(job_fact(&json!({"job_fact": "export:a"}), &m), "export:a");
        assert_eq!(job_fact(&json!({"job_fact": ""}), &m), "k");
        assert_eq!(job_fact(&json!({"job_fact": 7}), &m), "k");
        assert_eq!(job_fact(&json!([1]), &m), "k");
        assert_eq!(job_fact(&json!({}), &message(None)), "qmsg_1");
    }
}
