//! `onceq health`: asks a server's `/readyz` and exits 0 when it is ready.
//!
//! The container image holds the `onceq` binary alone (no curl, no shell),
//! so its HEALTHCHECK runs this. Without `--url` it asks the address the
//! server in the same environment listens on (`ONCEQ_LISTEN`), so the
//! image's check follows a changed listen address by itself.

use std::{net::SocketAddr, time::Duration};

use anyhow::Context;
use clap::Args;

/// Flags of `onceq health`.
#[derive(Debug, Args)]
pub struct HealthArgs {
    /// Base URL of the server (default: the address in ONCEQ_LISTEN, or
    /// http://127.0.0.1:8787).
    #[arg(long, env = "ONCEQ_URL")]
    url: Option<String>,
    /// The server's listen address, read when --url is not given.
    #[arg(long, env = "ONCEQ_LISTEN", default_value = "127.0.0.1:8787")]
    listen: SocketAddr,
    /// Longest wait for the answer, in seconds.
    #[arg(long, default_value_t = 5)]
    timeout: u64,
}

/// The URL to ask: `--url`, else the listen address, where an unspecified
/// address (0.0.0.0, ::) is reached on loopback.
fn readyz_url(args: &HealthArgs) -> String {
    let base = match &args.url {
        Some(url) => url.trim_end_matches('/').to_owned(),
        None => {
            let mut addr = args.listen;
            if addr.ip().is_unspecified() {
                addr.set_ip(match addr {
                    SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                    SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
                });
            }
            format!("http://{addr}")
        }
    };
    format!("{base}/readyz")
}

pub async fn run(args: HealthArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.timeout > 0, "--timeout must be positive");
    let url = readyz_url(&args);
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(args.timeout))
        .build()?;
    let response = http
        .get(&url)
        .send()
        .await
        .with_context(|| format!("{url}: no answer (is the server running?)"))?;
    let status = response.status();
    let body = response.text().await.unwrap_or_default();
    anyhow::ensure!(status.is_success(), "{url}: {status} {}", body.trim());
    println!("{}", body.trim());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Built directly, not parsed: the environment (ONCEQ_URL) must not
    /// change what is tested.
    fn url(url: Option<&str>, listen: &str) -> String {
        readyz_url(&HealthArgs {
            url: url.map(str::to_owned),
            listen: listen.parse().unwrap(),
            timeout: 5,
        })
    }

    #[test]
    fn asks_the_listen_address_on_loopback() {
        assert_eq!(url(None, "0.0.0.0:9000"), "http://127.0.0.1:9000/readyz");
        assert_eq!(url(None, "[::]:9000"), "http://[::1]:9000/readyz");
        assert_eq!(url(None, "10.1.2.3:80"), "http://10.1.2.3:80/readyz");
        assert_eq!(url(Some("http://h:1/"), "0.0.0.0:1"), "http://h:1/readyz");
    }
}
