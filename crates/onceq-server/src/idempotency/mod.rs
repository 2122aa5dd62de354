//! `Idempotency-Key` on every mutating call (queue-api-2.md §4): the call
//! ledger in front of a route's handler.
//!
//! The design is the toolkit's request ledger (`onceq::idempotency`, whose
//! [`Fingerprint`] it uses), kept in the server's own store through the
//! `Store` seam (`ledger_claim`/`complete`/`release`/`purge`, both
//! backends, the same states), so every server sharing a database agrees:
//!
//! | a call with key K finds…                       | answer                                              |
//! |------------------------------------------------|-----------------------------------------------------|
//! | no header                                      | the handler, untouched (no store call)              |
//! | nothing (or an entry past the window)          | claim K, run the handler, record a 200 answer      |
//! | K answered, same request, a key allowed it now | the recorded answer, `metadata.idempotent_replay: true`, `cost_usd: 0`; nothing done |
//! | K answered, same request, a narrower key       | 403 `FORBIDDEN`, as the call itself would answer (`needs`) |
//! | K in flight, lease running                     | 409 `REQUEST_IN_FLIGHT` + `Retry-After`             |
//! | K in flight, lease over (its request died)     | take the claim over, run the handler again          |
//! | K used with a different request                | 422 `IDEMPOTENCY_KEY_REUSED`                        |
//! | the handler refused (4xx) or failed (5xx)      | the claim is released: nothing was done, so a retry is a first try |
//! | a new K past the project's bound (`bound`)     | 429 `RATE_LIMITED` + `Retry-After`, the claim released; nothing done |
//!
//! A request is its method, its path (path parameters included) and its
//! body (JSON in canonical form, so key order and spacing do not matter).
//! Keys are scoped by (project, capability): the same key on another
//! capability, or from another project, is another key. Entries live for
//! the dedupe window (`--dedupe-window`, default 24 h) and are purged by the
//! purger.
//!
//! A call that changed nothing (pausing a paused schedule) marks its
//! answer [`Unchanged`]: the ledger keeps a small mark instead of the
//! answer (which may echo a large record), and a replay asks the handler
//! again with [`Reread`], which reads the record and changes nothing. So
//! such a replay shows the record as it is then; the call did nothing, so
//! there is no effect of its own to report (docs/api.md).
//!
//! # Opting a route in
//!
//! One line: its capability in [`IDEMPOTENT`]. `app::routes` puts
//! [`guard_call`] inside that capability's guard (so the caller's project
//! is known), and the OpenAPI document gains the `Idempotency-Key` header
//! parameter on its operations (`openapi::idempotency_header`).

mod bound;
mod needs;
mod record;

pub use needs::Needs;
pub use record::{Reread, Unchanged};

use axum::{
    extract::{Request, State},
    http::{HeaderMap, header::HeaderName},
    middleware::Next,
    response::{IntoResponse, Response},
};
use jiff::{SignedDuration, Timestamp};
use onceq::idempotency::Fingerprint;
use onceq_store::{LedgerClaim, LedgerClaimOutcome, LedgerKey};
use onceq_types::capability::{self as cap, CapabilityDef};
use onceq_types::ledger::retry_after_secs;

use crate::{ApiError, AppState, caller::Caller, extract, input};

/// The capabilities whose routes honour `Idempotency-Key` through the call
/// ledger. Publish and publish_batch are not here: they keep their
/// per-message keys (the header is the message's key, or the batch's item
/// keys' stem), which outlive a call's answer. Nor are the admin calls that
/// answer a new key's secret (`admin.keys.create`, `admin.keys.rotate`):
/// the ledger would keep the secret, which the server never stores.
pub const IDEMPOTENT: &[&CapabilityDef] = &[
    &cap::CREATE,
    &cap::QUEUE_UPDATE,
    &cap::DELETE,
    &cap::PURGE,
    &cap::ACK,
    &cap::ACK_BATCH,
    &cap::NACK,
    &cap::EXTEND,
    &cap::REDRIVE,
    &cap::PUSH_SUBSCRIBE,
    &cap::PUSH_UNSUBSCRIBE,
    &cap::ADMIN_KEYS_REVOKE,
    &cap::ADMIN_KEYS_LIMITS,
    &cap::ADMIN_PROJECTS_LIMITS,
    &cap::CANCEL,
    &cap::QUEUE_PAUSE,
    &cap::QUEUE_RESUME,
    &cap::CRON_CREATE,
    &cap::CRON_UPDATE,
    &cap::CRON_PAUSE,
    &cap::CRON_RESUME,
    &cap::CRON_DELETE,
    &cap::WEBHOOK_REGISTER,
    &cap::WEBHOOK_DELETE,
];

/// Whether `capability`'s routes go through the call ledger.
pub fn is_idempotent(capability: &CapabilityDef) -> bool {
    IDEMPOTENT.iter().any(|c| c.id == capability.id)
}

/// How long a claim holds its key: a retry sooner is told 409, one later
/// takes the claim over (its first request died). Above any handler's run:
/// each makes a few store calls, each bounded by the store timeout.
pub const CLAIM_LEASE: SignedDuration = SignedDuration::from_secs(60);

/// `Idempotency-Key`.
pub const HEADER: HeaderName = HeaderName::from_static("idempotency-key");

