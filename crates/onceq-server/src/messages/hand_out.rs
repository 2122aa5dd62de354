//! A publish's messages handed straight to consumers waiting on its queue
//! here: each waiting consumer leaves an offer ([`crate::wakeup::Offer`]),
//! a publish takes as many as it has messages that could be handed out
//! (no delay), asks the store to store those handed out
//! ([`onceq_store::HandOut`]: in the publish's own transaction, where the
//! queue allows it), and sends each consumer its messages once the
//! publish committed. The consumer answers with them: no claim, no second
//! transaction, no second round trip to the store.
//!
//! Nothing is lost on the way. A message is handed out only in the
//! transaction that stores it, under a lease like a claim's: if the
//! consumer went away before reading it, it is handed back
//! ([`super::Messages::hand_back`]: available again, its delivery
//! uncounted; before the publish answers when the consumer was gone by
//! the time it committed); if this server dies first, its lease runs out
//! and it is delivered again, as after any claim whose answer was lost.
//! A publish that took offers runs on a task of its own
//! (`Messages::publish`), so its publisher going away halfway cannot
//! strand what it handed out.
//!
//! An offer may carry its consume's acks ([`crate::wakeup::Offer::acks`]):
//! the publish does them in its transaction
//! ([`onceq_store::Store::message_publish_acking`]), or, when the store did
//! not (the publish was stored apart from its group, or failed), itself,
//! offer by offer, before it answers the offers. Either way each offer
//! that carried acks is told how they went.

use onceq_store::{
    AckOutcome, ClaimedMessage, HandOut, LeaseRef, MessageAck, NewMessage, PublishOutcome,
    QueueRef, Result,
};

use super::Messages;
use crate::AppState;
use crate::wakeup::{Handed, LeftBehind, Offer};

/// The offers a publish took, with the messages it asked to hand to each.
#[derive(Default)]
pub(super) struct Assigned {
    offers: Vec<(Offer, Vec<usize>)>,
    /// By message index: what its consumer's answer needs that the
    /// publish's outcome does not carry (its idempotency key and headers).
    kept: Vec<Option<(Option<String>, Option<String>)>>,
    /// By offer: how the acks it carried went (`None`: it carried none),
    /// once [`Assigned::settle_acks`] knows.
    acked: Vec<Option<Result<Vec<bool>>>>,
}

/// Takes the offers waiting on `queue` for `messages` and marks each
/// message that may go to one ([`NewMessage::hand_out`]), spreading them
/// over the offers in turn, each up to its `max`.
pub(super) fn assign(state: &AppState, queue: &QueueRef, messages: &mut [NewMessage]) -> Assigned {
    let eligible = messages.iter().filter(|m| m.delay.is_zero()).count();
    if eligible == 0 {
        return Assigned::default();
    }
    let offers = state
        .wakeups
        .take_offers(&queue.project, &queue.queue, eligible);
    if offers.is_empty() {
        return Assigned::default();
    }
    let mut offers: Vec<(Offer, Vec<usize>)> =
        offers.into_iter().map(|o| (o, Vec::new())).collect();
    let mut kept = vec![None; messages.len()];
    let mut next = 0;
    for (i, m) in messages.iter_mut().enumerate() {
        if !m.delay.is_zero() {
            continue;
        }
        let n = offers.len();
        let Some(at) = (0..n)
            .map(|d| (next + d) % n)
            .find(|&j| offers[j].1.len() < offers[j].0.max as usize)
        else {
            break;
        };
        m.hand_out = Some(HandOut {
            visibility_timeout: offers[at].0.visibility_timeout,
        });
        offers[at].1.push(i);
        kept[i] = Some((m.idempotency_key.clone(), m.headers.clone()));
        next = at + 1;
    }
    Assigned {
        offers,
        kept,
        acked: Vec::new(),
    }
}

impl Assigned {
    /// No offer was taken.
    pub(super) fn is_empty(&self) -> bool {
        self.offers.is_empty()
    }

    /// The acks the offers carry, in offer order, for the store to do in
    /// the publish's transaction: a copy, each offer keeps its own until
    /// [`Assigned::settle_acks`].
    pub(super) fn carried_acks(&self) -> Vec<MessageAck> {
        let carried = self.offers.iter().flat_map(|(o, _)| o.acks.iter());
        carried.cloned().collect()
    }

