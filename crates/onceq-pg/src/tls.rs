//! libpq's `sslmode`, `sslrootcert`, `sslcert` and `sslkey`, made into a
//! rustls client configuration.
//!
//! | sslmode | TLS | server certificate checked |
//! |---|---|---|
//! | `disable` | never | — |
//! | `prefer` (default) | if the server offers it | only against an explicit `sslrootcert` (chain, not the name), as libpq does |
//! | `require` | always | likewise |
//! | `verify-ca` | always | chain against `sslrootcert` (default: the system roots) |
//! | `verify-full` | always | chain and host name |
//!
//! `allow` (plain first, TLS on refusal) is refused: tokio-postgres cannot
//! fall back that way, and `prefer` or `disable` says what is meant.

use std::{path::Path, sync::Arc};

use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
    client::{
        WebPkiServerVerifier,
        danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
    },
    crypto::CryptoProvider,
    pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime, pem::PemObject},
};
use tokio_postgres::config::SslMode;

use crate::PgError;

/// The parameters this module reads, taken out of the connection string.
pub(crate) const KEYS: &[&str] = &["sslmode", "sslrootcert", "sslcert", "sslkey"];

/// Parameters of libpq's we refuse rather than ignore.
pub(crate) const REFUSED: &[(&str, &str)] = &[
    (
        "sslpassword",
        "encrypted client keys are not supported: decrypt the key file",
    ),
    ("sslcrl", "certificate revocation lists are not supported"),
    (
        "sslcrldir",
        "certificate revocation lists are not supported",
    ),
];

/// How the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// Not at all (no TLS, or `prefer`/`require` without `sslrootcert`).
    Nothing,
    /// Its chain, to a trusted root (`verify-ca`; `prefer`/`require` with
    /// `sslrootcert`).
    Chain,
    /// Its chain and the host name (`verify-full`).
    ChainAndName,
}

/// The TLS part of a connection string.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TlsParams {
    /// `sslmode`, as written.
    pub sslmode: Option<String>,
    /// `sslrootcert`: a PEM file of trusted roots, or `system`.
    pub sslrootcert: Option<String>,
    /// `sslcert`: the client's certificate chain (PEM).
    pub sslcert: Option<String>,
    /// `sslkey`: the client's private key (PEM).
    pub sslkey: Option<String>,
}

impl TlsParams {
    pub(crate) fn set(&mut self, key: &str, value: String) {
        let slot = match key {
            "sslmode" => &mut self.sslmode,
            "sslrootcert" => &mut self.sslrootcert,
            "sslcert" => &mut self.sslcert,
            _ => &mut self.sslkey,
        };
        *slot = Some(value);
    }

    /// The driver's mode and how certificates are checked.
    pub(crate) fn mode(&self) -> Result<(SslMode, Verify), PgError> {
        let explicit_roots = self.sslrootcert.is_some();
        let unverified = if explicit_roots {
            Verify::Chain
        } else {
            Verify::Nothing
        };
        Ok(match self.sslmode.as_deref().unwrap_or("prefer") {
            "disable" => (SslMode::Disable, Verify::Nothing),
            "prefer" => (SslMode::Prefer, unverified),
            "require" => (SslMode::Require, unverified),
            "verify-ca" => (SslMode::Require, Verify::Chain),
            "verify-full" => (SslMode::Require, Verify::ChainAndName),
            "allow" => {
                return Err(PgError::new(
                    "sslmode=allow is not supported: use sslmode=prefer (TLS when the server offers it) or sslmode=disable",
                ));
            }
            other => {
                return Err(PgError::new(format!(
                    "sslmode {other:?} is not one of disable, prefer, require, verify-ca, verify-full"
                )));
            }
        })
    }