/// Middleware: the call ledger around one keyed call (see the module doc).
pub async fn guard_call(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if !req.headers().contains_key(HEADER) {
        return next.run(req).await;
    }
    match claimed(&state, req).await {
        Ok(Claimed::Run {
            req,
            ledger,
            caller,
        }) => {
            let res = next.run(*req).await;
            record::finish(&state, ledger, &caller, res).await
        }
        Ok(Claimed::Answered(res)) => res,
        Ok(Claimed::Reread(mut req)) => {
            req.extensions_mut().insert(Reread);
            record::marked(next.run(*req).await).await
        }
        Err(e) => e.into_response(),
    }
}

/// A claim held by this request: where its answer is recorded.
pub(crate) struct Held {
    pub key: LedgerKey,
    pub token: String,
}

enum Claimed {
    /// Run the handler with this request; record into `ledger`, with
    /// what `caller`'s checks passed.
    Run {
        req: Box<Request>,
        ledger: Held,
        caller: Box<Caller>,
    },
    /// Answered from the ledger (a replay).
    Answered(Response),
    /// A replay of an [`Unchanged`] answer: the handler reads it again.
    Reread(Box<Request>),
}

async fn claimed(state: &AppState, req: Request) -> Result<Claimed, ApiError> {
    let key = the_key(req.headers())?;
    let caller = req.extensions().get::<Caller>().cloned().ok_or_else(|| {
        ApiError::from_store(
            onceq_store::StoreError::internal("idempotent route has no auth guard"),
            "",
        )
    })?;
    let (parts, body) = req.into_parts();
    let bytes = extract::read_bytes(body, state).await?;
    let path = parts
        .uri
        .path_and_query()
        .map_or(parts.uri.path(), |p| p.as_str());
    // Every body is read as JSON whatever its Content-Type (`extract`), so
    // it is fingerprinted as JSON too: a retry sent with another (or no)
    // Content-Type is the same call.
    let as_json = HeaderMap::from_iter([(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    )]);
    let fingerprint = Fingerprint::of_request(&parts.method, path, &as_json, &bytes);
    let now = state.clock.now();
    let ledger_key = LedgerKey {
        project: caller.project.clone(),
        capability: caller.capability().id.to_owned(),
        key: key.clone(),
    };
    let claim = LedgerClaim {
        key: ledger_key.clone(),
        fingerprint: *fingerprint.as_bytes(),
        token: uuid::Uuid::new_v4().to_string(),
        locked_until: later(now, CLAIM_LEASE),
        expires_at: later(now, window(state).max(CLAIM_LEASE)),
        now,
    };
    let token = claim.token.clone();
    let outcome = state
        .store()
        .ledger_claim(claim)
        .await
        .map_err(|e| ApiError::from_store(e, ""))?;
    let replay = matches!(outcome, LedgerClaimOutcome::Completed(_));
    let req = || Box::new(Request::from_parts(parts, axum::body::Body::from(bytes)));
    if let LedgerClaimOutcome::Completed(answer) = &outcome {
        // A replay only to a key allowed the call now (`needs`).
        Needs::of(answer).check(&caller)?;
        if record::is_unchanged(answer) {
            caller.call.replayed();
            return Ok(Claimed::Reread(req()));
        }
    }
    match answer_for(outcome, &key, caller.capability().id, now) {
        None => {
            let held = Held {
                key: ledger_key,
                token,
            };
            if let Err(refused) = bound::check(state, &held, now).await {
                record::release(state, held).await;
                return Err(refused);
            }
            Ok(Claimed::Run {
                req: req(),
                ledger: held,
                caller: Box::new(caller),
            })
        }
        Some(answer) => {
            if replay {
                caller.call.replayed();
            }
            Ok(Claimed::Answered(answer))
        }
    }
}

/// What the call ledger answers by itself for a claim's outcome: the
/// replay of a recorded answer, 409 `REQUEST_IN_FLIGHT` with
/// `Retry-After`, or 422 `IDEMPOTENCY_KEY_REUSED`; `None` when the claim is
/// held and the call runs. The one mapping from the shared ledger's
/// verdicts to this server's HTTP (the case table's `http` expectations
/// check it: `tests/it/idempotency/cases.rs`).
pub fn answer_for(
    outcome: LedgerClaimOutcome,
    key: &str,
    capability: &str,
    now: Timestamp,
) -> Option<Response> {
    match outcome {
        LedgerClaimOutcome::Claimed => None,
        LedgerClaimOutcome::Completed(answer) => Some(record::replay(answer)),
        LedgerClaimOutcome::InFlight { locked_until } => Some(
            ApiError::in_flight(retry_after_secs(locked_until, now), key).into_response(),
        ),
        LedgerClaimOutcome::Mismatch => Some(
            ApiError::new(
                onceq_types::ErrorCode::IdempotencyKeyReused,
                format!(
                    "Idempotency-Key {key:?} was already used with a different request to {capability}"
                ),
            )
            .into_response(),
        ),
    }
}

/// The one `Idempotency-Key` header, by the rule publish uses.
fn the_key(headers: &HeaderMap) -> Result<String, ApiError> {
    let mut values = headers.get_all(HEADER).iter();
    let (Some(v), None) = (values.next(), values.next()) else {
        return Err(ApiError::invalid("send exactly one Idempotency-Key header"));
    };
    input::idempotency_header(v)
}

/// How long an answer is replayed: the dedupe window publish keys have.
fn window(state: &AppState) -> SignedDuration {
    SignedDuration::try_from(state.config.dedupe_window).unwrap_or(SignedDuration::MAX)
}

fn later(now: Timestamp, d: SignedDuration) -> Timestamp {
    now.saturating_add(d).unwrap_or(Timestamp::MAX)
}
