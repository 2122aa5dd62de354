//! A queue's rules, written once: pure functions both backends call, so the
//! backends cannot drift apart on what a queue does (the conformance suite
//! checks that they do what these say).
//!
//! - [`queue_create`]: which dead-letter queue a create names, when an
//!   existing queue answers it, which queues may be a dead-letter queue.
//! - [`queue_update`]: what an update may change (never the type) and the
//!   dead-letter queue it names, judged by `queue_create`'s rules.
//! - [`attempts`]: a message's history of ended hand-outs, bounded, and
//!   the text a lease expiry writes.
//! - [`finished`]: finished messages a queue keeps, and which acks keep.
//! - [`dead_letter`]: how a failed hand-out ends: requeued, dead-lettered or
//!   dropped.
//! - [`backoff`]: the delay a queue's retry backoff gives a failed
//!   hand-out.
//! - [`limits`]: how many messages a claim may take under a queue's
//!   `max_in_flight` and `rate_per_sec` (its token bucket).
//! - [`visibility`]: when a published or requeued message becomes visible,
//!   and a due delayed message reported as available.
//! - [`dedupe`]: how each message of a publish resolves against its
//!   idempotency key, and the answers that follow.
//! - [`hand_out`]: which published message may be handed straight to a
//!   waiting consumer.
//! - [`ledger`]: what a call-ledger entry means for a claim of its key.
//! - [`page`]: `message_list`'s pages, read one row past the end.
//!
//! Where SQL keeps a copy of a rule (a statement deciding for itself saves
//! a round trip per row, e.g. `postgres/sql/lease_expire.sql`), the SQL
//! names the function it mirrors.

pub(crate) mod attempts;
pub(crate) mod backoff;
pub(crate) mod dead_letter;
pub(crate) mod dedupe;
pub(crate) mod finished;
pub(crate) mod hand_out;
pub(crate) mod ledger;
pub(crate) mod limits;
pub(crate) mod page;
pub(crate) mod queue_create;
pub(crate) mod queue_update;
pub(crate) mod visibility;
