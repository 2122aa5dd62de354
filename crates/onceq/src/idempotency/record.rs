//! After the handler answered: record the answer, or release the claim.

use axum::body::{Body, Bytes, HttpBody};
use http::{Response, StatusCode};
use http_body_util::BodyExt;

use super::{
    layer::Config,
    ledger::{Claim, StoredResponse},
    response::{self, refusal},
    service::BoxError,
};

/// The handler answered: record a final answer that is not a server error
/// (hole 9: the seed recorded only its 202), release the claim otherwise.
pub(crate) async fn record<ResBody>(
    config: &Config,
    claim: &Claim,
    res: Response<ResBody>,
) -> Response<Body>
where
    ResBody: HttpBody<Data = Bytes> + Send + 'static,
    ResBody::Error: Into<BoxError>,
{
    // Boxed at once: the handler's body type need not be Send-safe to hold
    // across awaits, axum's is.
    let (head, body) = res.into_parts();
    let body = Body::new(body);
    if head.status.is_server_error() {
        // Like the seed's DELETE after a failed publish: the retry must run.
        release(config, claim, "the handler answered a server error").await;
        return Response::from_parts(head, body);
    }
    // Only bodies of known, bounded size are buffered: a streamed body
    // passes through untouched (it could not be replayed whole anyway).
    let fits = body
        .size_hint()
        .upper()
        .is_some_and(|n| n <= config.max_response_body as u64);
    if !fits {
        release(
            config,
            claim,
            "the answer is too large or streamed to record",
        )
        .await;
        return Response::from_parts(head, body);
    }
    let bytes = match body.collect().await {
        Ok(c) => c.to_bytes(),
        Err(e) => {
            tracing::error!(error = %e, "the handler's response body failed");
            release(config, claim, "the answer's body failed").await;
            return refusal(
                StatusCode::INTERNAL_SERVER_ERROR,
                "INTERNAL",
                "the response could not be produced",
            );
        }
    };
    let stored = StoredResponse::new(
        head.status,
        response::recordable_headers(&head.headers),
        bytes.clone(),
    );
    match complete(config, claim, &stored).await {
        Ok(true) => {}
        // The lease ran out and a retry took the claim over: that retry
        // records its own (equivalent) answer.
        Ok(false) => {
            tracing::warn!(key = %claim.key, "claim taken over before the answer was recorded")
        }
        // The client still gets the answer; the unrecorded claim's lease
        // lets a retry take over (and downstream keys dedupe the rerun).
        Err(e) => tracing::error!(error = %e, key = %claim.key, "recording the answer failed"),
    }
    Response::from_parts(head, Body::from(bytes))
}

/// Records the answer, retrying a failing ledger briefly: a database that
/// blinks between the handler and the record would otherwise leave the
/// claim in flight until its lease ends (safe, but retries get 409 until
/// then). Bounded so that the client's answer is never held for long.
async fn complete(
    config: &Config,
    claim: &Claim,
    stored: &StoredResponse,
) -> Result<bool, super::ledger::LedgerError> {
    const PAUSES_MS: [u64; 2] = [50, 250];
    let mut attempt = 0;
    loop {
        let now = config.clock.now();
        let result = config
            .ledger
            .complete(&claim.scope, &claim.key, &claim.token, stored, now)
            .await;
        match result {
            Err(e) if attempt < PAUSES_MS.len() => {
                tracing::warn!(error = %e, key = %claim.key, "recording the answer failed; retrying");
                tokio::time::sleep(std::time::Duration::from_millis(PAUSES_MS[attempt])).await;
                attempt += 1;
            }
            other => return other,
        }
    }
}

/// Best-effort release; when it fails the lease covers it (hole 4).
pub(crate) async fn release(config: &Config, claim: &Claim, why: &str) {
    let now = config.clock.now();
    match config
        .ledger
        .release(&claim.scope, &claim.key, &claim.token, now)
        .await
    {
        Ok(_) => tracing::debug!(key = %claim.key, why, "claim released"),
        Err(e) => tracing::error!(
            error = %e, key = %claim.key, why,
            "releasing the claim failed; a retry takes it over when the lease ends"
        ),
    }
}
