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

use onceq_store::{ClaimedMessage, MessageAck, MessageClaim, Result, StoreError};
use tokio::sync::oneshot::error::TryRecvError;
use tokio::time::Instant;

use super::{Messages, hand_out};
use crate::connections::Admitted;
use crate::wakeup::{Handed, OfferWait};

impl Messages<'_> {
    /// Claims as [`Messages::claim`] does, the first claim with `acks`
    /// (a consume's acks of its previous batch) in its transaction
    /// ([`Messages::ack_many_then_claim`]); with a `wait`, returns as soon
    /// as at least one message could be claimed, or empty when the wait is
    /// over, the server shuts down or the wait is cut short for a new
    /// connection (`connection`, when the request came over one). Each
    /// claim is made at its own `now`. Answers whether each ack ended its
    /// lease, and what was claimed.
    ///
    /// Where other consumers wait on the queue already and publishes here
    /// hand their messages out ([`crate::wakeup::QueueWakeup::carries_acks`]),
    /// a consume with acks makes no first claim: the queue had nothing for
    /// the others when they last looked, and what is published here goes
    /// to a waiting consume (what arrives otherwise, from another server
    /// or a delay coming due, reaches it as it reaches them: at a
    /// re-check, or a wake-up). It waits with them, and its acks go with
    /// its offer, for the publish that hands it its next message to do in
    /// its own transaction: no claim and no commit of its own. They are
    /// done before the answer all the same: taken back and done alone
    /// after `ServerConfig::ack_carry` (then it claims), or when the wait
    /// ends.
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
        let deadline = Instant::now() + wait;
        let parked = (!wait.is_zero())
            .then(|| connection.map(|c| c.park()))
            .flatten();
        let cut = parked.as_ref().map(|p| p.cut().clone()).unwrap_or_default();
        let channel = state.wakeups.channel(project, queue);
        let recheck = state.config.long_poll_recheck;
        // How long the acks may wait on the offer (`ServerConfig::ack_carry`):
        // a consumer among several waiting ones is handed a message after
        // those ahead of it, at 1 000 messages/s and 8 consumers 7 ms on
        // average.
        let ack_carry = state.config.ack_carry;
        let carry =
            acks.is_some() && !wait.is_zero() && !ack_carry.is_zero() && channel.carries_acks();
        // The acks are with the offer (or the publish that took it), and
        // until when they may stay there.
        let (mut carrying, mut carry_until) = (false, None::<Instant>);
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
                let got = match o.rx.try_recv() {
                    Ok(handed) => Some(Ok(handed)),
                    Err(TryRecvError::Closed) => Some(Err(())),
                    Err(TryRecvError::Empty) => None,
                };
                if let Some(got) = got {
                    let handed = self.take_handed(&claim, got, &mut carrying, &mut acked)?;
                    if let Some(handed) = handed {
                        return Ok((acked, handed));
                    }
                    (offer, why) = (None, Look::Woken);
                }
            }
            if why != Look::None {
                let passed = why == Look::Woken && channel.take_passed();
                claim.now = state.clock.now();
                let claimed = match acks.take() {
                    // Joins the consumes waiting here without a claim
                    // (see above): its acks go with its offer.
                    Some(held) if carry => {
                        acks = Some(held);
                        Vec::new()
                    }
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
            let now = Instant::now();
            if now >= deadline || state.shutdown.is_cancelled() || cut.is_cancelled() {
                return self
                    .end_wait(project, queue, &claim, acks, offer, carrying, acked)
                    .await;
            }
            let pause = (deadline - now).min(recheck);
            let o = offer.get_or_insert_with(|| {
                let carried = acks.take().unwrap_or_default();
                if !carried.is_empty() {
                    (carrying, carry_until) = (true, Some(now + ack_carry));
                }
                let left_behind = hand_out::left_behind(state, &claim.queue);
                channel.offer(claim.max, claim.visibility_timeout, carried, left_behind)
            });
            let take_back = async {
                match carry_until {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            let mut handed = None;
            why = tokio::select! {
                _ = notified => Look::Woken,
                got = &mut o.rx => {
                    handed = Some(got.map_err(|_| ()));
                    Look::Woken
                }
                _ = take_back => Look::TakeBack,
                _ = tokio::time::sleep(pause) => {
                    if Instant::now() >= deadline {
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
            if why == Look::TakeBack {
                carry_until = None;
                why = Look::None;
                // Not taken back: a publish holds them, and says how they
                // went with what it sends.
                if let Some(back) = o.take_back_acks() {
                    carrying = false;
                    acked = self.ack_many(project, queue, back).await?;
                    // Claim again: an in-flight limit counted them.
                    why = Look::Woken;
                }
            }
            if let Some(got) = handed {
                carry_until = None;
                let handed = self.take_handed(&claim, got, &mut carrying, &mut acked)?;
                if let Some(handed) = handed {
                    return Ok((acked, handed));
                }
                // Sent no message (or dropped unused): woken, claim.
                offer = None;
            }
        }
    }

    /// What an offer was sent (or `Err` when it was dropped unsent): the
    /// messages to answer with, if any, and how the acks it carried went.
    fn take_handed(
        self,
        claim: &MessageClaim,
        got: std::result::Result<Handed, ()>,
        carrying: &mut bool,
        acked: &mut Vec<bool>,
    ) -> Result<Option<Vec<ClaimedMessage>>> {
        let was_carrying = std::mem::replace(carrying, false);
        let Ok(handed) = got else {
            // Only a publish that took the offer drops it, and one that
            // took acks always says how they went.
            return match was_carrying {
                true => Err(StoreError::internal(
                    "a publish dropped the acks it carried unanswered",
                )),
                false => Ok(None),
            };
        };
        match handed.acked {
            Some(Ok(done)) => *acked = done,
            Some(Err(e)) => {
                hand_out::hand_back_later(self.state, &claim.queue, handed.messages);
                return Err(e);
            }
            None => {}
        }
        let (project, queue) = (&claim.queue.project, &claim.queue.queue);
        Ok((!handed.messages.is_empty()).then(|| self.handed(project, queue, handed.messages)))
    }

    /// The end of a wait that found nothing: the acks done if they are
    /// still here or with the offer, or else waited for from the publish
    /// that took them (whose messages are then the answer after all).
    #[allow(clippy::too_many_arguments)]
    async fn end_wait(
        self,
        project: &str,
        queue: &str,
        claim: &MessageClaim,
        acks: Option<Vec<MessageAck>>,
        offer: Option<OfferWait>,
        mut carrying: bool,
        mut acked: Vec<bool>,
    ) -> Result<(Vec<bool>, Vec<ClaimedMessage>)> {
        if let Some(acks) = acks {
            acked = self.ack_many(project, queue, acks).await?;
        }
        if let Some(mut o) = offer.filter(|_| carrying) {
            match o.take_back_acks() {
                Some(back) => acked = self.ack_many(project, queue, back).await?,
                None => {
                    // Bounded: the publish answers within the store timeout.
                    let got = (&mut o.rx).await.map_err(|_| ());
                    let handed = self.take_handed(claim, got, &mut carrying, &mut acked)?;
                    if let Some(handed) = handed {
                        return Ok((acked, handed));
                    }
                }
            }
        }
        Ok((acked, Vec::new()))
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
    /// Its acks waited on its offer for `ack_carry`: it takes them back
    /// (and claims again once it did them).
    TakeBack,
    /// Its timer fired but another waiter re-checked the queue lately, or
    /// the server is stopping, or the wait was cut: no claim.
    None,
}
