//! The call ledger: the server's record of each `Idempotency-Key` sent to
//! a mutating call (queue-api-2.md §4), so a retry is answered from it.
//! A key means one thing per [`LedgerKey`] (project, capability). The
//! table and its statements are the shared request ledger's
//! (`crates/onceq/sql/ledger/`, `rules/ledger.rs` for the scope).

use jiff::Timestamp;

/// Names one entry: the key within its project and capability.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerKey {
    /// The caller's project.
    pub project: String,
    /// The capability id called (`queue.create`, …).
    pub capability: String,
    /// The `Idempotency-Key`, 1 to 255 bytes.
    pub key: String,
}

/// `ledger_claim`: take the key for one request, or say why not.
#[derive(Debug, Clone)]
pub struct LedgerClaim {
    /// Which entry.
    pub key: LedgerKey,
    /// SHA-256 of what was asked (method, path, canonical body).
    pub fingerprint: [u8; 32],
    /// Names this claim: `ledger_complete` and `ledger_release` only touch
    /// the entry while it still carries it.
    pub token: String,
    /// Until then a retry is told the request is in flight.
    pub locked_until: Timestamp,
    /// After this the entry counts as absent (and is purged).
    pub expires_at: Timestamp,
    /// The caller's clock.
    pub now: Timestamp,
}

/// A recorded answer (never a server error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerAnswer {
    /// Its HTTP status, 100..=499.
    pub status: u16,
    /// Its headers, `(name, value)` in order. The server records one, the
    /// checks a replay makes first (`onceq-replay-needs`; a replay sets
    /// its own headers); the shared ledger keeps them for the toolkit.
    pub headers: Vec<(String, String)>,
    /// Its whole body.
    pub body: Vec<u8>,
}

/// What a claim found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LedgerClaimOutcome {
    /// The caller holds the key (a new entry, an expired one, or an
    /// abandoned claim of the same request taken over): run the call.
    Claimed,
    /// The key was used with another fingerprint.
    Mismatch,
    /// Another request holds the key; its lease runs until then.
    InFlight {
        /// End of the holder's lease.
        locked_until: Timestamp,
    },
    /// Answered before: replay this.
    Completed(LedgerAnswer),
}

/// `ledger_complete`: record the answer of the claim named `token`.
#[derive(Debug, Clone)]
pub struct LedgerComplete {
    /// Which entry.
    pub key: LedgerKey,
    /// The claim's token.
    pub token: String,
    /// What the call answered (status below 500).
    pub answer: LedgerAnswer,
    /// The caller's clock.
    pub now: Timestamp,
}

/// `ledger_release`: forget the claim named `token` (its call changed
/// nothing), so a retry runs at once.
#[derive(Debug, Clone)]
pub struct LedgerRelease {
    /// Which entry.
    pub key: LedgerKey,
    /// The claim's token.
    pub token: String,
}

/// `ledger_usage`: what a project's entries hold (the server's
/// per-project bound on the call ledger, docs/security.md). Counters the
/// store keeps in the transaction of every change to an entry (migration
/// V19), so reading them costs the same whatever the project keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LedgerUsage {
    /// Entries kept, answered or in flight, until purged (an entry past
    /// its window counts until the purger's next pass removes it).
    pub entries: u64,
    /// Bytes of their recorded answers' bodies.
    pub bytes: u64,
}
