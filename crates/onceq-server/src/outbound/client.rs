//! The HTTP client every delivery of this server shares (one connection
//! pool), and one POST's outcome: what push deliveries, cron task runs and
//! account webhook deliveries all send through.

use std::time::Duration;

use super::guard::Guard;

/// A client that resolves names through `guard` (so it connects only to
/// addresses the guard allows), follows no redirect (a 3xx is a failed
/// delivery, not a way to reach another host) and ignores proxy settings
/// from the environment (the guard checks the real destination).
pub fn build(guard: &Guard) -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .dns_resolver(guard.clone())
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .user_agent(concat!("onceq/", env!("CARGO_PKG_VERSION")))
        .build()
}

/// Sends `request` within `timeout`: the endpoint's status, or why there is
/// none, in a few words.
pub async fn send(
    request: reqwest::RequestBuilder,
    timeout: Duration,
) -> Result<reqwest::StatusCode, String> {
    let mut res = request
        .timeout(timeout)
        .send()
        .await
        .map_err(|e| describe(&e, timeout))?;
    // Only the status counts. A small answer is read to its end (within the
    // same timeout) so its connection goes back to the pool; a large or
    // broken one is dropped with its connection.
    let mut read = 0;
    while let Ok(Some(chunk)) = res.chunk().await {
        read += chunk.len();
        if read > MAX_ANSWER_DRAINED {
            break;
        }
    }
    Ok(res.status())
}

/// The most bytes of an endpoint's answer read (and thrown away).
const MAX_ANSWER_DRAINED: usize = 64 * 1024;

/// A failed request in a few words, with its root cause.
fn describe(e: &reqwest::Error, timeout: Duration) -> String {
    if e.is_timeout() {
        return format!("no answer within {}s", timeout.as_secs());
    }
    let mut text = if e.is_connect() {
        "connection failed".to_owned()
    } else {
        "request failed".to_owned()
    };
    let mut cause = std::error::Error::source(e);
    let mut last = None;
    while let Some(c) = cause {
        last = Some(c);
        cause = c.source();
    }
    if let Some(root) = last {
        text.push_str(": ");
        text.push_str(&root.to_string());
    }
    text
}
