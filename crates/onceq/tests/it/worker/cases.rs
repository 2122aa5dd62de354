//! The shared case table (`sql/cases/job_fact.json`) on PostgreSQL, through
//! the worker's own job-fact calls (`onceq::worker::fact`).

use jiff::Timestamp;
use onceq::worker::fact::{self, Claim, Hold};
use onceq_testdb::cases::job_fact::{self, Claimed, State};

/// A fresh database with the facts' table, and its connection.
struct Facts {
    db: tokio_postgres::Client,
    _keep: onceq_testdb::TestDatabase,
}

fn err(e: tokio_postgres::Error) -> String {
    e.to_string()
}

impl job_fact::Driver for Facts {
    async fn claim(
        &mut self,
        fact: &str,
        owner: &str,
        claim: &str,
        now: Timestamp,
        until: Timestamp,
    ) -> Result<Claimed, String> {
        let c = Hold { fact, claim }
            .claim(&self.db, owner, now, until)
            .await
            .map_err(err)?;
        let state = match c.state {
            Claim::Mine => State::Mine,
            Claim::Done => State::Done,
            Claim::HeldUntil(locked_until) => State::Held { locked_until },
            other => return Err(format!("a state the table does not know: {other:?}")),
        };
        Ok(Claimed {
            state,
            attempts: c.attempts,
        })
    }

    async fn heartbeat(
        &mut self,
        fact: &str,
        claim: &str,
        until: Timestamp,
    ) -> Result<bool, String> {
        Hold { fact, claim }
            .heartbeat(&self.db, until)
            .await
            .map_err(err)
    }

    async fn mark_done(
        &mut self,
        fact: &str,
        claim: &str,
        now: Timestamp,
        rollback: bool,
    ) -> Result<bool, String> {
        let tx = self.db.transaction().await.map_err(err)?;
        let applied = Hold { fact, claim }.mark_done(&tx, now).await.map_err(err)?;
        if rollback {
            tx.rollback().await.map_err(err)?;
        } else {
            tx.commit().await.map_err(err)?;
        }
        Ok(applied)
    }

    async fn release(&mut self, fact: &str, claim: &str) -> Result<bool, String> {
        Hold { fact, claim }.release(&self.db).await.map_err(err)
    }

    async fn purge(&mut self, before: Timestamp) -> Result<u64, String> {
        fact::purge(&self.db, before).await.map_err(err)
    }
}

#[tokio::test]
async fn job_fact_cases_on_postgres() {
    job_fact::run(|| async {
        let keep = onceq_testdb::fresh_database().await;
        let (mut db, conn) = tokio_postgres::connect(&keep.url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        fact::ensure_schema(&mut db).await.unwrap();
        Facts { db, _keep: keep }
    })
    .await;
}
