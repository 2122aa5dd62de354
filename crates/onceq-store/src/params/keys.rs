//! API keys.

use jiff::Timestamp;
use onceq_types::scope::KeyScope;

/// `key_insert`: store a new API key (its hash only) for a project, creating
/// the project if needed.
#[derive(Debug, Clone)]
pub struct KeyInsert {
    /// The project the key belongs to.
    pub project: String,
    /// Public, non-secret id of the key (shown in listings, used to revoke).
    pub key_id: String,
    /// SHA-256 of the whole secret key.
    pub key_hash: Vec<u8>,
    /// Free text for operators.
    pub label: Option<String>,
    /// What the key may do (default: everything).
    pub scope: KeyScope,
    /// When the key stops authenticating by itself (`None`: never).
    pub expires_at: Option<Timestamp>,
    /// The time of the call.
    pub now: Timestamp,
}

/// An API key as stored (never the secret).
#[derive(Debug, Clone, PartialEq)]
pub struct KeyRecord {
    /// Public id.
    pub key_id: String,
    /// Owning project.
    pub project: String,
    /// Free text.
    pub label: Option<String>,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it was revoked; revoked keys never authenticate.
    pub revoked_at: Option<Timestamp>,
    /// What the key may do.
    pub scope: KeyScope,
    /// When it stops authenticating; the server compares it with its clock.
    pub expires_at: Option<Timestamp>,
    /// Its own rate limit, overriding the server's per-key default.
    pub rate: Option<crate::RateLimit>,
}
