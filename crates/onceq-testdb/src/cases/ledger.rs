//! `cases/ledger.json`: the request ledger's cases and the request
//! fingerprint's vectors.

use jiff::Timestamp;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::{RawCase, after, place};

/// The case table, as committed.
pub const JSON: &str = include_str!("../../../onceq/sql/cases/ledger.json");

/// The parsed file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    /// What `at` values count from.
    pub epoch: Timestamp,
    /// The fingerprint vectors.
    pub fingerprints: Vec<FingerprintVector>,
    /// The cases.
    pub cases: Vec<RawCase>,
}

/// One request and the fingerprint the toolkit computes for it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FingerprintVector {
    /// What the vector shows.
    pub note: String,
    /// The method.
    pub method: String,
    /// The route (as the layer sees it).
    pub route: String,
    /// The `Content-Type` sent; `application/json` when absent.
    pub content_type: Option<String>,
    /// The exact body bytes sent (UTF-8).
    pub body_text: String,
    /// The canonical JSON hashed, or `None` when the body is hashed raw.
    pub canonical: Option<String>,
    /// The fingerprint, lowercase hex.
    pub hex: String,
}

impl FingerprintVector {
    /// The fingerprint rebuilt from `canonical` (or the raw body) by the
    /// documented hashing rule — so the vector's `canonical` is checked
    /// against its `hex` as well.
    pub fn hex_of_canonical(&self) -> String {
        let (kind, body): (&[u8], &[u8]) = match &self.canonical {
            Some(c) => (b"json", c.as_bytes()),
            None => (b"raw", self.body_text.as_bytes()),
        };
        let mut h = Sha256::new();
        for p in [self.method.as_bytes(), self.route.as_bytes(), kind, body] {
            h.update((p.len() as u64).to_be_bytes());
            h.update(p);
        }
        hex::encode(h.finalize())
    }
}

/// The file, parsed (panics when it does not parse: every runner fails).
pub fn file() -> File {
    serde_json::from_str(JSON).expect("cases/ledger.json does not parse")
}

/// A claim, as a step asks it.
#[derive(Debug, Clone)]
pub struct ClaimArgs {
    /// The scope.
    pub scope: String,
    /// The key.
    pub key: String,
    /// SHA-256 of the step's body label.
    pub fingerprint: [u8; 32],
    /// The claim's token.
    pub token: String,
    /// The claim's time.
    pub now: Timestamp,
    /// `now + lease`.
    pub locked_until: Timestamp,
    /// `now + retention`.
    pub expires_at: Timestamp,
}

/// A completion, as a step asks it.
#[derive(Debug, Clone)]
pub struct CompleteArgs {
    /// The scope.
    pub scope: String,
    /// The key.
    pub key: String,
    /// The token of the claim completing.
    pub token: String,
    /// The answer's status.
    pub status: u16,
    /// The answer's headers, `[name, value]` in order.
    pub headers: Vec<(String, String)>,
    /// The answer's body.
    pub body: Vec<u8>,
    /// When.
    pub now: Timestamp,
}

/// What a claim found, in the runners' common form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The caller holds the key.
    Claimed,
    /// Held by another request until then.
    InFlight {
        /// Its lease's end.
        locked_until: Timestamp,
    },
    /// The same key with another body.
    Mismatch,
    /// Answered before.
    Completed {
        /// Stored status.
        status: u16,
        /// Stored headers.
        headers: Vec<(String, String)>,
        /// Stored body.
        body: Vec<u8>,
    },
}

/// What the HTTP layer answers for an outcome.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Http {
    /// The status.
    pub status: u16,
    /// `Retry-After`, in seconds, when sent.
    #[serde(default)]
    pub retry_after: Option<u64>,
    /// Whether it is a replay of a recorded answer (`Idempotent-Replayed`).
    #[serde(default)]
    pub replay: bool,
}

/// One runner's ledger: the calls a case makes.
#[allow(async_fn_in_trait)]
pub trait Driver {
    /// Claims (the claim statement, then the read and the judge).
    async fn claim(&mut self, c: &ClaimArgs) -> Result<Outcome, String>;
    /// Records an answer; whether it applied.
    async fn complete(&mut self, c: &CompleteArgs) -> Result<bool, String>;
    /// Releases a claim; whether it applied.
    async fn release(
        &mut self,
        scope: &str,
        key: &str,
        token: &str,
        now: Timestamp,
    ) -> Result<bool, String>;
    /// One purge statement: at most `limit` expired entries.
    async fn purge(&mut self, now: Timestamp, limit: i64) -> Result<u64, String>;
    /// The HTTP answer this runner's layer gives for a claim's outcome;
    /// `None` when this runner has no HTTP layer (the store suite), and
    /// then the steps' `http` expectations are another runner's.
    fn http(&self, outcome: &Outcome, now: Timestamp) -> Option<Http> {
        let _ = (outcome, now);
        None
    }
}

