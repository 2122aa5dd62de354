//! Exponential backoff with full jitter, honouring `Retry-After`.

use std::{future::Future, time::Duration};

use rand::Rng;

use super::Error;

/// How a call that failed transiently is retried.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Tries in all, the first included (1 = no retry).
    pub max_attempts: u32,
    /// Backoff cap before the first retry; doubles each time.
    pub base_delay: Duration,
    /// Largest wait between tries.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 6,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(5),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// The wait before retry number `attempt` (1-based): a random time up
    /// to `min(max_delay, base_delay * 2^(attempt-1))`, or the server's
    /// `Retry-After` when it is longer.
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let cap = self
            .base_delay
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(20))
            .min(self.max_delay);
        let jittered = Duration::from_secs_f64(rand::rng().random::<f64>() * cap.as_secs_f64());
        jittered.max(retry_after.unwrap_or_default())
    }

    /// Runs `call` until it succeeds, fails for good, or attempts run out.
    pub(crate) async fn run<T, F, Fut>(&self, mut call: F) -> Result<T, Error>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        let mut attempt = 1;
        loop {
            match call().await {
                Err(e) if e.is_transient() && attempt < self.max_attempts => {
                    let wait = self.delay(attempt, e.retry_after());
                    tracing::debug!(attempt, ?wait, error = %e, "retrying");
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_is_capped_and_honours_retry_after() {
        let p = RetryPolicy::default();
        for attempt in 1..30 {
            assert!(p.delay(attempt, None) <= p.max_delay);
        }
        assert!(p.delay(1, None) <= p.base_delay);
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(3))),
            Duration::from_secs(3)
        );
    }
}
