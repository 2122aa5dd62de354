use std::net::IpAddr;

use super::*;

fn guard(allow_loopback: bool, trusted: &[&str]) -> Guard {
    Guard::new(&PushConfig {
        allow_loopback,
        allow_http_hosts: trusted.iter().map(|s| s.to_string()).collect(),
        ..PushConfig::default()
    })
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

#[test]
fn internal_ranges() {
    for a in [
        "0.0.0.0",
        "10.1.2.3",
        "100.64.0.1",
        "100.127.255.255",
        "169.254.169.254",
        "172.16.0.1",
        "172.31.255.255",
        "192.0.0.8",
        "192.0.2.1",
        "192.168.1.1",
        "198.18.0.1",
        "198.51.100.7",
        "203.0.113.9",
        "224.0.0.1",
        "255.255.255.255",
        "::",
        "::1",
        "::10.0.0.1",
        "::ffff:10.0.0.1",
        "::ffff:169.254.169.254",
        "64:ff9b::a00:1",
        "64:ff9b:1::7f00:1",
        "64:ff9b:1:ffff::808:808",
        "::ffff:0:127.0.0.1",
        "::ffff:0:10.0.0.1",
        "2002:a00:1::",
        "fc00::1",
        "fd12:3456::1",
        "fe80::1",
        "fec0::1",
        "ff02::1",
        "2001:db8::1",
        "2001::1",
        "100::1",
    ] {
        assert!(is_internal(ip(a)), "{a} is internal");
    }
    for a in [
        "1.1.1.1",
        "8.8.8.8",
        "100.63.255.255",
        "100.128.0.0",
        "172.15.255.255",
        "172.32.0.0",
        "192.169.0.1",
        "198.20.0.1",
        "223.255.255.255",
        "2606:4700:4700::1111",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
        "::ffff:0:8.8.8.8",
        "64:ff9b:2::808:808",
        "2002:808:808::",
    ] {
        assert!(!is_internal(ip(a)), "{a} is public");
    }
    assert!(is_loopback(ip("127.0.0.2")));
    assert!(is_loopback(ip("::1")));
    assert!(is_loopback(ip("::ffff:127.0.0.1")));
    assert!(is_loopback(ip("::ffff:0:127.0.0.1")));
    assert!(!is_loopback(ip("10.0.0.1")));
}

#[test]
fn https_to_public_hosts_only_by_default() {
    let g = guard(false, &[]);
    assert!(
        g.check_url("url", "https://hooks.example.com/x?y=1")
            .is_ok()
    );
    assert!(g.check_url("url", "https://8.8.8.8:8443/").is_ok());
    assert!(
        g.check_url("url", "https://[2606:4700:4700::1111]/")
            .is_ok()
    );
    for (url, why) in [
        ("http://hooks.example.com/", "https://"),
        ("ftp://hooks.example.com/", "https://"),
        ("https://user:pw@hooks.example.com/", "credentials"),
        ("https://localhost/", "loopback"),
        ("https://api.localhost./", "loopback"),
        ("https://127.0.0.1/", "loopback"),
        ("https://[::1]/", "loopback"),
        ("https://0x7f.1/", "loopback"),
        ("http://127.0.0.1:8080/", "https://"),
        ("https://10.0.0.5/", "internal"),
        ("https://169.254.169.254/latest/meta-data", "internal"),
        ("https://[fd00::1]/", "internal"),
        ("https://[::ffff:192.168.0.1]/", "internal"),
        ("https://[64:ff9b:1::7f00:1]/", "internal"),
        ("https://[::ffff:0:127.0.0.1]/", "loopback"),
        ("https://[::ffff:0:a9fe:a9fe]/", "internal"),
        ("not a url", "not a valid URL"),
        ("", "1 to 2048"),
    ] {
        let err = g.check_url("url", url).unwrap_err();
        assert!(err.starts_with("url "), "{url}: {err}");
        assert!(err.contains(why), "{url}: {err}");
    }
    let long = format!("https://x.example/{}", "a".repeat(2100));
    assert!(g.check_url("url", &long).unwrap_err().contains("2048"));
}

#[test]
fn operator_allows_loopback_and_trusted_hosts() {
    let g = guard(true, &["Billing.Internal", "10.0.0.7", "[fd00::7]"]);
    assert!(g.check_url("url", "http://127.0.0.1:8080/hook").is_ok());
    assert!(g.check_url("url", "http://localhost:8080/hook").is_ok());
    assert!(g.check_url("url", "https://[::1]/hook").is_ok());
    assert!(g.check_url("url", "http://billing.internal/hook").is_ok());
    assert!(g.check_url("url", "http://10.0.0.7/hook").is_ok());
    assert!(g.check_url("url", "http://[fd00::7]:81/hook").is_ok());
    // Loopback allowed is not "internal allowed".
    assert!(g.check_url("url", "https://10.0.0.8/").is_err());
    assert!(g.check_url("url", "http://hooks.example.com/").is_err());
}

#[tokio::test]
async fn names_resolving_to_internal_addresses_are_refused_at_connect() {
    // `localhost` resolves (from /etc/hosts) to loopback only.
    let strict = guard(false, &[]);
    let err = strict.resolve("localhost").await.unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied);
    assert!(err.to_string().contains("may not reach"), "{err}");

    let dev = guard(true, &[]);
    let addrs = dev.resolve("localhost").await.unwrap();
    assert!(!addrs.is_empty());
    assert!(addrs.iter().all(|a| is_loopback(a.ip())));

    let trusted = guard(false, &["localhost"]);
    assert!(!trusted.resolve("localhost").await.unwrap().is_empty());
}
