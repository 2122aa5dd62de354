//! Connections to a real TLS-only PostgreSQL (`onceq_testdb::tls`), one
//! test per libpq mode and failure: what connects, and that what must not
//! connect fails with an error naming its cause.

use onceq_pg::PgConnect;
use onceq_testdb::tls::{CERT_DATABASE, TlsCluster};

async fn cluster() -> &'static TlsCluster {
    onceq_testdb::shared_tls_cluster().await
}

/// Connects and says whether the session is encrypted.
async fn ssl_in_use(url: &str) -> Result<bool, String> {
    let pg = PgConnect::parse(url).map_err(|e| e.to_string())?;
    let client = pg.connect().await.map_err(|e| format!("{e:#}"))?;
    let row = client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .await
        .map_err(|e| e.to_string())?;
    Ok(row.get(0))
}

/// The whole chain of an error, as an operator would read it in a log.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        out.push_str(": ");
        out.push_str(&c.to_string());
        cause = c.source();
    }
    out
}

async fn connect_error(url: &str) -> String {
    let pg = PgConnect::parse(url).unwrap();
    match pg.connect().await {
        Ok(_) => panic!("{url} connected"),
        Err(e) => chain(&e),
    }
}

/// Which CA file a URL names as `sslrootcert`.
#[derive(Clone, Copy)]
enum Root {
    None,
    Ours,
    Other,
}

/// `postgres://…@HOST:PORT/postgres?sslmode=MODE[&sslrootcert=…]`.
async fn url(host: &str, mode: &str, root: Root) -> String {
    let c = cluster().await;
    let params = match root {
        Root::None => format!("sslmode={mode}"),
        Root::Ours => format!("sslmode={mode}&sslrootcert={}", c.files.ca.display()),
        Root::Other => format!("sslmode={mode}&sslrootcert={}", c.files.other_ca.display()),
    };
    c.url(host, "postgres", &params)
}

#[tokio::test]
async fn require_encrypts_without_checking_the_certificate() {
    let url = url("127.0.0.1", "require", Root::None).await;
    assert_eq!(ssl_in_use(&url).await, Ok(true));
}

#[tokio::test]
async fn prefer_the_default_uses_tls_when_offered() {
    let c = cluster().await;
    assert_eq!(
        ssl_in_use(&c.url("127.0.0.1", "postgres", "")).await,
        Ok(true)
    );
}

#[tokio::test]
async fn verify_full_with_the_right_ca_connects() {
    let url = url("localhost", "verify-full", Root::Ours).await;
    assert_eq!(ssl_in_use(&url).await, Ok(true));
}

#[tokio::test]
async fn verify_full_with_another_ca_fails_naming_the_issuer() {
    let e = connect_error(&url("localhost", "verify-full", Root::Other).await).await;
    assert!(e.contains("invalid peer certificate: UnknownIssuer"), "{e}");
}

#[tokio::test]
async fn verify_full_with_the_wrong_host_name_fails_naming_the_name() {
    let e = connect_error(&url("127.0.0.1", "verify-full", Root::Ours).await).await;
    assert!(e.contains("certificate not valid for name"), "{e}");
    assert!(e.contains("127.0.0.1"), "{e}");
}

#[tokio::test]
async fn verify_ca_checks_the_chain_not_the_name() {
    let good = url("127.0.0.1", "verify-ca", Root::Ours).await;
    assert_eq!(ssl_in_use(&good).await, Ok(true));
    let e = connect_error(&url("127.0.0.1", "verify-ca", Root::Other).await).await;
    assert!(e.contains("UnknownIssuer"), "{e}");
}

#[tokio::test]
async fn require_with_a_root_certificate_checks_the_chain_as_libpq_does() {
    let e = connect_error(&url("127.0.0.1", "require", Root::Other).await).await;
    assert!(e.contains("UnknownIssuer"), "{e}");
}

#[tokio::test]
async fn verify_full_defaults_to_the_system_roots() {
    // Our test CA is not among them, so the server is not trusted.
    let e = connect_error(&url("localhost", "verify-full", Root::None).await).await;
    assert!(e.contains("UnknownIssuer"), "{e}");
}

#[tokio::test]
async fn disable_against_a_tls_only_server_fails_clearly() {
    let e = connect_error(&url("127.0.0.1", "disable", Root::None).await).await;
    assert!(e.contains("no pg_hba.conf entry"), "{e}");
    assert!(e.contains("no encryption"), "{e}");
}

#[tokio::test]
async fn client_certificates_are_sent_when_given() {
    let c = cluster().await;
    let ca = c.files.ca.display();
    let without = c.url(
        "localhost",
        CERT_DATABASE,
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    );
    let e = connect_error(&without).await;
    assert!(e.contains("certificate"), "{e}");
    let (cert, key) = (c.files.client_cert.display(), c.files.client_key.display());
    let with = format!("{without}&sslcert={cert}&sslkey={key}");
    assert_eq!(ssl_in_use(&with).await, Ok(true));
    // The key/value form reads the same parameters.
    let words = format!(
        "host=localhost port={} user=postgres dbname={CERT_DATABASE} sslmode=verify-full sslrootcert='{ca}' sslcert='{cert}' sslkey='{key}'",
        c.cluster.port()
    );
    assert_eq!(ssl_in_use(&words).await, Ok(true));
}

#[tokio::test]
async fn pools_carry_the_same_settings() {
    let pool = PgConnect::parse(&url("localhost", "verify-full", Root::Ours).await)
        .unwrap()
        .pool(2)
        .unwrap();
    let client = pool.get().await.unwrap();
    let row = client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .await
        .unwrap();
    assert!(row.get::<_, bool>(0));
}
