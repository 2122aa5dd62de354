//! The shared case table (`sql/cases/ledger.json`) on both toolkit ledgers,
//! its `http` expectations through the layer's own mapping
//! (`IdempotencyLayer::answer_for`); and the fingerprint vectors through
//! `Fingerprint::of_request`.

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use jiff::Timestamp;
use onceq::idempotency::{
    Claim, ClaimOutcome, Fingerprint, IdempotencyLayer, Ledger, PgLedger, SqliteLedger,
    StoredResponse,
};
use onceq_testdb::cases::ledger::{self, ClaimArgs, CompleteArgs, Http, Outcome};

/// A toolkit ledger under the case table, and what keeps its table alive.
struct Toolkit<L> {
    ledger: Arc<L>,
    layer: IdempotencyLayer,
    /// The raw outcome of the last claim, for the layer's mapping.
    last: Option<ClaimOutcome>,
    _keep: Box<dyn std::any::Any + Send>,
}

/// One `purge.sql`, which each backend exposes as `purge_batch`.
trait PurgeBatch {
    async fn batch(&self, now: Timestamp, limit: i64) -> Result<u64, String>;
}

impl PurgeBatch for PgLedger {
    async fn batch(&self, now: Timestamp, limit: i64) -> Result<u64, String> {
        self.purge_batch(now, limit).await.map_err(|e| e.to_string())
    }
}

impl PurgeBatch for SqliteLedger {
    async fn batch(&self, now: Timestamp, limit: i64) -> Result<u64, String> {
        self.purge_batch(now, limit).await.map_err(|e| e.to_string())
    }
}

impl<L: Ledger> Toolkit<L> {
    fn new(ledger: L, keep: impl std::any::Any + Send) -> Self {
        let ledger = Arc::new(ledger);
        Self {
            layer: IdempotencyLayer::new(ledger.clone()),
            ledger,
            last: None,
            _keep: Box::new(keep),
        }
    }
}

fn pairs(h: &HeaderMap) -> Vec<(String, String)> {
    h.iter()
        .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap().to_owned()))
        .collect()
}

impl<L: Ledger + PurgeBatch> ledger::Driver for Toolkit<L> {
    async fn claim(&mut self, c: &ClaimArgs) -> Result<Outcome, String> {
        let claim = Claim {
            scope: c.scope.clone(),
            key: c.key.clone(),
            fingerprint: Fingerprint::from_bytes(c.fingerprint),
            token: c.token.clone(),
            locked_until: c.locked_until,
            expires_at: c.expires_at,
        };
        let got = self
            .ledger
            .claim(&claim, c.now)
            .await
            .map_err(|e| e.to_string())?;
        self.last = Some(got.clone());
        Ok(match got {
            ClaimOutcome::Claimed => Outcome::Claimed,
            ClaimOutcome::Mismatch => Outcome::Mismatch,
            ClaimOutcome::InFlight { locked_until } => Outcome::InFlight { locked_until },
            ClaimOutcome::Completed(r) => Outcome::Completed {
                status: r.status.as_u16(),
                headers: pairs(&r.headers),
                body: r.body.to_vec(),
            },
            other => return Err(format!("an outcome the table does not know: {other:?}")),
        })
    }

    async fn complete(&mut self, c: &CompleteArgs) -> Result<bool, String> {
        let mut headers = HeaderMap::new();
        for (n, v) in &c.headers {
            headers.append(
                HeaderName::from_bytes(n.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        let answer = StoredResponse::new(
            StatusCode::from_u16(c.status).unwrap(),
            headers,
            Bytes::from(c.body.clone()),
        );
        self.ledger
            .complete(&c.scope, &c.key, &c.token, &answer, c.now)
            .await
            .map_err(|e| e.to_string())
    }

    async fn release(
        &mut self,
        scope: &str,
        key: &str,
        token: &str,
        now: Timestamp,
    ) -> Result<bool, String> {
        self.ledger
            .release(scope, key, token, now)
            .await
            .map_err(|e| e.to_string())
    }

    async fn purge(&mut self, now: Timestamp, limit: i64) -> Result<u64, String> {
        self.ledger.batch(now, limit).await
    }

    fn http(&self, _: &Outcome, now: Timestamp) -> Option<Http> {
        let res = self.layer.answer_for(self.last.clone()?, now)?;
        let header = |name: &str| res.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
        Some(Http {
            status: res.status().as_u16(),
            retry_after: header(header::RETRY_AFTER.as_str()).map(|s| s.parse().unwrap()),
            replay: header("idempotent-replayed").as_deref() == Some("true"),
        })
    }
}

#[tokio::test]
async fn ledger_cases_on_postgres() {
    let checked = ledger::run(|| async {
        let db = onceq_testdb::fresh_database().await;
        let ledger = PgLedger::new(crate::harness::pool(&db.url)).await.unwrap();
        Toolkit::new(ledger, db)
    })
    .await;
    assert!(checked > 0, "the http expectations ran");
}

#[tokio::test]
async fn ledger_cases_on_sqlite() {
    let checked = ledger::run(|| async {
        let dir = tempfile::tempdir().unwrap();
        let ledger = SqliteLedger::open(dir.path().join("ledger.db"))
            .await
            .unwrap();
        Toolkit::new(ledger, dir)
    })
    .await;
    assert!(checked > 0, "the http expectations ran");
}

#[test]
fn fingerprint_vectors() {
    let file = ledger::file();
    assert!(!file.fingerprints.is_empty());
    for v in &file.fingerprints {
        let mut headers = HeaderMap::new();
        let ct = v.content_type.as_deref().unwrap_or("application/json");
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_str(ct).unwrap());
        let method = Method::from_bytes(v.method.as_bytes()).unwrap();
        let fp = Fingerprint::of_request(&method, &v.route, &headers, v.body_text.as_bytes());
        let hex = hex::encode(fp.as_bytes());
        assert_eq!(hex, v.hex, "fingerprint vector {:?}", v.note);
        assert_eq!(
            v.hex_of_canonical(),
            v.hex,
            "fingerprint vector {:?}: its `canonical` is not what was hashed",
            v.note
        );
    }
}
