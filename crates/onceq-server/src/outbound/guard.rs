//! The SSRF guard: whom push deliveries may reach, so that a caller with an
//! API key cannot turn the server into a probe of the network it runs in.
//!
//! What is checked, at subscribe time and again before every delivery:
//!
//! - the URL is `https://`, or `http://` to a *trusted* host (listed by the
//!   operator with `--push-allow-http`) or, when `--push-allow-loopback` is
//!   set, to a loopback host (`localhost`, `*.localhost`, 127.0.0.0/8,
//!   `::1`);
//! - it carries no credentials (`user:pass@`);
//! - a host written as an IP address is a public address (see
//!   [`is_internal`]), or loopback while loopback is allowed, or trusted.
//!
//! And at connect time, for host names: the client resolves names through
//! [`Guard`] itself, which drops every internal address from the answer
//! (unless the name is trusted) and fails when none is left. The connection
//! goes to an address that was checked, so a name that resolves to a public
//! address at subscribe time and to 10.0.0.5 later (DNS rebinding) is
//! refused. Redirects are not followed and proxies from the environment are
//! not used (see `outbound::client`), so neither can lead a delivery elsewhere.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use onceq_types::push::MAX_URL_BYTES;
use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::config::PushConfig;

/// The policy, from the operator's settings. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Guard {
    inner: Arc<Policy>,
}

#[derive(Debug)]
struct Policy {
    trusted: HashSet<String>,
    allow_loopback: bool,
}

impl Guard {
    /// The policy `config` describes.
    pub fn new(config: &PushConfig) -> Self {
        Self {
            inner: Arc::new(Policy {
                trusted: config
                    .allow_http_hosts
                    .iter()
                    .map(|h| normalise_host(h))
                    .filter(|h| !h.is_empty())
                    .collect(),
                allow_loopback: config.allow_loopback,
            }),
        }
    }

    /// Parses and checks a webhook URL. The error is a message for the
    /// caller, naming `field`.
    pub fn check_url(&self, field: &str, raw: &str) -> Result<Url, String> {
        if raw.is_empty() || raw.len() > MAX_URL_BYTES {
            return Err(format!(
                "{field} must be 1 to {MAX_URL_BYTES} bytes long (got {})",
                raw.len()
            ));
        }
        let url = Url::parse(raw).map_err(|e| format!("{field} is not a valid URL: {e}"))?;
        self.check(field, &url)?;
        Ok(url)
    }

    /// Checks a parsed URL (again before each delivery: the operator's
    /// settings may have changed since the subscription was made).
    pub fn check(&self, field: &str, url: &Url) -> Result<(), String> {
        let scheme = url.scheme();
        if scheme != "https" && scheme != "http" {
            return Err(format!(
                "{field} must be an https:// URL (got a {scheme}:// URL)"
            ));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(format!("{field} must not contain credentials (user:pass@)"));
        }
        let Some(host) = url.host_str() else {
            return Err(format!("{field} must name a host"));
        };
        let name = normalise_host(host);
        let trusted = self.inner.trusted.contains(&name);
        let ip = name.parse::<IpAddr>().ok();
        let loopback = match ip {
            Some(ip) => is_loopback(ip),
            None => name == "localhost" || name.ends_with(".localhost"),
        };
        if scheme == "http" && !trusted && !(loopback && self.inner.allow_loopback) {
            return Err(format!(
                "{field} must be an https:// URL: the server allows http:// only to loopback \
                 (with --push-allow-loopback) and to hosts listed in --push-allow-http"
            ));
        }
        if trusted {
            return Ok(());
        }
        if loopback && !self.inner.allow_loopback {
            return Err(format!(
                "{field} points at loopback ({name}), which push deliveries may not reach \
                 unless the server runs with --push-allow-loopback"
            ));
        }
        if let Some(ip) = ip
            && !self.allows(ip)
        {
            return Err(format!(
                "{field} points at {ip}, an internal address (private, link-local, \
                 multicast or reserved) that push deliveries may not reach; the operator \
                 can list the host in --push-allow-http"
            ));
        }
        Ok(())
    }

    /// Whether an untrusted host's address may be connected to.
    pub fn allows(&self, ip: IpAddr) -> bool {
        if is_loopback(ip) {
            self.inner.allow_loopback
        } else {
            !is_internal(ip)
        }
    }

