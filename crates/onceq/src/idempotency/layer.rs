//! [`IdempotencyLayer`]: the layer's configuration and builder.

use std::{sync::Arc, time::Duration};

use axum::body::Body;
use http::{Response, StatusCode, request::Parts};
use jiff::{SignedDuration, Timestamp};
use tower::Layer;

use super::{
    fingerprint::default_principal,
    ledger::{ClaimOutcome, Ledger},
    service::Idempotency,
};
use crate::{clock::Clock, failpoint::FailPoints};

/// Default claim lease: a retry arriving sooner is told "in flight"; one
/// arriving later takes the claim over.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);
/// Default retention: how long an answer is replayed.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(24 * 60 * 60);
/// Default request body limit (the body is buffered to fingerprint it).
pub const DEFAULT_MAX_BODY: usize = 1024 * 1024;
/// Default limit on a recorded response body.
pub const DEFAULT_MAX_RESPONSE_BODY: usize = 1024 * 1024;

/// What a request without `Idempotency-Key` gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MissingKey {
    /// 400 `IDEMPOTENCY_KEY_REQUIRED`.
    Refuse,
    /// A generated UUID v7, used like a client's key and echoed back.
    Generate,
    /// The handler runs without the ledger.
    PassThrough,
}

type PrincipalFn = dyn Fn(&Parts) -> Option<String> + Send + Sync;

#[derive(Clone)]
pub(crate) struct Config {
    pub ledger: Arc<dyn Ledger>,
    pub missing_key: MissingKey,
    pub lease: SignedDuration,
    pub retention: SignedDuration,
    pub mismatch_status: StatusCode,
    pub principal: Arc<PrincipalFn>,
    pub max_body: usize,
    pub max_response_body: usize,
    pub clock: Clock,
    pub fail_points: FailPoints,
}

/// Applies [`Idempotency`] to a service. Cheap to clone; builder methods
/// consume and return it.
///
/// Defaults: key required, 30 s lease, 24 h retention, 422 on a reused key,
/// principal = SHA-256 of `Authorization` (or `anonymous`), 1 MiB body
/// limits, the system clock.
#[derive(Clone)]
pub struct IdempotencyLayer {
    config: Config,
}

impl std::fmt::Debug for IdempotencyLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = &self.config;
        f.debug_struct("IdempotencyLayer")
            .field("missing_key", &c.missing_key)
            .field("lease", &c.lease)
            .field("retention", &c.retention)
            .field("mismatch_status", &c.mismatch_status)
            .field("max_body", &c.max_body)
            .field("max_response_body", &c.max_response_body)
            .finish_non_exhaustive()
    }
}

/// `std` durations beyond `SignedDuration`'s range (~292 billion years)
/// saturate; nobody means them literally.
fn signed(d: Duration) -> SignedDuration {
    SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX)
}

impl IdempotencyLayer {
    /// A layer recording into `ledger`, with the defaults above. Pass an
    /// `Arc<dyn Ledger>` to share one ledger with [`spawn_purger`](super::spawn_purger).
    pub fn new(ledger: impl Ledger) -> Self {
        Self {
            config: Config {
                ledger: Arc::new(ledger),
                missing_key: MissingKey::Refuse,
                lease: signed(DEFAULT_LEASE),
                retention: signed(DEFAULT_RETENTION),
                mismatch_status: StatusCode::UNPROCESSABLE_ENTITY,
                principal: Arc::new(default_principal),
                max_body: DEFAULT_MAX_BODY,
                max_response_body: DEFAULT_MAX_RESPONSE_BODY,
                clock: Clock::System,
                fail_points: FailPoints::new(),
            },
        }
    }

    /// `true` (default): a request without a key is refused with 400 (hole
    /// 7). `false`: it runs without the ledger — no replay, no protection.
    pub fn require_key(mut self, yes: bool) -> Self {
        self.config.missing_key = if yes {
            MissingKey::Refuse
        } else {
            MissingKey::PassThrough
        };
        self
    }

    /// A request without a key gets a generated UUID v7, used like a
    /// client's key (the handler sees it, downstream calls dedupe on it) and
    /// sent back in the `Idempotency-Key` response header so the client can
    /// retry with it.
    pub fn generate_missing_key(mut self) -> Self {
        self.config.missing_key = MissingKey::Generate;
        self
    }

    /// How long a claim holds the key. Pick it above the handler's longest
    /// run: a retry after the lease runs the handler again (safe only
    /// because downstream calls reuse the key, but wasted work).
    pub fn lease(mut self, d: Duration) -> Self {
        self.config.lease = signed(d);
        self
    }

    /// How long an entry (and so a replay) lives. Never shorter than the
    /// lease: an entry cannot expire while its claim is held.
    ///
    /// # Panics
    ///
    /// When `d` is zero.
    pub fn retention(mut self, d: Duration) -> Self {
        assert!(!d.is_zero(), "idempotency retention must be positive");
        self.config.retention = signed(d);
        self
    }

    /// The status for a key reused with a different request: 422 (the IETF
    /// draft, default) or 409 (the seed's choice).
    pub fn mismatch_status(mut self, s: StatusCode) -> Self {
        self.config.mismatch_status = s;
        self
    }

    /// Who the caller is (keys are scoped by caller and route). `None` means
    /// `anonymous`. Default: SHA-256 of the `Authorization` header.
    pub fn principal(
        mut self,
        f: impl Fn(&Parts) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.config.principal = Arc::new(f);
        self
    }

    /// Largest request body accepted (it is buffered to be fingerprinted);
    /// bigger is refused with 413.
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.config.max_body = bytes;
        self
    }

    /// Largest response body recorded. A bigger answer, or a streamed one
    /// whose size is not known up front, is sent through unrecorded and its
    /// claim released, so a retry runs the handler again.
    pub fn max_response_body(mut self, bytes: usize) -> Self {
        self.config.max_response_body = bytes;
        self
    }

    /// Where "now" comes from (leases, retention).
    pub fn clock(mut self, c: Clock) -> Self {
        self.config.clock = c;
        self
    }

    /// Fail points for crash tests ([`AFTER_CLAIM`](super::AFTER_CLAIM),
    /// [`AFTER_HANDLER`](super::AFTER_HANDLER)).
    pub fn fail_points(mut self, f: FailPoints) -> Self {
        self.config.fail_points = f;
        self
    }

    /// What this layer answers by itself for a claim's outcome: the replay
    /// of a recorded answer (marked `Idempotent-Replayed: true`), 409
    /// `REQUEST_IN_FLIGHT` with `Retry-After`, or the mismatch refusal;
    /// `None` for [`ClaimOutcome::Claimed`] (the handler runs). For custom
    /// [`Ledger`]s and their tests: the layer answers exactly this.
    pub fn answer_for(&self, outcome: ClaimOutcome, now: Timestamp) -> Option<Response<Body>> {
        super::response::for_outcome(outcome, self.config.mismatch_status, now)
    }
}

impl<S> Layer<S> for IdempotencyLayer {
    type Service = Idempotency<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Idempotency::new(inner, Arc::new(self.config.clone()))
    }
}
