//! The shared case table (`crates/onceq/sql/cases/ledger.json`) through
//! the server: its store's ledger (the embedded store, a fresh one per
//! case; the store suite's own driver) and its own HTTP mapping
//! (`idempotency::answer_for`), so the `http` expectations — replay, 422,
//! 409 with the exact `Retry-After` — hold for the server as they do for
//! the toolkit's layer.

#[path = "../../../../onceq-store/tests/it/ledger_driver.rs"]
mod ledger_driver;

use jiff::Timestamp;
use onceq_server::idempotency::answer_for;
use onceq_store::LedgerClaimOutcome;
use onceq_testdb::cases::ledger::{self, Http};

use ledger_driver::StoreCases;

fn mapping(outcome: LedgerClaimOutcome, now: Timestamp) -> Option<Http> {
    let res = answer_for(outcome, "k", "queue.create", now)?;
    Some(Http::read(res.status().as_u16(), |name| {
        res.headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    }))
}

#[tokio::test]
async fn ledger_cases_through_the_servers_mapping() {
    let checked = ledger::run(|| async {
        let dir = tempfile::tempdir().unwrap();
        let store = onceq_store::open(None, dir.path()).await.unwrap();
        StoreCases::new(store, dir, Some(mapping))
    })
    .await;
    assert!(checked > 0, "the http expectations ran");
}
