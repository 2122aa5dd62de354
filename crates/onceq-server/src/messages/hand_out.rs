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
//! uncounted); if this server dies first, its lease runs out and it is
//! delivered again, as after any claim whose answer was lost. A publish
//! that took offers runs on a task of its own (`Messages::publish`), so
//! its publisher going away halfway cannot strand what it handed out.

use onceq_store::{ClaimedMessage, HandOut, LeaseRef, NewMessage, PublishOutcome, QueueRef};

use super::Messages;
use crate::AppState;
use crate::wakeup::Offer;

/// The offers a publish took, with the messages it asked to hand to each.
#[derive(Default)]
pub(super) struct Assigned {
    offers: Vec<(Offer, Vec<usize>)>,
    /// By message index: what its consumer's answer needs that the
    /// publish's outcome does not carry (its idempotency key and headers).
    kept: Vec<Option<(Option<String>, Option<String>)>>,
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
    Assigned { offers, kept }
}

impl Assigned {
    /// No offer was taken.
    pub(super) fn is_empty(&self) -> bool {
        self.offers.is_empty()
    }

    /// Sends each offer the messages the store handed out to it
    /// (`outcomes`, in the publish's order); what a consumer that went
    /// away cannot take is handed back. Returns how many offers got
    /// nothing: dropped here, each wakes its consumer to claim.
    pub(super) fn deliver(
        self,
        messages: Messages<'_>,
        queue: &QueueRef,
        outcomes: &[PublishOutcome],
    ) -> usize {
        let Assigned { offers, mut kept } = self;
        let mut unused = 0;
        for (offer, indexes) in offers {
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
            if handed.is_empty() {
                unused += 1;
                continue;
            }
            if let Err(handed) = offer.to.send(handed) {
                hand_back_later(messages.state, queue, handed);
            }
        }
        unused
    }
}

/// Hands `handed` back in the background (their consumer went away).
/// A hand-back that fails leaves the message under its lease, delivered
/// again when the lease runs out.
pub(crate) fn hand_back_later(state: &AppState, queue: &QueueRef, handed: Vec<ClaimedMessage>) {
    let (state, queue) = (state.clone(), queue.clone());
    tokio::spawn(async move {
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
    });
}