    /// The rustls configuration these parameters ask for.
    pub(crate) fn client_config(&self, verify: Verify) -> Result<ClientConfig, PgError> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| PgError::new(format!("TLS: {e}")))?;
        let chain = match verify {
            Verify::Nothing => None,
            Verify::Chain | Verify::ChainAndName => Some(
                WebPkiServerVerifier::builder_with_provider(
                    Arc::new(self.roots()?),
                    provider.clone(),
                )
                .build()
                .map_err(|e| PgError::new(format!("sslrootcert: {e}")))?,
            ),
        };
        let verifier = Arc::new(ServerCheck {
            provider,
            chain,
            name: verify == Verify::ChainAndName,
        });
        let builder = builder
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        match (&self.sslcert, &self.sslkey) {
            (None, None) => Ok(builder.with_no_client_auth()),
            (Some(cert), Some(key)) => {
                let chain = read_certs(cert, "sslcert")?;
                let key = PrivateKeyDer::from_pem_file(key)
                    .map_err(|e| PgError::new(format!("sslkey {key}: {e}")))?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| PgError::new(format!("sslcert/sslkey: {e}")))
            }
            (Some(_), None) => Err(PgError::new("sslcert is set but sslkey is not: give both")),
            (None, Some(_)) => Err(PgError::new("sslkey is set but sslcert is not: give both")),
        }
    }

    /// `sslrootcert`'s certificates, or the system's (also for `system`).
    fn roots(&self) -> Result<RootCertStore, PgError> {
        let mut roots = RootCertStore::empty();
        match self.sslrootcert.as_deref() {
            Some(file) if file != "system" => {
                let (added, _) = roots.add_parsable_certificates(read_certs(file, "sslrootcert")?);
                if added == 0 {
                    return Err(PgError::new(format!(
                        "sslrootcert {file}: no usable CA certificate in it"
                    )));
                }
            }
            _ => {
                let found = rustls_native_certs::load_native_certs();
                roots.add_parsable_certificates(found.certs);
                if roots.is_empty() {
                    return Err(PgError::new(
                        "no system root certificates found (install ca-certificates, or set sslrootcert to the server's CA file)",
                    ));
                }
            }
        }
        Ok(roots)
    }
}

fn read_certs(file: &str, what: &str) -> Result<Vec<CertificateDer<'static>>, PgError> {
    let fail = |e: &dyn std::fmt::Display| PgError::new(format!("{what} {file}: {e}"));
    if !Path::new(file).is_file() {
        return Err(fail(&"no such file"));
    }
    let certs = CertificateDer::pem_file_iter(file)
        .map_err(|e| fail(&e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| fail(&e))?;
    if certs.is_empty() {
        return Err(fail(&"no PEM certificate in it"));
    }
    Ok(certs)
}

/// The server's certificate checked as a [`Verify`] says: not at all
/// (`prefer`/`require` without a CA: the link is encrypted, the server not
/// authenticated, libpq's meaning of those modes), its chain (`verify-ca`;
/// rustls checks the name after the chain, so a name mismatch means the
/// chain was good), or chain and name (`verify-full`). The handshake's
/// signatures are checked in every mode, so the key exchange is with the
/// holder of the certificate shown.
#[derive(Debug)]
struct ServerCheck {
    provider: Arc<CryptoProvider>,
    chain: Option<Arc<WebPkiServerVerifier>>,
    name: bool,
}

impl ServerCertVerifier for ServerCheck {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.name => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(sslmode: Option<&str>, rootcert: bool) -> Result<(SslMode, Verify), PgError> {
        TlsParams {
            sslmode: sslmode.map(Into::into),
            sslrootcert: rootcert.then(|| "/ca.pem".into()),
            ..TlsParams::default()
        }
        .mode()
    }

    #[test]
    fn modes_read_as_libpq_reads_them() {
        use SslMode::*;
        use Verify::*;
        assert_eq!(mode(None, false).unwrap(), (Prefer, Nothing));
        assert_eq!(mode(Some("disable"), true).unwrap(), (Disable, Nothing));
        assert_eq!(mode(Some("prefer"), true).unwrap(), (Prefer, Chain));
        assert_eq!(mode(Some("require"), false).unwrap(), (Require, Nothing));
        assert_eq!(mode(Some("require"), true).unwrap(), (Require, Chain));
        assert_eq!(mode(Some("verify-ca"), false).unwrap(), (Require, Chain));
        assert_eq!(
            mode(Some("verify-full"), false).unwrap(),
            (Require, ChainAndName)
        );
        let allow = mode(Some("allow"), false).unwrap_err().to_string();
        assert!(allow.contains("sslmode=prefer"), "{allow}");
        assert!(mode(Some("verify_full"), false).is_err());
    }

    #[test]
    fn files_that_are_missing_or_half_given_are_named() {
        let missing = TlsParams {
            sslrootcert: Some("/nonexistent/ca.pem".into()),
            ..TlsParams::default()
        };
        let e = missing
            .client_config(Verify::Chain)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "sslrootcert /nonexistent/ca.pem: no such file");
        let half = TlsParams {
            sslcert: Some("/c.pem".into()),
            ..TlsParams::default()
        };
        let e = half.client_config(Verify::Nothing).unwrap_err().to_string();
        assert!(e.contains("sslkey is not"), "{e}");
    }
}
