//! A cluster that accepts TLS only, with certificates made at test time by
//! the machine's `openssl`: a CA, a server certificate for `localhost`
//! (and for no IP address, so connecting to `127.0.0.1` with host-name
//! checks fails), a client certificate for the `postgres` user, and a
//! second CA that signed none of them.
//!
//! `pg_hba.conf` takes only `hostssl` connections over TCP; the database
//! [`CERT_DATABASE`] also requires a client certificate (`clientcert=verify-full`).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{ClusterOptions, TestCluster};

/// The database that requires a client certificate.
pub const CERT_DATABASE: &str = "onceq_certdb";

/// The certificate files a client may use.
#[derive(Debug)]
pub struct TlsFiles {
    dir: tempfile::TempDir,
    /// The CA that signed the server's and the client's certificates.
    pub ca: PathBuf,
    /// A CA that signed nothing here.
    pub other_ca: PathBuf,
    /// The client certificate (CN `postgres`).
    pub client_cert: PathBuf,
    /// Its key.
    pub client_key: PathBuf,
}

impl TlsFiles {
    /// The directory holding every file.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

/// A TLS-only cluster and the files to reach it.
#[derive(Debug)]
pub struct TlsCluster {
    /// The cluster (its admin connection runs over the unix socket).
    pub cluster: TestCluster,
    /// The certificates.
    pub files: TlsFiles,
}

impl TlsCluster {
    /// Makes the certificates and starts the cluster.
    pub async fn start() -> TlsCluster {
        let dir = tempfile::tempdir().expect("onceq-testdb: temp dir for certificates");
        let d = dir.path();
        make_ca(d, "ca", "onceq test CA");
        make_ca(d, "other-ca", "onceq other CA");
        make_leaf(
            d,
            "server",
            "localhost",
            "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth",
        );
        make_leaf(d, "client", "postgres", "extendedKeyUsage=clientAuth");
        let read = |name: &str| std::fs::read(d.join(name)).expect("read a certificate file");
        let cluster = TestCluster::start_with_options(ClusterOptions {
            settings: vec![
                "ssl=on".into(),
                "ssl_cert_file=server.crt".into(),
                "ssl_key_file=server.key".into(),
                "ssl_ca_file=ca.crt".into(),
            ],
            hba: Some(format!(
                "hostssl {CERT_DATABASE} all 127.0.0.1/32 trust clientcert=verify-full\n\
                 hostssl all all 127.0.0.1/32 trust"
            )),
            files: vec![
                ("server.crt".into(), read("server.crt")),
                ("server.key".into(), read("server.key")),
                ("ca.crt".into(), read("ca.crt")),
            ],
            ..ClusterOptions::default()
        })
        .await;
        let admin = cluster
            .admin_client()
            .await
            .expect("onceq-testdb: admin connection");
        admin
            .batch_execute(&format!("CREATE DATABASE {CERT_DATABASE}"))
            .await
            .expect("onceq-testdb: create the certificate database");
        TlsCluster {
            files: TlsFiles {
                ca: d.join("ca.crt"),
                other_ca: d.join("other-ca.crt"),
                client_cert: d.join("client.crt"),
                client_key: d.join("client.key"),
                dir,
            },
            cluster,
        }
    }

    /// `postgres://postgres@HOST:PORT/DATABASE?PARAMS` (`params` may be empty).
    pub fn url(&self, host: &str, database: &str, params: &str) -> String {
        let port = self.cluster.port();
        let query = if params.is_empty() {
            String::new()
        } else {
            format!("?{params}")
        };
        format!("postgres://postgres@{host}:{port}/{database}{query}")
    }
}

fn make_ca(dir: &Path, name: &str, cn: &str) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "2",
            "-subj",
            &format!("/CN={cn}"),
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
            "-keyout",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.crt"),
        ],
    );
}

fn make_leaf(dir: &Path, name: &str, cn: &str, extensions: &str) {
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-subj",
            &format!("/CN={cn}"),
            "-keyout",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.csr"),
        ],
    );
    let ext = dir.join(format!("{name}.ext"));
    std::fs::write(&ext, format!("basicConstraints=CA:FALSE\n{extensions}\n"))
        .expect("write the extensions file");
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &format!("{name}.csr"),
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            &format!("{name}.ext"),
            "-out",
            &format!("{name}.crt"),
        ],
    );
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("onceq-testdb: run openssl (is it installed?): {e}"));
    assert!(
        out.status.success(),
        "onceq-testdb: openssl {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
