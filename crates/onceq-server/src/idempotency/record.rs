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

/// Set by a handler on an answer when its call changed nothing: the
/// ledger keeps `UNCHANGED` in its place, not the answer.
#[derive(Debug, Clone, Copy)]
pub struct Unchanged;

/// Set on the request a replay of an [`Unchanged`] answer runs with: the
/// handler answers what it would, reading, and changes nothing.
#[derive(Debug, Clone, Copy)]
pub struct Reread;

/// The header the kept mark carries (a header, not the body, so no answer
/// the handler could give is mistaken for it); its body is `{}`.
const UNCHANGED: (&str, &str) = ("onceq-answer", "unchanged");

/// Whether `answer` is the mark of an [`Unchanged`] answer.
pub(super) fn is_unchanged(answer: &LedgerAnswer) -> bool {
    answer
        .headers
        .iter()
        .any(|(n, v)| n == UNCHANGED.0 && v == UNCHANGED.1)
}

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
    let unchanged = res.extensions().get::<Unchanged>().is_some();
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
        answer: match unchanged {
            // The entries kept are what a replay must check first
            // (`needs`) and, for a no-op, the mark that stands in for it.
            true => LedgerAnswer {
                status: parts.status.as_u16(),
                headers: vec![
                    (UNCHANGED.0.to_owned(), UNCHANGED.1.to_owned()),
                    caller.needs().recorded(),
                ],
                body: b"{}".to_vec(),
            },
            false => LedgerAnswer {
                status: parts.status.as_u16(),
                // The replay sets its own (content type, replay marker).
                headers: vec![caller.needs().recorded()],
                body: bytes.to_vec(),
            },
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

pub(super) async fn release(state: &AppState, held: Held) {
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
    as_replay(status, answer.body)
}

/// The handler's answer to a [`Reread`], marked as a replay as
/// [`replay`] marks a kept one; a refusal (the record has gone since: 404)
/// goes out as it is.
pub(super) async fn marked(res: Response) -> Response {
    if res.status() != StatusCode::OK {
        return res;
    }
    match axum::body::to_bytes(res.into_body(), MAX_RECORDED).await {
        Ok(body) => as_replay(StatusCode::OK, body.to_vec()),
        Err(e) => {
            tracing::warn!(error = %e, "a reread answer could not be read");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

fn as_replay(status: StatusCode, body: Vec<u8>) -> Response {
    let body = match serde_json::from_slice::<serde_json::Value>(&body) {
        Ok(mut envelope) => {
            if let Some(obj) = envelope.as_object_mut() {
                let meta = envelope::metadata(0.0, true);
                obj.insert(
                    "metadata".to_owned(),
                    serde_json::to_value(meta).unwrap_or_default(),
                );
            }
            serde_json::to_vec(&envelope).unwrap_or(body)
        }
        Err(_) => body,
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
