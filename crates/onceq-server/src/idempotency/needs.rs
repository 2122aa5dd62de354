//! What a recorded answer needs of the key it is replayed to.
//!
//! A replay is answered only to a caller allowed to make the call now. The
//! guard checks the key (revoked, expired) and its actions before the call
//! ledger is reached, on every request, replays included; what it cannot
//! check is what the handler checks once it has read the body or looked a
//! record up: the queue patterns, the patterns `*` that account webhooks
//! need, and `peek` for the payloads an answer shows. So while the handler
//! runs, the [`Caller`] notes each of those checks that passed (its
//! [`Needs`]), the ledger records them beside the answer, and a replay
//! makes the same checks against the replaying key first: 403, as the call
//! itself would answer, never the stored answer.
//!
//! Why this and not the key's id in what a replay matches: keys are scoped
//! by (project, capability) (queue-api-2.md §4), so a retry made with a
//! rotated or second key of the project must still be the same call, not
//! a second purge; and a key can be re-scoped under its id, so the id
//! alone would not say the key may make the call *now*.

use std::collections::BTreeSet;

use onceq_store::LedgerAnswer;
use onceq_types::capability::PAYLOAD_ACTION;
use serde::{Deserialize, Serialize};

use crate::{ApiError, caller::Caller};

/// The name the needs are recorded under among the answer's headers (never
/// sent: a replay sets its own headers).
pub const RECORDED_AS: &str = "onceq-replay-needs";

/// The checks a call's handler made and passed.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Needs {
    /// The queues the call used, each allowed by the key's patterns.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub queues: BTreeSet<String>,
    /// The call needed patterns `*` (account webhooks hear every queue).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub every_queue: bool,
    /// The answer shows stored payloads (the key held `peek`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub payloads: bool,
}

impl Needs {
    /// The needs of an answer recorded before they were (an older server):
    /// the widest, so such an answer replays only to a key that may do
    /// anything the call could have needed.
    fn unknown() -> Self {
        Self {
            queues: BTreeSet::new(),
            every_queue: true,
            payloads: true,
        }
    }

    /// The header entry they are recorded as.
    pub fn recorded(&self) -> (String, String) {
        let json = serde_json::to_string(self).unwrap_or_else(|_| "{}".to_owned());
        (RECORDED_AS.to_owned(), json)
    }

    /// The needs recorded with `answer` (the widest when it has none, or
    /// unreadable ones).
    pub fn of(answer: &LedgerAnswer) -> Self {
        answer
            .headers
            .iter()
            .find(|(name, _)| name == RECORDED_AS)
            .and_then(|(_, v)| serde_json::from_str(v).ok())
            .unwrap_or_else(Self::unknown)
    }

    /// 403 unless `caller`'s key passes every check the call passed.
    pub fn check(&self, caller: &Caller) -> Result<(), ApiError> {
        if self.every_queue && !caller.scope.queues.is_any() {
            return Err(refused(format!(
                "the answer recorded under this Idempotency-Key is for a call that needs queue patterns *; this API key may only use queues {}",
                caller.scope.queues
            )));
        }
        for queue in &self.queues {
            if !caller.may_use(queue) {
                return Err(refused(format!(
                    "this API key may not use queue {queue:?} (its queues: {})",
                    caller.scope.queues
                )));
            }
        }
        if self.payloads && !caller.allows(PAYLOAD_ACTION) {
            return Err(refused(format!(
                "the answer recorded under this Idempotency-Key shows payloads; this API key may not read payloads (needs \"{}\")",
                PAYLOAD_ACTION.as_str()
            )));
        }
        Ok(())
    }
}

fn refused(message: String) -> ApiError {
    ApiError::forbidden(message).with_hint(
        "repeat the call with a key allowed to make it (the one that made it), or send a new Idempotency-Key",
    )
}
