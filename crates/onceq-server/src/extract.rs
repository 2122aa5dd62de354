//! Request extractors whose failures are contract errors.
//!
//! [`Body`] reads a JSON body whatever its `content-type` (clients of the
//! hosted queue do not all send one), treats an empty body as `{}`, and
//! turns every decoding failure into 400 `INVALID_PARAMS` naming the field
//! (via `serde_path_to_error`). A body over the size limit is 413; one that
//! does not arrive within `body_read_timeout` is 408 (slow-loris bodies).

use axum::{
    extract::{FromRequest, FromRequestParts, Request},
    http::request::Parts,
};
use onceq_types::ErrorCode;
use onceq_types::request::{Fields, near_miss};
use serde::de::DeserializeOwned;

use crate::{ApiError, AppState, validate};

/// A JSON request body.
pub struct Body<T>(pub T);

impl<T: DeserializeOwned + Fields> FromRequest<AppState> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, ApiError> {
        let bytes = read_bytes(req.into_body(), state).await?;
        parse_body(&bytes).map(Body)
    }
}

/// A request body's bytes, within the size limit (413) and the read timeout
/// (408): what [`Body`] decodes, and what the call ledger fingerprints
/// (`crate::idempotency`) before handing it on.
pub async fn read_bytes(
    body: axum::body::Body,
    state: &AppState,
) -> Result<axum::body::Bytes, ApiError> {
    let limit = state.config.max_body_bytes;
    let timeout = state.config.body_read_timeout;
    let read = axum::body::to_bytes(body, limit);
    tokio::time::timeout(timeout, read)
        .await
        .map_err(|_| {
            ApiError::new(
                ErrorCode::RequestTimeout,
                format!(
                    "the request body did not arrive within {} s",
                    timeout.as_secs_f64()
                ),
            )
        })?
        .map_err(|e| {
            if is_length_limit(&e) {
                ApiError::new(
                    ErrorCode::QueueMessageTooLarge,
                    format!("request body is larger than {limit} bytes"),
                )
            } else {
                ApiError::invalid(format!("could not read the request body: {e}"))
            }
        })
}

/// A request body as [`Body`] reads it: empty (or only whitespace) is
/// `{}`, anything else must be one JSON object.
pub fn parse_body<T: DeserializeOwned + Fields>(bytes: &[u8]) -> Result<T, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        parse(b"{}")
    } else {
        parse(bytes)
    }
}

/// Decodes JSON, naming the failing field in the error. Unknown keys are
/// ignored, except the camelCase spelling of one of the call's fields
/// (`onceq_types::request::near_miss`): 400 naming both spellings.
pub fn parse<T: DeserializeOwned + Fields>(bytes: &[u8]) -> Result<T, ApiError> {
    // The decoder would take an array for a struct, its items as the
    // fields in declaration order (`["q", 1]` a publish, `[]` a body of
    // optional fields): a body is one object, so anything else is refused
    // before it is decoded.
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first.is_some_and(|&b| b != b'{') {
        return Err(ApiError::invalid("body must be a JSON object").with_hint(
            "send the call's fields as one object, {\"field\": value, ...} (docs/api.md)",
        ));
    }
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    let mut misspelt: Option<(String, &'static str)> = None;
    let mut note = |path: serde_ignored::Path<'_>| {
        if misspelt.is_none() {
            misspelt = near_miss_of::<T>(&path);
        }
    };
    let seen = serde_ignored::Deserializer::new(&mut *de, &mut note);
    let value = serde_path_to_error::deserialize(seen).map_err(|e| {
        let path = known_path(e.path());
        let inner = e.into_inner();
        if path.is_empty() {
            if inner.is_data() {
                ApiError::invalid(format!("body must be a JSON object: {inner}"))
            } else {
                ApiError::invalid(format!("malformed JSON body: {inner}"))
            }
        } else {
            ApiError::invalid(format!("{path}: {inner}"))
        }
    })?;
    // Trailing bytes after the object mean the client sent something else
    // than it thinks; refuse rather than silently use a prefix.
    de.end()
        .map_err(|e| ApiError::invalid(format!("malformed JSON body: {e}")))?;
    if let Some((key, field)) = misspelt {
        return Err(ApiError::invalid(format!(
            "unknown field `{key}`; did you mean `{field}`?"
        ))
        .with_hint(format!(
            "fields are snake_case: send `{field}` (an unknown field would be ignored, and this one matters)"
        )));
    }
    Ok(value)
}

/// The near miss an ignored key at `path` is: checked against the body's
/// own fields at the top, against a listed body's (publish_batch's
/// messages) one level down.
fn near_miss_of<T: Fields>(path: &serde_ignored::Path<'_>) -> Option<(String, &'static str)> {
    use serde_ignored::Path;
    let Path::Map { parent, key } = path else {
        return None;
    };
    let fields = match unwrapped(parent) {
        Path::Root => T::FIELDS,
        Path::Seq { parent, .. } => match unwrapped(parent) {
            Path::Map { parent, key } if matches!(unwrapped(parent), Path::Root) => T::nested(key),
            _ => return None,
        },
        _ => return None,
    };
    near_miss(key, fields).map(|f| (key.clone(), f))
}

/// `path` without the `Option`s and newtypes around it.
fn unwrapped<'a>(mut path: &'a serde_ignored::Path<'a>) -> &'a serde_ignored::Path<'a> {
    use serde_ignored::Path;
    while let Path::Some { parent } | Path::NewtypeStruct { parent } = path {
        path = parent;
    }
    path
}

/// The path of a decoding failure without its unknown segments: where the
/// body ends early, or a payload's inner JSON is broken, the decoder knows
/// no field name there and says `?`, which only hides the position that
/// follows ("?: EOF while parsing a value at line 1 column 13").
fn known_path(path: &serde_path_to_error::Path) -> String {
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            serde_path_to_error::Segment::Unknown => break,
            serde_path_to_error::Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            serde_path_to_error::Segment::Map { key }
            | serde_path_to_error::Segment::Enum { variant: key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
        }
    }
    out
}

fn is_length_limit(e: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if s.to_string().contains("length limit exceeded") {
            return true;
        }
        source = s.source();
    }
    false
}

/// The `{queue}` path segment, validated as a queue name.
pub struct QueuePath(pub String);

impl<S: Send + Sync> FromRequestParts<S> for QueuePath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let axum::extract::Path(name) =
            axum::extract::Path::<String>::from_request_parts(parts, state)
                .await
                .map_err(|e| ApiError::invalid(format!("queue (in the path): {e}")))?;
        validate::queue_name("queue", &name)?;
        Ok(QueuePath(name))
    }
}
