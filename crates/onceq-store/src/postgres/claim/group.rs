//! Claims of one queue at the same moment share one transaction.
//!
//! Under load every worker's consume is a claim, and each alone is a whole
//! transaction for a handful of rows: BEGIN with the hot settings, the
//! promotion of due messages, the claim, COMMIT and its flush; and claims
//! of one queue side by side walk the same head of its index, passing over
//! each other's locked rows. So while a claim of a queue is under way, the
//! claims that arrive for the same queue and lease length wait, and the
//! next transaction claims for all of them at once: their `max`es summed
//! (up to [`MAX_MESSAGES`]), the acks they carry done first in that
//! transaction, each claim handed its share in hand-out order (the first to
//! arrive takes the first messages). A claim that finds none under way
//! starts at once, in a task of its own; claims of other queues never wait
//! for it.
//!
//! Each claim is answered as it would be alone: its acks done before the
//! claim (an in-flight limit counts them gone), at most its `max`
//! messages, and a failure (the queue gone, the database unavailable)
//! given to every claim of the group, with nothing done. A group's leases
//! start at the latest `now` of its claims, so none starts before its call.
//!
//! A claim whose caller has gone before its group starts is left out; one
//! whose caller goes while its group runs has its messages leased, as a
//! claim answered to a caller who went away always had: they go out again
//! when the lease ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::SignedDuration;
use tokio::sync::oneshot;

use super::Claimer;
use crate::postgres::db::Db;
use crate::postgres::errors;
use crate::{AckOutcome, ClaimedMessage, MessageAck, MessageClaim, QueueRef, StoreError};

/// Messages one group claims at most: ten claims of the contract's ten. A
/// claim is never split: one that would pass it waits for the next group.
const MAX_MESSAGES: u32 = 100;

/// What one claim gets back: its acks' outcomes, its messages.
type Answer = crate::Result<(Vec<AckOutcome>, Vec<ClaimedMessage>)>;

struct Pending {
    acks: Vec<MessageAck>,
    claim: MessageClaim,
    reply: oneshot::Sender<Answer>,
}

/// Claims that may share a transaction: one queue, one lease length.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct GroupKey {
    queue: QueueRef,
    visibility_timeout: Option<SignedDuration>,
}

/// For each queue with a claim under way, the claims waiting for its next
/// group.
type Running = Arc<Mutex<HashMap<GroupKey, Vec<Pending>>>>;

/// The handle `PgStore` keeps.
pub(in crate::postgres) struct ClaimGroups {
    claimer: Claimer,
    running: Running,
}

impl ClaimGroups {
    /// `bound` is the store timeout.
    pub(in crate::postgres) fn new(db: Db, bound: Duration) -> ClaimGroups {
        ClaimGroups {
            claimer: Claimer {
                db,
                not_plain: Arc::default(),
                bound,
            },
            running: Running::default(),
        }
    }

    /// Claims carrying `acks` (a consume's acks of its previous batch),
    /// with whatever else of its queue is being claimed (see the module
    /// docs); `Unavailable` after the store timeout, waiting included.
    pub(in crate::postgres) async fn claim(
        &self,
        acks: Vec<MessageAck>,
        claim: MessageClaim,
    ) -> Answer {
        let key = GroupKey {
            queue: claim.queue.clone(),
            visibility_timeout: claim.visibility_timeout,
        };
        let (reply, answer) = oneshot::channel();
        let pending = Pending { acks, claim, reply };
        let first = {
            let mut running = self.running.lock().expect("claim groups");
            match running.get_mut(&key) {
                Some(waiting) => {
                    waiting.push(pending);
                    None
                }
                None => {
                    running.insert(key.clone(), Vec::new());
                    Some(pending)
                }
            }
        };
        if let Some(first) = first {
            // A task of its own, so that a caller going away never leaves
            // the claims waiting behind it unserved.
            let entry = Entry {
                running: self.running.clone(),
                key,
                ended: false,
            };
            tokio::spawn(groups(self.claimer.clone(), entry, first));
        }
        errors::within(self.claimer.bound, async {
            answer.await.map_err(|_| stopped())?
        })
        .await
    }

    /// Whether claims of `queue` go out with the full statement.
    #[cfg(test)]
    pub(in crate::postgres) fn known_not_plain(&self, queue: &QueueRef) -> bool {
        self.claimer.not_plain.contains(queue)
    }
}

fn stopped() -> StoreError {
    StoreError::internal("the claim group stopped")
}

/// A queue's entry in [`Running`], taken out when its groups end, or when
/// the task serving them does (a panic): the claims still waiting are then
/// answered [`stopped`] rather than left waiting for a group that never
/// comes.
struct Entry {
    running: Running,
    key: GroupKey,
    ended: bool,
}

impl Drop for Entry {
    fn drop(&mut self) {
        if !self.ended
            && let Ok(mut running) = self.running.lock()
        {
            running.remove(&self.key);
        }
    }
}

/// Claims for `first`, then for the claims that waited meanwhile, group by
/// group, until none is waiting.
async fn groups(claimer: Claimer, mut entry: Entry, first: Pending) {
    let mut group = vec![first];
    loop {
        claim_for(&claimer, group).await;
        let mut running = entry.running.lock().expect("claim groups");
        let waiting = running
            .get_mut(&entry.key)
            .expect("a queue's entry stays while its groups run");
        if waiting.is_empty() {
            // Under the lock: a claim that comes now starts a new task.
            running.remove(&entry.key);
            entry.ended = true;
            return;
        }
        group = next_group(waiting);
    }
}

/// The first claims of `waiting` that fit in [`MAX_MESSAGES`] together
/// (always at least one), in the order they came.
fn next_group(waiting: &mut Vec<Pending>) -> Vec<Pending> {
    let mut total = 0;
    let fit = waiting
        .iter()
        .take_while(|p| {
            total += p.claim.max;
            total <= MAX_MESSAGES
        })
        .count();
    waiting.drain(..fit.max(1)).collect()
}

/// Claims for every claim of `group` in one transaction, its acks first,
/// and answers each.
async fn claim_for(claimer: &Claimer, mut group: Vec<Pending>) {
    // A caller that gave up was answered already (by its timeout).
    group.retain(|p| !p.reply.is_closed());
    let Some(latest) = group.iter().map(|p| p.claim.now).max() else {
        return;
    };
    let claim = MessageClaim {
        queue: group[0].claim.queue.clone(),
        max: group.iter().map(|p| p.claim.max).sum(),
        visibility_timeout: group[0].claim.visibility_timeout,
        now: latest,
    };
    // What each claim carries and asks for, before its acks move.
    let shares: Vec<(usize, usize)> = group
        .iter()
        .map(|p| (p.acks.len(), p.claim.max as usize))
        .collect();
    let acks: Vec<MessageAck> = group
        .iter_mut()
        .flat_map(|p| std::mem::take(&mut p.acks))
        .collect();
    match claimer.claim(&acks, &claim).await {
        Ok((acked, claimed)) => {
            let (mut acked, mut claimed) = (acked.into_iter(), claimed.into_iter());
            for (p, (n_acks, max)) in group.into_iter().zip(shares) {
                let answer = (
                    acked.by_ref().take(n_acks).collect(),
                    claimed.by_ref().take(max).collect(),
                );
                // A caller that went away now: see the module docs.
                let _ = p.reply.send(Ok(answer));
            }
        }
        Err(e) => {
            let n = group.len();
            for (p, answer) in group.into_iter().zip(errors::shared(e, n)) {
                let _ = p.reply.send(answer);
            }
        }
    }
}