    /// Records how each offer's acks went: `acked` is the store's answer
    /// for [`Assigned::carried_acks`] (counted here, once); without one,
    /// each offer's acks are done here, as a consume's batch of acks.
    pub(super) async fn settle_acks(
        &mut self,
        messages: Messages<'_>,
        queue: &QueueRef,
        acked: Option<Vec<AckOutcome>>,
    ) {
        let (project, name) = (&queue.project, &queue.queue);
        if let Some(outcomes) = &acked
            && let Some(first) = self.offers.iter().find_map(|(o, _)| o.acks.first())
        {
            messages.count_acks(project, name, outcomes, first.now);
            let carried = outcomes.iter().filter(|o| o.acked).count();
            messages.state.metrics.acks_carried(project, name, carried);
        }
        let mut outcomes = acked.map(Vec::into_iter);
        let mut settled = Vec::with_capacity(self.offers.len());
        for (offer, _) in &mut self.offers {
            let acks = std::mem::take(&mut offer.acks);
            if acks.is_empty() {
                settled.push(None);
                continue;
            }
            settled.push(Some(match outcomes.as_mut() {
                Some(all) => Ok(all.by_ref().take(acks.len()).map(|o| o.acked).collect()),
                None => messages.ack_many(project, name, acks).await,
            }));
        }
        self.acked = settled;
    }

    /// Sends each offer the messages the store handed out to it
    /// (`outcomes`, in the publish's order; none when it failed) and how
    /// its acks went. Returns how many offers got no message (each wakes
    /// its consumer to claim: dropped here, or sent no message), and the
    /// messages of consumers that went away since the publish took their
    /// offer, for the publish to hand back before it answers
    /// ([`hand_back_now`]).
    pub(super) fn deliver(
        self,
        messages: Messages<'_>,
        queue: &QueueRef,
        outcomes: &[PublishOutcome],
    ) -> (usize, Vec<ClaimedMessage>) {
        let Assigned {
            offers,
            mut kept,
            acked,
        } = self;
        let mut acked = acked.into_iter();
        let (mut unused, mut handed_any, mut refused) = (0, false, false);
        let mut unsent = Vec::new();
        for (offer, indexes) in offers {
            let acked = acked.next().flatten();
            refused |= indexes.iter().any(|&i| {
                outcomes
                    .get(i)
                    .is_some_and(|o| !o.replay && o.handed_out.is_none())
            });
            let handed: Vec<ClaimedMessage> = indexes
                .into_iter()
                .filter_map(|i| {
                    let o = outcomes.get(i)?;
                    let lease = o.handed_out.clone()?;
                    let (idempotency_key, headers) = kept[i].take()?;
                    Some(ClaimedMessage {
                        message_id: o.message_id.clone(),
                        payload: o.payload.clone(),
                        delivery_count: 1,
                        receipt: lease.receipt,
                        created_at: o.created_at,
                        lease_expires_at: lease.lease_expires_at,
                        idempotency_key,
                        headers,
                    })
                })
                .collect();
            handed_any |= !handed.is_empty();
            if handed.is_empty() {
                unused += 1;
                if acked.is_none() {
                    continue;
                }
            }
            let sent = Handed {
                messages: handed,
                acked,
            };
            if let Err(sent) = offer.to.send(sent) {
                unsent.extend(sent.messages);
            }
        }
        if handed_any || refused {
            let wakeups = &messages.state.wakeups;
            wakeups.handed_out(&queue.project, &queue.queue, handed_any);
        }
        (unused, unsent)
    }
}

/// What an offer's consumer that went away leaves behind goes on in the
/// background: its unread messages handed back, its acks done (a consume's
/// acks are done even if its caller stops waiting for the answer, as they
/// were when the consume made them in its first claim).
pub(crate) fn left_behind(state: &AppState, queue: &QueueRef) -> LeftBehind {
    let (state, queue) = (state.clone(), queue.clone());
    Box::new(move |unread, acks| {
        hand_back_later(&state, &queue, unread);
        if acks.is_empty() {
            return;
        }
        tokio::spawn(async move {
            let (project, name) = (&queue.project, &queue.queue);
            if let Err(e) = state.messages().ack_many(project, name, acks).await {
                tracing::warn!(error = %e, queue = %name,
                    "could not do the acks of a consume that went away: their messages are delivered again when their leases run out");
            }
        });
    })
}

/// Hands `handed` back in the background (their consumer went away).
pub(crate) fn hand_back_later(state: &AppState, queue: &QueueRef, handed: Vec<ClaimedMessage>) {
    if handed.is_empty() {
        return;
    }
    let (state, queue) = (state.clone(), queue.clone());
    tokio::spawn(async move { hand_back_now(&state, &queue, handed).await });
}

/// Hands `handed` back (their consumer went away) and returns once each
/// is available again: a publish whose consumer went away while it
/// committed calls it before it answers, so whoever its publisher tells
/// next finds the message there. A hand-back that fails leaves the
/// message under its lease, delivered again when the lease runs out.
pub(super) async fn hand_back_now(state: &AppState, queue: &QueueRef, handed: Vec<ClaimedMessage>) {
    for m in handed {
        let lease = LeaseRef {
            queue: queue.clone(),
            message_id: m.message_id,
            receipt: Some(m.receipt),
        };
        if let Err(e) = state.messages().hand_back(lease).await {
            tracing::warn!(error = %e, queue = %queue.queue,
                "could not hand back a message its consumer never read: it is delivered again when its lease runs out");
        }
    }
}
