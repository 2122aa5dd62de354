//! Live refreshes that send what changed: a live fragment's answer carries
//! an `ETag` (a hash of the fragment), and a poll that names it in
//! `If-None-Match` while the fragment is unchanged gets no body: `304 Not
//! Modified`, or `204 No Content` to htmx, which swaps nothing on a 204
//! (it would swap an empty body in on a 304).
//!
//! htmx sends the tag because the live region says so (`hx-headers`, see
//! [`region`]) and is replaced whole (`outerHTML`) by a changed answer, so
//! the region always holds the tag of what it shows. The browser's cache is
//! not involved: dashboard answers stay `no-store`.

use axum::{
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{Html, IntoResponse, Response},
};
use maud::{Markup, PreEscaped, html};
use sha2::{Digest, Sha256};

use super::POLL_SECS;

/// The tag of a rendered fragment: a quoted hash of it.
pub fn tag(content: &str) -> String {
    let digest = Sha256::digest(content.as_bytes());
    let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
    format!("\"{hex}\"")
}

/// A live region that polls `url` every [`POLL_SECS`] seconds with the
/// tag of `content` and is replaced whole when it changed.
pub fn region(id: &str, url: &str, content: &str) -> Markup {
    let headers = serde_json::json!({ "If-None-Match": tag(content) }).to_string();
    html! {
        div.live id=(id) hx-get=(url) hx-trigger=(format!("every {POLL_SECS}s")) hx-swap="outerHTML" hx-headers=(headers) {
            (PreEscaped(content))
        }
    }
}

/// The answer to a poll of the region `id` at `url`: empty when the
/// request's `If-None-Match` names `content`'s tag, else the region.
pub fn answer(headers: &HeaderMap, id: &str, url: &str, content: String) -> Response {
    let etag = tag(&content);
    let etag_header = HeaderValue::from_str(&etag).expect("hex in quotes is a valid header");
    let unchanged = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().trim_start_matches("W/"))
        .any(|t| t == etag || t == "*");
    if unchanged {
        let status = match super::is_htmx(headers) {
            true => StatusCode::NO_CONTENT,
            false => StatusCode::NOT_MODIFIED,
        };
        return (status, [(header::ETAG, etag_header)]).into_response();
    }
    let body = region(id, url, &content).into_string();
    ([(header::ETAG, etag_header)], Html(body)).into_response()
}
