//! Wakes long-polling consumers and push dispatchers when their queue may
//! have work.
//!
//! Each queue someone waits on has a [`QueueWakeup`], kept only while
//! someone holds it, so memory follows the waiters, not the queue names
//! clients invent. A publish of `n` messages wakes at most `n` waiting
//! consumers of that queue, one each ([`Notify::notify_one`]), not all of
//! them: with every consumer woken for every message, 8 idle workers ran
//! 3.5 claims per message at 200 messages/s, all but one finding nothing
//! (docs/performance.md, change 8). Push dispatchers are all woken: each
//! has a subscription of its own to feed.
//!
//! A consumer that waits also leaves an [`Offer`] on its queue: a publish
//! here takes it and stores its message handed straight to that consumer
//! (`Messages::publish`, [`onceq_store::HandOut`]), so the consumer needs
//! no claim of its own. An offer that gets no message (a replay, a queue
//! whose messages cannot be handed out at publish, a failed publish) is
//! dropped, which wakes its consumer to claim, as a wake-up does.
//!
//! An offer may also carry its consume's acks (of the consumer's previous
//! batch): the publish that takes it does them in its own transaction
//! (`Messages::publish`), so they cost no commit of their own. Whoever
//! holds them does them: the publish once it took the offer, else the
//! consumer, which takes them back (`OfferWait::take_back_acks`) when no
//! publish came soon enough, and does them in the background if it went
//! away first (`OfferWait`'s drop).
//!
//! A wake-up can still be lost to a consumer that is woken and then goes
//! away (its request cancelled) before it claims; and wake-ups are local to
//! this process. Consumers therefore also re-check the store every
//! `long_poll_recheck` (250 ms by default).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use jiff::SignedDuration;
use onceq_store::{ClaimedMessage, MessageAck, StoreError};
use tokio::sync::{Notify, oneshot};

/// Consumers woken by one wake-up at most (a batch of messages).
const MAX_WOKEN: usize = 1024;

/// The wake-up channels of one queue.
#[derive(Default)]
pub struct QueueWakeup {
    /// Long-polling consumers: one woken per message.
    pub consumers: Notify,
    /// Push dispatchers: every one woken.
    pub dispatchers: Notify,
    /// When a waiting consumer of this queue last re-checked the store
    /// (`take_recheck`): one re-check per queue per interval, not one per
    /// waiter.
    last_recheck: Mutex<Option<tokio::time::Instant>>,
    /// Wake-ups passed on by a consumer that found work by re-checking
    /// (work published elsewhere): the woken one passes it on again while
    /// it finds work (`pass_on`, `take_passed`).
    passed: std::sync::atomic::AtomicUsize,
    /// Waiting consumers' offers, oldest first, by id.
    offers: Mutex<VecDeque<(u64, Offer)>>,
    next_offer: AtomicU64,
    /// Whether the last publish here that took offers had its messages
    /// handed out (the queue allows it: `onceq_store::HandOut`). Only then
    /// do consumes leave their acks with their offers: on a queue that
    /// hands out nothing at publish they would wait for no one.
    hands_out: std::sync::atomic::AtomicBool,
}

/// A waiting consumer's offer to take messages published here straight
/// away (see the module docs).
#[derive(Debug)]
pub struct Offer {
    /// Where its messages go. Dropped unused, it wakes the consumer.
    pub to: oneshot::Sender<Handed>,
    /// At most this many (its consume's `max_messages`).
    pub max: u32,
    /// Its consume's lease length (`None`: the queue's default).
    pub visibility_timeout: Option<SignedDuration>,
    /// Its consume's acks, for the publish that takes it to do (none when
    /// its consumer did them, or takes them back).
    pub acks: Vec<MessageAck>,
}

/// What a publish sends the offer it took.
#[derive(Debug)]
pub struct Handed {
    /// The messages handed out to it (none: claim instead).
    pub messages: Vec<ClaimedMessage>,
    /// Whether each ack the offer carried ended its lease, in order (`None`
    /// for an offer that carried none).
    pub acked: Option<Result<Vec<bool>, StoreError>>,
}