    /// The addresses of `host` a delivery may connect to, by the system
    /// resolver, internal ones dropped unless the host is trusted.
    pub async fn resolve(&self, host: &str) -> std::io::Result<Vec<SocketAddr>> {
        // Port 0: the connector puts the URL's port in.
        let found: Vec<SocketAddr> = tokio::net::lookup_host((host, 0)).await?.collect();
        if self.inner.trusted.contains(&normalise_host(host)) {
            return Ok(found);
        }
        let allowed: Vec<SocketAddr> = found
            .iter()
            .copied()
            .filter(|a| self.allows(a.ip()))
            .collect();
        if allowed.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "{host} resolves only to addresses push deliveries may not reach ({})",
                    found
                        .iter()
                        .map(|a| a.ip().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        Ok(allowed)
    }
}

impl Resolve for Guard {
    fn resolve(&self, name: Name) -> Resolving {
        let guard = self.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs = guard.resolve(&host).await?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// A host as compared with the trusted list: lower case, without a
/// trailing dot or IPv6 brackets.
fn normalise_host(host: &str) -> String {
    host.trim()
        .trim_end_matches('.')
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

/// Loopback, also when written as an IPv4-mapped IPv6 address.
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => a.is_loopback(),
        IpAddr::V6(a) => a.is_loopback() || embedded_v4(a).is_some_and(|v4| v4.is_loopback()),
    }
}

/// Addresses a push delivery must not reach (loopback excluded; see
/// [`is_loopback`]): everything that is not a public unicast address.
///
/// IPv4: 0.0.0.0/8, 10/8, 100.64/10 (carrier-grade NAT), 169.254/16
/// (link-local, where cloud metadata services live), 172.16/12, 192.0.0/24,
/// 192.0.2/24, 192.168/16, 198.18/15, 198.51.100/24, 203.0.113/24,
/// 224/4 (multicast), 240/4 (reserved, broadcast).
/// IPv6: `::`, fc00::/7 (unique local), fe80::/10 (link-local), fec0::/10,
/// ff00::/8 (multicast), 2001:db8::/32, 2001::/32 (Teredo), 100::/64,
/// ::/96 (`::`, `::1` and the deprecated IPv4-compatible form),
/// 64:ff9b:1::/48 (NAT64 for local use, RFC 8215: it translates to
/// whatever IPv4 network its operator chose, so all of it is internal), and
/// the forms that embed an IPv4 address by the IPv4 rules: IPv4-mapped
/// (::ffff:0:0/96), SIIT's IPv4-translated (::ffff:0:0:0/96), the
/// well-known NAT64 prefix (64:ff9b::/96) and 6to4 (2002::/16).
/// A NAT64 prefix of an operator's own choosing cannot be recognised from
/// the address: list such a network's hosts nowhere, and keep the server
/// off networks whose NAT64 reaches internal IPv4 (security.md).
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => is_internal_v4(a),
        IpAddr::V6(a) => is_internal_v6(a),
    }
}

fn is_internal_v4(a: Ipv4Addr) -> bool {
    let [o1, o2, o3, _] = a.octets();
    o1 == 0
        || o1 == 10
        || (o1 == 100 && (64..128).contains(&o2))
        || o1 == 127
        || (o1 == 169 && o2 == 254)
        || (o1 == 172 && (16..32).contains(&o2))
        || (o1 == 192 && o2 == 0 && (o3 == 0 || o3 == 2))
        || (o1 == 192 && o2 == 168)
        || (o1 == 198 && (18..20).contains(&o2))
        || (o1 == 198 && o2 == 51 && o3 == 100)
        || (o1 == 203 && o2 == 0 && o3 == 113)
        || o1 >= 224
}

fn is_internal_v6(a: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(a) {
        return is_internal_v4(v4);
    }
    let s = a.segments();
    s[..6] == [0; 6]
        || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1)
        || (s[0] & 0xfe00) == 0xfc00
        || (s[0] & 0xffc0) == 0xfe80
        || (s[0] & 0xffc0) == 0xfec0
        || (s[0] & 0xff00) == 0xff00
        || (s[0] == 0x2001 && s[1] == 0x0db8)
        || (s[0] == 0x2001 && s[1] == 0)
        || (s[0] == 0x0100 && s[1] == 0 && s[2] == 0 && s[3] == 0)
}

/// The IPv4 address an IPv6 address carries: IPv4-mapped (::ffff:a.b.c.d),
/// IPv4-translated (::ffff:0:a.b.c.d), NAT64's well-known prefix
/// (64:ff9b::a.b.c.d) and 6to4 (2002:aabb:ccdd::).
fn embedded_v4(a: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = a.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    match s {
        [0, 0, 0, 0, 0, 0xffff, _, _] | [0, 0, 0, 0, 0xffff, 0, _, _] => Some(low),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(low),
        [0x2002, hi, lo, ..] => Some(Ipv4Addr::new(
            (hi >> 8) as u8,
            hi as u8,
            (lo >> 8) as u8,
            lo as u8,
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
