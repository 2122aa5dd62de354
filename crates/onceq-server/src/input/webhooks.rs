//! `POST /v1/account/webhooks/register`: the body checked into what the
//! store keeps. The URL by the push SSRF guard's rules, the secret by push
//! subscriptions' (`routes::push`), the headers by message headers' rules
//! (`crate::headers`) plus a few of their own.

use std::collections::BTreeSet;

use axum::http::{HeaderName, HeaderValue};
use onceq_types::webhook::{
    ALL_EVENTS, EVENT_TYPES, MAX_DESCRIPTION_BYTES, MAX_WEBHOOK_HEADERS, RegisterWebhook,
};

use crate::{
    ApiError,
    outbound::{guard::Guard, secret},
    validate,
};

/// A registration, checked.
#[derive(Debug)]
pub struct WebhookInput {
    /// As the URL parser wrote it back.
    pub url: String,
    /// Known types or `*`, each once, in the order given.
    pub events: Vec<String>,
    /// The caller's secret, checked; `None`: generate one.
    pub secret: Option<String>,
    /// `""` when none.
    pub description: String,
    /// Canonical JSON, `None` when none.
    pub headers: Option<String>,
}

/// Header names a webhook may not set: the server's own (`onceq-*`) and
/// those that describe the request's framing.
const RESERVED: &[&str] = &[
    "content-type",
    "content-length",
    "host",
    "transfer-encoding",
    "connection",
    "user-agent",
];

/// `register`.
pub fn webhook_register(req: RegisterWebhook, guard: &Guard) -> Result<WebhookInput, ApiError> {
    let raw = validate::required("url", req.url)?;
    let url = guard.check_url("url", &raw).map_err(|e| {
        ApiError::invalid(e).with_hint(
            "use a public https:// URL; http:// and loopback hosts only where the operator \
             allows them (--push-allow-http, --push-allow-loopback)",
        )
    })?;
    let listed = validate::required("events", req.events)?;
    if listed.is_empty() {
        return Err(events_error("events must name at least one event type"));
    }
    let mut events: Vec<String> = Vec::new();
    for (i, e) in listed.into_iter().enumerate() {
        if e != ALL_EVENTS && !EVENT_TYPES.contains(&e.as_str()) {
            return Err(events_error(format!(
                "events[{i}] is {e:?}, which is not an event type"
            )));
        }
        if !events.contains(&e) {
            events.push(e);
        }
    }
    let secret = req.secret.map(secret::checked).transpose()?;
    let description = req.description.unwrap_or_default();
    if description.len() > MAX_DESCRIPTION_BYTES || description.chars().any(char::is_control) {
        return Err(ApiError::invalid(format!(
            "description must be at most {MAX_DESCRIPTION_BYTES} bytes without control \
             characters (got {} bytes)",
            description.len()
        )));
    }
    let headers = crate::headers::parse("headers", req.headers)?;
    check_headers(headers.as_deref())?;
    Ok(WebhookInput {
        url: url.into(),
        events,
        secret,
        description,
        headers,
    })
}

fn events_error(message: impl Into<String>) -> ApiError {
    ApiError::invalid(message).with_hint(format!(
        "event types: {}, or \"*\" for all",
        EVENT_TYPES.join(", ")
    ))
}

/// What message headers allow, and: at most [`MAX_WEBHOOK_HEADERS`], none
/// reserved, each value valid in an HTTP header.
fn check_headers(stored: Option<&str>) -> Result<(), ApiError> {
    let Some(stored) = stored else {
        return Ok(());
    };
    let headers = crate::headers::stored(Some(stored))?;
    if headers.len() > MAX_WEBHOOK_HEADERS {
        return Err(ApiError::invalid(format!(
            "headers holds {} entries; a webhook may add at most {MAX_WEBHOOK_HEADERS}",
            headers.len()
        )));
    }
    let reserved: BTreeSet<&str> = RESERVED.iter().copied().collect();
    for (name, value) in &headers {
        if name.starts_with("onceq-") || reserved.contains(name.as_str()) {
            return Err(ApiError::invalid(format!(
                "headers.{name} is set by the server on every delivery"
            ))
            .with_hint("onceq-* names and the request's framing headers are reserved"));
        }
        if HeaderName::from_bytes(name.as_bytes()).is_err() || HeaderValue::from_str(value).is_err()
        {
            return Err(ApiError::invalid(format!(
                "headers.{name} is not a valid HTTP header (visible ASCII and spaces only)"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use onceq_types::{ErrorCode, webhook::RegisterWebhook};

    use super::*;
    use crate::outbound::PushConfig;

    fn reg(body: serde_json::Value) -> Result<WebhookInput, ApiError> {
        let req: RegisterWebhook = serde_json::from_value(body).unwrap();
        webhook_register(req, &Guard::new(&PushConfig::default()))
    }

    #[test]
    fn names_the_bad_event_with_the_list_in_the_hint() {
        let e = reg(serde_json::json!({"url": "https://h.example/", "events": ["queue.created", "queue.exploded"]}))
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidParams);
        assert!(e.message().contains("events[1]") && e.message().contains("queue.exploded"));
        assert!(e.hint().unwrap().contains("message.dead_lettered"));
    }

    #[test]
    fn accepts_and_dedupes() {
        let ok = reg(
            serde_json::json!({"url": "https://h.example", "events": ["*", "*", "queue.created"],
                                         "headers": {"X-Team": "ops"}}),
        )
        .unwrap();
        assert_eq!(ok.url, "https://h.example/");
        assert_eq!(ok.events, ["*", "queue.created"]);
        assert_eq!(ok.headers.as_deref(), Some(r#"{"x-team":"ops"}"#));
    }

    #[test]
    fn refuses_loopback_reserved_headers_and_bad_values() {
        for (body, field) in [
            (
                serde_json::json!({"url": "http://127.0.0.1:9/", "events": ["*"]}),
                "url",
            ),
            (
                serde_json::json!({"url": "https://h.example/", "events": []}),
                "events",
            ),
            (
                serde_json::json!({"url": "https://h.example/", "events": ["*"], "headers": {"Onceq-Event-Id": "x"}}),
                "headers.onceq-event-id",
            ),
            (
                serde_json::json!({"url": "https://h.example/", "events": ["*"], "headers": {"x": "a\nb"}}),
                "headers.x",
            ),
            (
                serde_json::json!({"url": "https://h.example/", "events": ["*"], "secret": "short"}),
                "secret",
            ),
            (
                serde_json::json!({"url": "https://h.example/", "events": ["*"], "description": "x".repeat(501)}),
                "description",
            ),
        ] {
            let e = reg(body).unwrap_err();
            assert!(e.message().contains(field), "{field}: {}", e.message());
        }
    }
}