/// What a consumer gone away left on its offer, for `OfferWait`'s drop to
/// pass on: messages sent but never read (to hand back) and acks no
/// publish took (to do).
pub type LeftBehind = Box<dyn FnOnce(Vec<ClaimedMessage>, Vec<MessageAck>) + Send>;

/// An offer while its consumer waits: withdrawn when dropped, and what it
/// was sent by then but never read goes to `unread` (to be handed back), so
/// a consumer that goes away strands no message under a lease.
pub struct OfferWait {
    channel: Arc<QueueWakeup>,
    id: u64,
    /// What a publish sent (no messages, or an error once the sender was
    /// dropped: claim instead).
    pub rx: oneshot::Receiver<Handed>,
    left_behind: Option<LeftBehind>,
}

impl OfferWait {
    /// The acks this offer still carries, taken back (to be done by the
    /// consumer): `None` once a publish took the offer, which does them
    /// and says so on `rx`.
    pub fn take_back_acks(&mut self) -> Option<Vec<MessageAck>> {
        let mut offers = lock(&self.channel.offers);
        let (_, offer) = offers.iter_mut().find(|(id, _)| *id == self.id)?;
        Some(std::mem::take(&mut offer.acks))
    }
}

impl Drop for OfferWait {
    fn drop(&mut self) {
        let mut offers = lock(&self.channel.offers);
        let acks = match offers.iter().position(|(id, _)| *id == self.id) {
            Some(at) => offers.remove(at).map(|(_, o)| o.acks).unwrap_or_default(),
            None => Vec::new(),
        };
        drop(offers);
        // Taken by a publish that has answered by now: hand its messages
        // back. (One still committing sees this receiver gone when it
        // sends, and hands them back itself.)
        let unread = match self.rx.try_recv() {
            Ok(handed) => handed.messages,
            Err(_) => Vec::new(),
        };
        if (!unread.is_empty() || !acks.is_empty())
            && let Some(left_behind) = self.left_behind.take()
        {
            left_behind(unread, acks);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl QueueWakeup {
    /// Leaves an offer of a consumer waiting for up to `max` messages under
    /// `visibility_timeout`, carrying `acks` for the publish that takes it;
    /// `left_behind` gets what it was sent but never read, and the acks no
    /// publish took, if it is dropped so.
    pub fn offer(
        self: &Arc<Self>,
        max: u32,
        visibility_timeout: Option<SignedDuration>,
        acks: Vec<MessageAck>,
        left_behind: LeftBehind,
    ) -> OfferWait {
        let (to, rx) = oneshot::channel();
        let id = self.next_offer.fetch_add(1, Ordering::Relaxed);
        let offer = Offer {
            to,
            max,
            visibility_timeout,
            acks,
        };
        lock(&self.offers).push_back((id, offer));
        OfferWait {
            channel: self.clone(),
            id,
            rx,
            left_behind: Some(left_behind),
        }
    }

    /// Whether a consume may leave its acks with its offer: other
    /// consumers wait here (so its claim will likely find nothing and it
    /// will wait too), and publishes here hand their messages out.
    pub fn carries_acks(&self) -> bool {
        self.hands_out.load(Ordering::Relaxed)
            && lock(&self.offers).iter().any(|(_, o)| !o.to.is_closed())
    }

    /// A publish that took offers had its messages handed out, or not.
    pub fn handed_out(&self, handed: bool) {
        self.hands_out.store(handed, Ordering::Relaxed);
    }

    /// Whether this waiter should re-check the store now: true for the
    /// first waiter of the queue whose timer fires once `every` has passed
    /// since the last re-check. 1 000 waiters on one queue used to claim
    /// 4 000 times a second between them, saturating the store (every call
    /// answered 503 after the store timeout); now the queue is re-checked
    /// once per interval, whoever does it.
    pub fn take_recheck(&self, every: std::time::Duration) -> bool {
        let now = tokio::time::Instant::now();
        let mut last = self.last_recheck.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_none_or(|t| now.duration_since(t) >= every) {
            *last = Some(now);
            true
        } else {
            false
        }
    }

    /// A waiter found work without being woken for it (by re-checking, or
    /// woken by a passed-on wake-up): wakes one more waiter to look, since
    /// there may be more.
    pub fn pass_on(&self) {
        self.passed
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        self.consumers.notify_one();
    }

    /// Whether a woken waiter was woken by a passed-on wake-up (taking it).
    pub fn take_passed(&self) -> bool {
        self.passed
            .fetch_update(
                std::sync::atomic::Ordering::AcqRel,
                std::sync::atomic::Ordering::Acquire,
                |n| n.checked_sub(1),
            )
            .is_ok()
    }
}

type Key = (String, String);

/// The channels of the queues someone waits on, by (project, queue).
#[derive(Default)]
pub struct Wakeups {
    queues: Mutex<Channels>,
}

#[derive(Default)]
struct Channels {
    by_queue: HashMap<Key, Weak<QueueWakeup>>,
    /// Entries after the last sweep of dead ones; the next sweep comes when
    /// the map has doubled, so sweeping costs O(1) per registration.
    swept_at: usize,
}

impl Wakeups {
    /// The queue's channels; they exist while the returned handle (or
    /// another for the same queue) is held.
    pub fn channel(&self, project: &str, queue: &str) -> Arc<QueueWakeup> {
        let mut channels = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        let key = (project.to_owned(), queue.to_owned());
        if let Some(live) = channels.by_queue.get(&key).and_then(Weak::upgrade) {
            return live;
        }
        let wakeup = Arc::new(QueueWakeup::default());
        channels.by_queue.insert(key, Arc::downgrade(&wakeup));
        if channels.by_queue.len() > 2 * channels.swept_at.max(64) {
            channels.by_queue.retain(|_, w| w.strong_count() > 0);
            channels.swept_at = channels.by_queue.len();
        }
        wakeup
    }

    /// The queue's channels, if someone holds them.
    fn held(&self, project: &str, queue: &str) -> Option<Arc<QueueWakeup>> {
        let channels = lock(&self.queues);
        let key = (project.to_owned(), queue.to_owned());
        channels.by_queue.get(&key).and_then(Weak::upgrade)
    }

    /// Offers of consumers waiting on the queue, oldest first, enough to
    /// take `messages` (each takes up to its `max`), skipping those whose
    /// consumer went away.
    pub fn take_offers(&self, project: &str, queue: &str, messages: usize) -> Vec<Offer> {
        let wakeup = self.held(project, queue);
        let Some(wakeup) = wakeup else {
            return Vec::new();
        };
        let mut offers = lock(&wakeup.offers);
        let (mut taken, mut room) = (Vec::new(), 0);
        while room < messages {
            let Some((_, offer)) = offers.pop_front() else {
                break;
            };
            if !offer.to.is_closed() {
                room += offer.max as usize;
                taken.push(offer);
            }
        }
        taken
    }

    /// A publish on the queue that took offers had its messages handed out
    /// (`handed`), or not: see [`QueueWakeup::carries_acks`].
    pub fn handed_out(&self, project: &str, queue: &str, handed: bool) {
        if let Some(wakeup) = self.held(project, queue) {
            wakeup.handed_out(handed);
        }
    }

    /// `messages` became available on the queue: wakes that many waiting
    /// consumers at most, and every push dispatcher.
    pub fn wake(&self, project: &str, queue: &str, messages: usize) {
        let wakeup = self.held(project, queue);
        let Some(wakeup) = wakeup else { return };
        for _ in 0..messages.min(MAX_WOKEN) {
            wakeup.consumers.notify_one();
        }
        wakeup.dispatchers.notify_waiters();
    }

    /// The queue may have work for everyone waiting on it (it was
    /// resumed): wakes every waiting consumer and push dispatcher, each of
    /// which claims and goes back to waiting if it finds nothing.
    pub fn wake_all(&self, project: &str, queue: &str) {
        let wakeup = self.held(project, queue);
        if let Some(wakeup) = wakeup {
            wakeup.consumers.notify_waiters();
            wakeup.dispatchers.notify_waiters();
        }
    }

    /// Queues with a live channel (for tests of the memory bound).
    #[cfg(test)]
    fn live(&self) -> usize {
        let channels = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        channels
            .by_queue
            .values()
            .filter(|w| w.strong_count() > 0)
            .count()
    }

    #[cfg(test)]
    fn entries(&self) -> usize {
        self.queues
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .by_queue
            .len()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::Wakeups;

    /// A consumer of `queue` waiting; true if woken within 100 ms.
    async fn woken(wakeups: &Wakeups, queue: &str, wake: impl FnOnce()) -> bool {
        let channel = wakeups.channel("p", queue);
        let notified = channel.consumers.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        wake();
        tokio::time::timeout(Duration::from_millis(100), notified)
            .await
            .is_ok()
    }

    #[tokio::test]
    async fn a_publish_wakes_its_queue_only() {
        let w = Wakeups::default();
        assert!(woken(&w, "a", || w.wake("p", "a", 1)).await);
        assert!(!woken(&w, "a", || w.wake("p", "b", 1)).await);
        assert!(!woken(&w, "a", || w.wake("other", "a", 1)).await);
    }

    #[tokio::test]
    async fn one_consumer_per_message() {
        let w = Wakeups::default();
        let channel = w.channel("p", "q");
        let mut waiting: Vec<_> = (0..3)
            .map(|_| Box::pin(channel.consumers.notified()))
            .collect();
        for n in &mut waiting {
            n.as_mut().enable();
        }
        w.wake("p", "q", 2);
        let mut woken = 0;
        for n in waiting {
            if tokio::time::timeout(Duration::from_millis(50), n)
                .await
                .is_ok()
            {
                woken += 1;
            }
        }
        assert_eq!(woken, 2, "two messages wake two of the three consumers");
    }

    #[tokio::test]
    async fn every_dispatcher_is_woken() {
        let w = Wakeups::default();
        let channel = w.channel("p", "q");
        let waiting: Vec<_> = (0..3)
            .map(|_| Box::pin(channel.dispatchers.notified()))
            .collect();
        let mut waiting = waiting;
        for n in &mut waiting {
            n.as_mut().enable();
        }
        w.wake("p", "q", 1);
        for n in waiting {
            assert!(
                tokio::time::timeout(Duration::from_millis(50), n)
                    .await
                    .is_ok()
            );
        }
    }

    fn message(id: &str) -> onceq_store::ClaimedMessage {
        onceq_store::ClaimedMessage {
            message_id: id.to_owned(),
            payload: "1".to_owned(),
            delivery_count: 1,
            receipt: format!("rcpt_{id}"),
            created_at: jiff::Timestamp::UNIX_EPOCH,
            lease_expires_at: jiff::Timestamp::UNIX_EPOCH,
            idempotency_key: None,
            headers: None,
        }
    }

    fn handed(messages: Vec<onceq_store::ClaimedMessage>) -> super::Handed {
        super::Handed {
            messages,
            acked: None,
        }
    }

    /// An offer whose unread messages land in the returned list.
    fn offer(
        channel: &Arc<super::QueueWakeup>,
        max: u32,
    ) -> (super::OfferWait, Arc<std::sync::Mutex<Vec<String>>>) {
        let unread = Arc::new(std::sync::Mutex::new(Vec::new()));
        let into = unread.clone();
        let left_behind = Box::new(move |m: Vec<onceq_store::ClaimedMessage>, _| {
            into.lock()
                .unwrap()
                .extend(m.into_iter().map(|m| m.message_id));
        });
        let wait = channel.offer(max, None, Vec::new(), left_behind);
        (wait, unread)
    }

    #[test]
    fn offers_are_taken_oldest_first_as_many_as_the_messages_need() {
        let w = Wakeups::default();
        let channel = w.channel("p", "q");
        let held: Vec<_> = (0..3).map(|_| offer(&channel, 2)).collect();
        let taken = w.take_offers("p", "q", 3);
        assert_eq!(taken.len(), 2, "two offers of 2 take 3 messages");
        assert!(w.take_offers("p", "other", 1).is_empty());
        assert_eq!(w.take_offers("p", "q", 10).len(), 1, "one left");
        drop(held);
    }

    #[test]
    fn a_withdrawn_offer_is_not_taken() {
        let w = Wakeups::default();
        let channel = w.channel("p", "q");
        let (wait, unread) = offer(&channel, 1);
        drop(wait);
        assert!(w.take_offers("p", "q", 1).is_empty());
        assert!(unread.lock().unwrap().is_empty());
    }

    #[test]
    fn an_offer_dropped_unread_hands_its_messages_back() {
        let w = Wakeups::default();
        let channel = w.channel("p", "q");
        let (wait, unread) = offer(&channel, 1);
        let taken = w.take_offers("p", "q", 1).pop().unwrap();
        taken.to.send(handed(vec![message("a")])).unwrap();
        drop(wait);
        assert_eq!(*unread.lock().unwrap(), ["a"]);
        // Read, nothing comes back.
        let (mut wait, unread) = offer(&channel, 1);
        let taken = w.take_offers("p", "q", 1).pop().unwrap();
        taken.to.send(handed(vec![message("b")])).unwrap();
        assert_eq!(wait.rx.try_recv().unwrap().messages.len(), 1);
        drop(wait);
        assert!(unread.lock().unwrap().is_empty());
    }

    fn ack(id: &str) -> onceq_store::MessageAck {
        onceq_store::MessageAck {
            lease: onceq_store::LeaseRef {
                queue: onceq_store::QueueRef::new("p", "q"),
                message_id: id.to_owned(),
                receipt: None,
            },
            result: None,
            now: jiff::Timestamp::UNIX_EPOCH,
        }
    }

    /// An offer carrying acks of `ids`, whose acks left behind land in the
    /// returned list.
    fn acking(
        channel: &Arc<super::QueueWakeup>,
        ids: &[&str],
    ) -> (super::OfferWait, Arc<std::sync::Mutex<Vec<String>>>) {
        let left = Arc::new(std::sync::Mutex::new(Vec::new()));
        let into = left.clone();
        let left_behind = Box::new(move |_, acks: Vec<onceq_store::MessageAck>| {
            into.lock()
                .unwrap()
                .extend(acks.into_iter().map(|a| a.lease.message_id));
        });
        let acks = ids.iter().map(|id| ack(id)).collect();
        (channel.offer(1, None, acks, left_behind), left)
    }

    #[test]
    fn carried_acks_go_to_whoever_holds_them() {
        let w = Wakeups::default();
        let channel = w.channel("p", "q");
        // Taken back while the offer waits: the consumer does them.
        let (mut wait, left) = acking(&channel, &["a"]);
        let back = wait.take_back_acks().unwrap();
        assert_eq!(back[0].lease.message_id, "a");
        drop(wait);
        assert!(left.lock().unwrap().is_empty(), "taken back, not left");
        // Taken by a publish: not to be taken back, nor left behind.
        let (mut wait, left) = acking(&channel, &["b"]);
        let taken = w.take_offers("p", "q", 1).pop().unwrap();
        assert_eq!(taken.acks[0].lease.message_id, "b");
        assert!(wait.take_back_acks().is_none());
        drop(wait);
        assert!(left.lock().unwrap().is_empty());
        // Dropped while still carrying them: left behind, to be done.
        let (wait, left) = acking(&channel, &["c"]);
        drop(wait);
        assert_eq!(*left.lock().unwrap(), ["c"]);
    }

    #[test]
    fn acks_go_with_offers_only_beside_others_on_a_queue_that_hands_out() {
        let w = Wakeups::default();
        let channel = w.channel("p", "q");
        assert!(!channel.carries_acks(), "no one waits");
        let (held, _) = offer(&channel, 1);
        assert!(!channel.carries_acks(), "no hand-out seen yet");
        w.handed_out("p", "q", true);
        assert!(channel.carries_acks());
        w.handed_out("p", "q", false);
        assert!(
            !channel.carries_acks(),
            "the last publish handed nothing out"
        );
        drop(held);
    }

    #[test]
    fn channels_live_only_while_held() {
        let w = Wakeups::default();
        let held: Vec<_> = (0..10).map(|i| w.channel("p", &format!("q{i}"))).collect();
        assert_eq!(w.live(), 10);
        assert!(
            Arc::ptr_eq(&held[0], &w.channel("p", "q0")),
            "one channel per queue"
        );
        drop(held);
        assert_eq!(w.live(), 0);
        // Queue names a client invents, waited on once each: the map is
        // swept as it grows and stays bounded.
        for i in 0..10_000 {
            drop(w.channel("p", &format!("invented-{i}")));
        }
        assert!(w.entries() <= 2 * 64 + 1, "{} entries", w.entries());
    }
}
