//! After the handler: record a 200 answer, or release the claim; and the
//! replay of a recorded answer with this request's metadata.

use axum::{
    body::Body,
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use onceq_store::{LedgerAnswer, LedgerComplete, LedgerRelease};

use super::Held;
use crate::{AppState, caller::Caller, envelope};

/// Largest answer recorded; a bigger one (none of today's routes makes
/// one) goes out unrecorded and its claim is released.
const MAX_RECORDED: usize = 1024 * 1024;

/// Records `res` if the call succeeded (200), else releases the claim: a
/// refused or failed call changed nothing (the contract's "nothing
/// half-done"), so its retry is a first try and may succeed.
pub(super) async fn finish(
    state: &AppState,
    held: Held,
    caller: &Caller,
    res: Response,
) -> Response {
    if res.status() != StatusCode::OK {
        release(state, held).await;
        return res;
    }
    let (parts, body) = res.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_RECORDED).await {
        Ok(b) => b,
        Err(e) => {
            tracing::warn!(error = %e, "answer not recorded in the call ledger");
            release(state, held).await;
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        }
    };
    let complete = LedgerComplete {
        key: held.key,
        token: held.token,
        answer: LedgerAnswer {
            status: parts.status.as_u16(),
            // The replay sets its own (content type, replay marker); the
            // one entry kept is what a replay must check first (`needs`).
            headers: vec![caller.needs().recorded()],
            body: bytes.to_vec(),
        },
        now: state.clock.now(),
    };
    // A failed record leaves the claim to its lease: a retry after it runs
    // the call again, as after a crash. The caller still gets its answer.
    match state.store().ledger_complete(complete).await {
        Ok(true) => {}
        Ok(false) => tracing::warn!("call-ledger claim was taken over before its answer"),
        Err(e) => tracing::warn!(error = %e, "answer not recorded in the call ledger"),
    }
    Response::from_parts(parts, Body::from(bytes))
}

async fn release(state: &AppState, held: Held) {
    let release = LedgerRelease {
        key: held.key,
        token: held.token,
    };
    if let Err(e) = state.store().ledger_release(release).await {
        tracing::warn!(error = %e, "call-ledger claim not released; its lease will end it");
    }
}

/// The recorded answer, with this request's metadata: its own request id
/// and latency, `cost_usd: 0` (replays are never charged) and
/// `idempotent_replay: true`; and `Idempotent-Replayed: true`.
pub(super) fn replay(answer: LedgerAnswer) -> Response {
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::OK);
    let body = match serde_json::from_slice::<serde_json::Value>(&answer.body) {
        Ok(mut envelope) => {
            if let Some(obj) = envelope.as_object_mut() {
                let meta = envelope::metadata(0.0, true);
                obj.insert(
                    "metadata".to_owned(),
                    serde_json::to_value(meta).unwrap_or_default(),
                );
            }
            serde_json::to_vec(&envelope).unwrap_or(answer.body)
        }
        Err(_) => answer.body,
    };
    let mut res = (status, body).into_response();
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    // The toolkit's layer marks its replays so too.
    res.headers_mut().insert(
        onceq::idempotency::IDEMPOTENT_REPLAYED,
        HeaderValue::from_static("true"),
    );
    res
}
