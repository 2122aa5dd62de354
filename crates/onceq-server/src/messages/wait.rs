//! The long-poll wait, written once: claim, and while nothing could be
//! claimed and the wait is not over, sleep on the queue's wake-up channel
//! (a publish, requeue, redrive or resume on this server wakes it at once)
//! and re-check the store every `long_poll_recheck` for work that arrived
//! some other way (another server, a delay that came due).

use std::time::Duration;

use onceq_store::{ClaimedMessage, MessageClaim, Result};

use super::Messages;

impl Messages<'_> {
    /// Claims as [`Messages::claim`] does; with a `wait`, returns as soon
    /// as at least one message could be claimed, or empty when the wait is
    /// over or the server shuts down. Each claim is made at its own `now`.
    pub async fn claim_waiting(
        self,
        project: &str,
        queue: &str,
        mut claim: MessageClaim,
        wait: Duration,
    ) -> Result<Vec<ClaimedMessage>> {
        let state = self.state;
        let deadline = tokio::time::Instant::now() + wait;
        let channel = state.wakeups.channel(project, queue);
        loop {
            // Registered before the claim, so a publish that lands between
            // an empty claim and the wait still wakes us.
            let notified = channel.consumers.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();

            claim.now = state.clock.now();
            let claimed = self.claim(project, queue, claim.clone()).await?;
            let now = tokio::time::Instant::now();
            if !claimed.is_empty() || now >= deadline || state.shutdown.is_cancelled() {
                return Ok(claimed);
            }
            let pause = (deadline - now).min(state.config.long_poll_recheck);
            tokio::select! {
                _ = notified => {}
                _ = tokio::time::sleep(pause) => {}
                _ = state.shutdown.cancelled() => {}
            }
        }
    }
}