#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum Step {
    Claim {
        at: f64,
        #[serde(default = "default_scope")]
        scope: String,
        key: String,
        body: String,
        token: String,
        lease: f64,
        retention: f64,
        expect: Expect,
        http: Option<Http>,
    },
    Complete {
        at: f64,
        #[serde(default = "default_scope")]
        scope: String,
        key: String,
        token: String,
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
        expect: Applied,
    },
    Release {
        at: f64,
        #[serde(default = "default_scope")]
        scope: String,
        key: String,
        token: String,
        expect: Applied,
    },
    Purge {
        at: f64,
        limit: i64,
        expect: Deleted,
    },
}

fn default_scope() -> String {
    "s".to_owned()
}

#[derive(Debug, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case", deny_unknown_fields)]
enum Expect {
    Claimed,
    InFlight {
        locked_until: f64,
    },
    Mismatch,
    Completed {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
}

/// `{"applied": bool}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Applied {
    pub applied: bool,
}

/// `{"deleted": n}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Deleted {
    pub deleted: u64,
}

/// The fingerprint a step's body label stands for.
pub fn label_fingerprint(label: &str) -> [u8; 32] {
    Sha256::digest(label.as_bytes()).into()
}

/// Runs every case, each on a driver from `fresh` (a fresh, empty table);
/// panics naming the case and step that disagreed. Returns how many
/// `http` expectations were checked (0 for a runner without a layer).
pub async fn run<D, F, Fut>(mut fresh: F) -> usize
where
    D: Driver,
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = D>,
{
    let file = file();
    let mut http_checked = 0;
    for case in &file.cases {
        let mut d = fresh().await;
        for (i, raw) in case.steps.iter().enumerate() {
            let at = place(&case.name, i, raw);
            let step: Step = serde_json::from_value(raw.clone())
                .unwrap_or_else(|e| panic!("{at}: not a step this runner knows: {e}"));
            http_checked += run_step(&mut d, file.epoch, step, &at).await;
        }
    }
    http_checked
}

async fn run_step<D: Driver>(d: &mut D, epoch: Timestamp, step: Step, at: &str) -> usize {
    match step {
        Step::Claim {
            at: t,
            scope,
            key,
            body,
            token,
            lease,
            retention,
            expect,
            http,
        } => {
            let now = after(epoch, t);
            let args = ClaimArgs {
                scope,
                key,
                fingerprint: label_fingerprint(&body),
                token,
                now,
                locked_until: after(epoch, t + lease),
                expires_at: after(epoch, t + retention),
            };
            let got = d
                .claim(&args)
                .await
                .unwrap_or_else(|e| panic!("{at}: claim failed: {e}"));
            let want = match expect {
                Expect::Claimed => Outcome::Claimed,
                Expect::InFlight { locked_until } => Outcome::InFlight {
                    locked_until: after(epoch, locked_until),
                },
                Expect::Mismatch => Outcome::Mismatch,
                Expect::Completed {
                    status,
                    headers,
                    body,
                } => Outcome::Completed {
                    status,
                    headers,
                    body: body.into_bytes(),
                },
            };
            assert_eq!(got, want, "{at}: the claim's outcome");
            match (http, d.http(&got, now)) {
                (Some(want), Some(got)) => {
                    assert_eq!(got, want, "{at}: the HTTP answer");
                    1
                }
                _ => 0,
            }
        }
        Step::Complete {
            at: t,
            scope,
            key,
            token,
            status,
            headers,
            body,
            expect,
        } => {
            let args = CompleteArgs {
                scope,
                key,
                token,
                status,
                headers,
                body: body.into_bytes(),
                now: after(epoch, t),
            };
            let got = d
                .complete(&args)
                .await
                .unwrap_or_else(|e| panic!("{at}: complete failed: {e}"));
            assert_eq!(got, expect.applied, "{at}: whether complete applied");
            0
        }
        Step::Release {
            at: t,
            scope,
            key,
            token,
            expect,
        } => {
            let got = d
                .release(&scope, &key, &token, after(epoch, t))
                .await
                .unwrap_or_else(|e| panic!("{at}: release failed: {e}"));
            assert_eq!(got, expect.applied, "{at}: whether release applied");
            0
        }
        Step::Purge {
            at: t,
            limit,
            expect,
        } => {
            let got = d
                .purge(after(epoch, t), limit)
                .await
                .unwrap_or_else(|e| panic!("{at}: purge failed: {e}"));
            assert_eq!(got, expect.deleted, "{at}: entries purged");
            0
        }
    }
}
