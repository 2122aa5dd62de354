//! The long-poll wait, written once: claim, and while nothing could be
//! claimed and the wait is not over, sleep on the queue's wake-up channel
//! (a publish, requeue, redrive or resume on this server wakes it at once)
//! and re-check the store every `long_poll_recheck` for work that arrived
//! some other way (another server, a delay that came due): once per queue
//! per interval, whichever waiter's timer fires first, not once per waiter
//! (1 000 waiters on one queue re-checking each used to saturate the
//! store). A waiter that finds work by re-checking passes a wake-up on to
//! another, which passes it on again while it finds work, so a backlog
//! published elsewhere is taken by every waiter, not one per interval.
//!
//! While it waits, a poll also leaves an offer on its queue (`wakeup`): a
//! publish here may then hand it its messages straight away
//! (`hand_out`), and it answers with them without a claim.
//!
//! A waiting poll holds its future, its queue's wake-up channel (shared by
//! every waiter of the queue) and its socket: no store connection (each
//! claim is a store call of its own), no lock, no permit. Its connection is
//! marked parked while it waits, so a new connection that finds the server
//! full may cut the wait short: it then ends as a wait that ran out does.

use std::time::Duration;

use onceq_store::{ClaimedMessage, MessageAck, MessageClaim, Result};
use tokio::sync::oneshot::error::TryRecvError;

use super::{Messages, hand_out};
use crate::connections::Admitted;
use crate::wakeup::OfferWait;

impl Messages<'_> {
    /// Claims as [`Messages::claim`] does, the first claim with `acks`
    /// (a consume's acks of its previous batch) in its transaction
    /// ([`Messages::ack_many_then_claim`]); with a `wait`, returns as soon
    /// as at least one message could be claimed, or empty when the wait is
    /// over, the server shuts down or the wait is cut short for a new
    /// connection (`connection`, when the request came over one). Each
    /// claim is made at its own `now`. Answers whether each ack ended its
    /// lease, and what was claimed.
    pub async fn claim_waiting(
        self,
        project: &str,
        queue: &str,
        mut claim: MessageClaim,
        acks: Vec<MessageAck>,
        wait: Duration,
        connection: Option<&std::sync::Arc<Admitted>>,
    ) -> Result<(Vec<bool>, Vec<ClaimedMessage>)> {
        let mut acks = Some(acks).filter(|a| !a.is_empty());
        let mut acked = Vec::new();
        let state = self.state;
        let deadline = tokio::time::Instant::now() + wait;
        let parked = (!wait.is_zero())
            .then(|| connection.map(|c| c.park()))
            .flatten();
        let cut = parked.as_ref().map(|p| p.cut().clone()).unwrap_or_default();
        let channel = state.wakeups.channel(project, queue);
        let recheck = state.config.long_poll_recheck;
        // Why this claim is made: a first look, a timer (a re-check), or a
        // wake-up (a publish here, or one passed on).
        let mut why = Look::First;
        // Left once the first claim found nothing; taken by a publish.
        let mut offer: Option<OfferWait> = None;
        loop {
            // Registered before the claim, so a publish that lands between
            // an empty claim and the wait still wakes us.
            let notified = channel.consumers.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();

            // A publish may have handed over messages since the last look
            // (while another wake-up was being answered).
            if let Some(o) = offer.as_mut() {
                match o.rx.try_recv() {
                    Ok(handed) if !handed.is_empty() => {
                        return Ok((acked, self.handed(project, queue, handed)));
                    }
                    Ok(_) | Err(TryRecvError::Closed) => {
                        offer = None;
                        why = Look::Woken;
                    }
                    Err(TryRecvError::Empty) => {}
                }
            }
            if why != Look::None {
                let passed = why == Look::Woken && channel.take_passed();
                claim.now = state.clock.now();
                let claimed = match acks.take() {
                    Some(acks) => {
                        let (done, claimed) = self
                            .ack_many_then_claim(project, queue, acks, claim.clone())
                            .await?;
                        acked = done;
                        claimed
                    }
                    None => self.claim(project, queue, claim.clone()).await?,
                };
                if !claimed.is_empty() {
                    // Found without a wake-up of its own: more may be there
                    // for the other waiters.
                    if why == Look::Recheck || passed {
                        channel.pass_on();
                    }
                    return Ok((acked, claimed));
                }
            }
            let now = tokio::time::Instant::now();
            if now >= deadline || state.shutdown.is_cancelled() || cut.is_cancelled() {
                return Ok((acked, Vec::new()));
            }
            let pause = (deadline - now).min(recheck);
            let o = offer.get_or_insert_with(|| {
                let (state, queue) = (state.clone(), claim.queue.clone());
                channel.offer(claim.max, claim.visibility_timeout, move |unread| {
                    hand_out::hand_back_later(&state, &queue, unread);
                })
            });
            let mut handed = None;
            why = tokio::select! {
                _ = notified => Look::Woken,
                got = &mut o.rx => {
                    handed = Some(got);
                    Look::Woken
                }
                _ = tokio::time::sleep(pause) => {
                    if tokio::time::Instant::now() >= deadline {
                        // The last look, as a wait that ran out makes.
                        Look::Recheck
                    } else if channel.take_recheck(recheck) {
                        Look::Recheck
                    } else {
                        Look::None
                    }
                }
                _ = state.shutdown.cancelled() => Look::None,
                _ = cut.cancelled() => Look::None,
            };
            match handed {
                Some(Ok(handed)) if !handed.is_empty() => {
                    return Ok((acked, self.handed(project, queue, handed)));
                }
                // Dropped unused (or empty): woken, claim.
                Some(_) => offer = None,
                None => {}
            }
        }
    }

    /// Messages a publish handed to this consumer, counted as a claim's.
    fn handed(
        self,
        project: &str,
        queue: &str,
        handed: Vec<ClaimedMessage>,
    ) -> Vec<ClaimedMessage> {
        let now = self.state.clock.now();
        self.state.metrics.handed_out(project, queue, &handed, now);
        handed
    }
}

/// Why a waiting consumer claims (or does not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Look {
    /// The call's first claim.
    First,
    /// Its timer fired and it is the queue's re-checker this interval (or
    /// its wait is over).
    Recheck,
    /// Woken: a publish (or a requeue, …) here, or a passed-on wake-up.
    Woken,
    /// Its timer fired but another waiter re-checked the queue lately, or
    /// the server is stopping, or the wait was cut: no claim.
    None,
}
