//! `onceq serve` on a TLS-only PostgreSQL (`onceq_testdb::tls`): it serves
//! with `verify-full` (given in the URL or as flags), and refuses to start
//! with an error that names the cause when the certificate or the host name
//! is wrong, or when TLS is disabled against a server that requires it.

use crate::process::{ServerProcess, command, run_ok};

/// A TLS-only cluster, and a fresh database on it.
fn tls_database() -> (&'static onceq_testdb::tls::TlsCluster, String) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let c = onceq_testdb::shared_tls_cluster().await;
        let db = c.cluster.create_database().await;
        (c, db.name)
    })
}

/// `onceq serve` with `args`, expected to exit without serving; its stderr.
fn refused(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut full = vec!["serve", "--listen", "127.0.0.1:0", "--data-dir"];
    full.push(dir.path().to_str().unwrap());
    full.extend(args);
    let out = command(&full, &[("NO_COLOR", "1")]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "it started:\n{stderr}");
    stderr
}

#[test]
fn serves_with_verify_full_from_the_url_or_from_flags() {
    let (c, db) = tls_database();
    let ca = c.files.ca.display().to_string();
    let in_url = c.url(
        "localhost",
        &db,
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    );
    let plain = c.url("localhost", &db, "");
    let flags = [
        "--database-url",
        plain.as_str(),
        "--db-sslmode",
        "verify-full",
        "--db-sslrootcert",
        ca.as_str(),
    ];
    for args in [&["--database-url", in_url.as_str()][..], &flags[..]] {
        let server = ServerProcess::start(args, &[("ONCEQ_API_KEY", "tls-test-key")]);
        let env = [
            ("ONCEQ_URL", server.url.as_str()),
            ("ONCEQ_API_KEY", "tls-test-key"),
        ];
        run_ok(&["publish", "jobs", r#"{"n": 1}"#], &env);
        let got = run_ok(&["consume", "jobs", "--ack", "--json"], &env);
        assert!(
            got.contains(r#""n":1"#) || got.contains(r#""n": 1"#),
            "{got}"
        );
    }
}

#[test]
fn refuses_to_start_with_another_ca() {
    let (c, db) = tls_database();
    let other = c.files.other_ca.display();
    let url = c.url(
        "localhost",
        &db,
        &format!("sslmode=verify-full&sslrootcert={other}"),
    );
    let stderr = refused(&["--database-url", &url]);
    assert!(
        stderr.contains("invalid peer certificate: UnknownIssuer"),
        "{stderr}"
    );
}

#[test]
fn refuses_to_start_with_the_wrong_host_name() {
    let (c, db) = tls_database();
    let ca = c.files.ca.display();
    let url = c.url(
        "127.0.0.1",
        &db,
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    );
    let stderr = refused(&["--database-url", &url]);
    assert!(
        stderr.contains("certificate not valid for name"),
        "{stderr}"
    );
}

#[test]
fn refuses_to_start_without_tls_when_the_server_requires_it() {
    let (c, db) = tls_database();
    let url = c.url("127.0.0.1", &db, "sslmode=disable");
    let stderr = refused(&["--database-url", &url]);
    assert!(stderr.contains("no pg_hba.conf entry"), "{stderr}");
    assert!(stderr.contains("no encryption"), "{stderr}");
}

#[test]
fn a_missing_certificate_file_is_named() {
    let (c, db) = tls_database();
    let url = c.url(
        "localhost",
        &db,
        "sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
    );
    let stderr = refused(&["--database-url", &url]);
    assert!(
        stderr.contains("sslrootcert /nonexistent/ca.pem: no such file"),
        "{stderr}"
    );
}
