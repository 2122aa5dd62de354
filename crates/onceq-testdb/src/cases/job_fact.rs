//! `cases/job_fact.json`: the job facts' cases.

use jiff::Timestamp;
use serde::Deserialize;

use super::{RawCase, after, ledger::Applied, ledger::Deleted, place};

/// The case table, as committed.
pub const JSON: &str = include_str!("../../../onceq/sql/cases/job_fact.json");

/// The parsed file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    /// What `at` values count from.
    pub epoch: Timestamp,
    /// The cases.
    pub cases: Vec<RawCase>,
}

/// What a claim found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// Ours for this attempt.
    Mine,
    /// Done already.
    Done,
    /// Another attempt's until its lease ends.
    Held {
        /// The lease's end.
        locked_until: Timestamp,
    },
}

/// A claim's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed {
    /// What it found.
    pub state: State,
    /// The fact's attempts.
    pub attempts: i32,
}

/// One runner's job facts: the calls a case makes.
#[allow(async_fn_in_trait)]
pub trait Driver {
    /// Claims `fact` as `owner` with token `claim`, lease until `until`.
    async fn claim(
        &mut self,
        fact: &str,
        owner: &str,
        claim: &str,
        now: Timestamp,
        until: Timestamp,
    ) -> Result<Claimed, String>;
    /// Pushes the lease; whether it applied.
    async fn heartbeat(&mut self, fact: &str, claim: &str, until: Timestamp)
    -> Result<bool, String>;
    /// Marks done in a transaction, committed or (`rollback`) rolled back;
    /// whether the statement applied inside it.
    async fn mark_done(
        &mut self,
        fact: &str,
        claim: &str,
        now: Timestamp,
        rollback: bool,
    ) -> Result<bool, String>;
    /// Releases; whether it applied.
    async fn release(&mut self, fact: &str, claim: &str) -> Result<bool, String>;
    /// Deletes done facts finished before `before`.
    async fn purge(&mut self, before: Timestamp) -> Result<u64, String>;
}

#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum Step {
    Claim {
        at: f64,
        fact: String,
        owner: String,
        claim: String,
        lease: f64,
        expect: Expect,
    },
    Heartbeat {
        at: f64,
        fact: String,
        claim: String,
        lease: f64,
        expect: Applied,
    },
    MarkDone {
        at: f64,
        fact: String,
        claim: String,
        #[serde(default)]
        rollback: bool,
        expect: Applied,
    },
    Release {
        #[allow(dead_code)]
        at: f64,
        fact: String,
        claim: String,
        expect: Applied,
    },
    Purge {
        #[allow(dead_code)]
        at: f64,
        before: f64,
        expect: Deleted,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    state: String,
    locked_until: Option<f64>,
    attempts: Option<i32>,
}

/// The file, parsed (panics when it does not parse: every runner fails).
pub fn file() -> File {
    serde_json::from_str(JSON).expect("cases/job_fact.json does not parse")
}

/// Runs every case, each on a driver from `fresh` (an empty table);
/// panics naming the case and step that disagreed.
pub async fn run<D, F, Fut>(mut fresh: F)
where
    D: Driver,
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = D>,
{
    let file = file();
    for case in &file.cases {
        let mut d = fresh().await;
        for (i, raw) in case.steps.iter().enumerate() {
            let at = place(&case.name, i, raw);
            let step: Step = serde_json::from_value(raw.clone())
                .unwrap_or_else(|e| panic!("{at}: not a step this runner knows: {e}"));
            run_step(&mut d, file.epoch, step, &at).await;
        }
    }
}

async fn run_step<D: Driver>(d: &mut D, epoch: Timestamp, step: Step, at: &str) {
    let fail = |what: &str, e: String| -> ! { panic!("{at}: {what} failed: {e}") };
    match step {
        Step::Claim {
            at: t,
            fact,
            owner,
            claim,
            lease,
            expect,
        } => {
            let got = d
                .claim(&fact, &owner, &claim, after(epoch, t), after(epoch, t + lease))
                .await
                .unwrap_or_else(|e| fail("claim", e));
            let want = match (expect.state.as_str(), expect.locked_until) {
                ("mine", None) => State::Mine,
                ("done", None) => State::Done,
                ("held", Some(until)) => State::Held {
                    locked_until: after(epoch, until),
                },
                (s, u) => panic!("{at}: not an expectation: state {s:?}, locked_until {u:?}"),
            };
            assert_eq!(got.state, want, "{at}: the claim's state");
            if let Some(n) = expect.attempts {
                assert_eq!(got.attempts, n, "{at}: the fact's attempts");
            }
        }
        Step::Heartbeat {
            at: t,
            fact,
            claim,
            lease,
            expect,
        } => {
            let got = d
                .heartbeat(&fact, &claim, after(epoch, t + lease))
                .await
                .unwrap_or_else(|e| fail("heartbeat", e));
            assert_eq!(got, expect.applied, "{at}: whether the heartbeat applied");
        }
        Step::MarkDone {
            at: t,
            fact,
            claim,
            rollback,
            expect,
        } => {
            let got = d
                .mark_done(&fact, &claim, after(epoch, t), rollback)
                .await
                .unwrap_or_else(|e| fail("mark_done", e));
            assert_eq!(got, expect.applied, "{at}: whether mark_done applied");
        }
        Step::Release {
            fact,
            claim,
            expect,
            ..
        } => {
            let got = d
                .release(&fact, &claim)
                .await
                .unwrap_or_else(|e| fail("release", e));
            assert_eq!(got, expect.applied, "{at}: whether release applied");
        }
        Step::Purge { before, expect, .. } => {
            let got = d
                .purge(after(epoch, before))
                .await
                .unwrap_or_else(|e| fail("purge", e));
            assert_eq!(got, expect.deleted, "{at}: facts purged");
        }
    }
}
