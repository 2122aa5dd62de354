//! The HTTP client every delivery of this server shares (one connection
//! pool).

use super::guard::Guard;

/// A client that resolves names through `guard` (so it connects only to
/// addresses the guard allows), follows no redirect (a 3xx is a failed
/// delivery, not a way to reach another host) and ignores proxy settings
/// from the environment (the guard checks the real destination).
pub(super) fn build(guard: &Guard) -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .dns_resolver(guard.clone())
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .user_agent(concat!("onceq/", env!("CARGO_PKG_VERSION")))
        .build()
}
