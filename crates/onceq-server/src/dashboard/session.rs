//! Signing in to the dashboard, and who is signed in.
//!
//! Signing in takes an API key (form POST) and, if the key authenticates,
//! keeps it in a cookie: `HttpOnly` (no script reads it), `SameSite=Strict`
//! (no other site's page sends it), `Path=/dashboard`, `Secure` when the
//! request came over https (through a TLS-terminating proxy, seen in
//! `X-Forwarded-Proto`/`Forwarded`, or the page's own `Origin`). Nothing is
//! stored on the server: every dashboard request authenticates the key
//! again through [`auth::authenticate`], so a revoked key is signed out on
//! its next request, on every server sharing the database.
//!
//! Changes (every POST) must also pass [`SameOrigin`]: a cross-site
//! `Sec-Fetch-Site` is refused, an `Origin` must name this server, and a
//! request without `Origin` must be an htmx request (a custom header no
//! other site can send without a CORS preflight, which this server never
//! grants).

use std::ops::Deref;

use axum::{
    Form,
    extract::{FromRequestParts, Query, State},
    http::{HeaderMap, HeaderValue, StatusCode, header, request::Parts},
    response::{IntoResponse, Redirect, Response},
};
use maud::html;
use onceq_store::QueueRef;
use onceq_types::{ErrorCode, scope::Action};
use serde::Deserialize;

use super::{error::DashError, layout};
use crate::{AppState, auth, principal::Principal};

/// The cookie holding the signed-in key (hex of its bytes, so any key is a
/// valid cookie value).
pub const COOKIE: &str = "onceq_key";

/// How long a sign-in lasts in the browser (12 h); the key's revocation
/// ends it sooner.
const MAX_AGE_SECS: u32 = 12 * 3600;

/// The project a dashboard request acts for, from its cookie. The key's
/// scope applies as on the API, checked by the same [`Principal`]: it must
/// allow `read` to see anything, the queues shown are those its patterns
/// match, and each change needs the action its API call needs
/// ([`Viewer::require`]). Derefs to its [`Principal`] (project, key id,
/// scope).
#[derive(Debug, Clone)]
pub struct Viewer {
    principal: Principal,
}

impl Deref for Viewer {
    type Target = Principal;

    fn deref(&self) -> &Principal {
        &self.principal
    }
}

impl Viewer {
    /// The queue `name` of the viewer's project: not found (as for a
    /// queue that does not exist) when the key's patterns do not match it,
    /// so a scoped key learns nothing about other queues.
    pub fn queue(&self, name: &str) -> Result<QueueRef, DashError> {
        self.queue_ref(name)
            .ok_or_else(|| DashError::NotFound(format!("queue {name:?} not found")))
    }

    /// Whether the key's queue patterns match `name`.
    pub fn may_see(&self, name: &str) -> bool {
        self.may_use(name)
    }

    /// Refuses (403) a change the key's actions do not allow.
    pub fn require(&self, action: Action) -> Result<(), DashError> {
        if self.allows(action) {
            Ok(())
        } else {
            Err(DashError::Forbidden(format!(
                "this API key may not {} (its actions: {}).",
                action.as_str(),
                self.scope.actions
            )))
        }
    }
}

impl FromRequestParts<AppState> for Viewer {
    type Rejection = DashError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, DashError> {
        let key = cookie_key(&parts.headers).ok_or(DashError::SignIn { expired: false })?;
        let record = auth::authenticate(state, &key)
            .await
            .map_err(DashError::from_api)?;
        let viewer = Viewer {
            principal: Principal::new(record),
        };
        viewer.require(Action::Read)?;
        Ok(viewer)
    }
}

/// The key in the request's cookie, if any.
fn cookie_key(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .and_then(|(_, value)| hex::decode(value).ok())
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .filter(|key| !key.is_empty())
}

/// Whether the browser reached us over https.
fn is_https(headers: &HeaderMap) -> bool {
    let header = |name| headers.get(name).and_then(|v| v.to_str().ok());
    header("x-forwarded-proto")
        .and_then(|v| v.split(',').next())
        .is_some_and(|p| p.trim().eq_ignore_ascii_case("https"))
        || header("forwarded").is_some_and(|v| v.to_ascii_lowercase().contains("proto=https"))
        || header("origin").is_some_and(|o| o.starts_with("https://"))
}

fn cookie(value: &str, max_age: u32, secure: bool) -> HeaderValue {
    let secure = if secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{COOKIE}={value}; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}"
    ))
    .expect("hex and fixed text are a valid header value")
}

/// A `Set-Cookie` that forgets the key.
pub fn clear_cookie(secure: bool) -> HeaderValue {
    cookie("", 0, secure)
}

/// Refuses a change that may come from another site (see the module docs).
pub struct SameOrigin;

impl<S: Send + Sync> FromRequestParts<S> for SameOrigin {
    type Rejection = DashError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, DashError> {
        check_same_origin(&parts.headers).map(|()| SameOrigin)
    }
}

fn check_same_origin(headers: &HeaderMap) -> Result<(), DashError> {
    let refuse = |why: &str| Err(DashError::Forbidden(why.to_owned()));
    let header = |name| headers.get(name).and_then(|v| v.to_str().ok());
    if header("sec-fetch-site").is_some_and(|site| site != "same-origin") {
        return refuse("a change must come from the dashboard itself (Sec-Fetch-Site).");
    }
    match header("origin") {
        Some(origin) => {
            // Behind a proxy the browser's host is the forwarded one.
            let host = header("x-forwarded-host")
                .and_then(|h| h.split(',').next())
                .map(str::trim)
                .or_else(|| header("host"));
            let authority = origin.split_once("://").map(|(_, a)| a);
            if host.is_some() && authority == host {
                Ok(())
            } else {
                refuse("a change must come from the dashboard itself (Origin does not match).")
            }
        }
        None if super::is_htmx(headers) => Ok(()),
        None => refuse("a change needs an Origin header (or an htmx request)."),
    }
}

/// Query of the sign-in page.
#[derive(Debug, Deserialize, Default)]
pub struct SignInQuery {
    /// Set when a presented key was refused.
    pub expired: Option<String>,
}

/// The sign-in form.
#[derive(Debug, Deserialize, Default)]
pub struct SignInForm {
    /// The API key.
    #[serde(default)]
    pub api_key: Option<String>,
}

fn signin_form(error: Option<&str>, info: Option<&str>) -> maud::Markup {
    layout::bare(
        "Sign in",
        html! {
            h1 { "Sign in to onceq" }
            p.lead { "Use an API key of your project. The dashboard shows that project's queues and nothing else." }
            @if let Some(info) = info { (layout::notice(info)) }
            form.card.signin method="post" action="/dashboard/signin" {
                label for="api_key" { "API key" }
                input #api_key type="password" name="api_key" autocomplete="off" required
                    autofocus spellcheck="false" placeholder="oq_…"
                    aria-invalid=[error.map(|_| "true")]
                    aria-describedby=[error.map(|_| "api_key-error")];
                @if let Some(error) = error {
                    p #api_key-error .field-error { (error) }
                }
                button.btn.btn-primary type="submit" { "Sign in" }
                p.hint {
                    "Create a key with " code { "onceq keys create --project NAME" } ". "
                    "It is kept in an HttpOnly cookie of this browser until you sign out, for 12 hours at most, and checked again on every page."
                }
            }
        },
    )
}

/// `GET /dashboard/signin`.
pub async fn signin_page(Query(q): Query<SignInQuery>) -> Response {
    let info = q
        .expired
        .is_some()
        .then_some("Your key is no longer accepted (revoked or unknown). Sign in again.");
    layout::html(signin_form(None, info)).into_response()
}

/// `POST /dashboard/signin`.
pub async fn signin(
    State(state): State<AppState>,
    _: SameOrigin,
    headers: HeaderMap,
    Form(form): Form<SignInForm>,
) -> Result<Response, DashError> {
    let key = form.api_key.unwrap_or_default();
    let key = key.trim();
    if key.is_empty() {
        let page = signin_form(Some("Enter an API key (api_key is empty)."), None);
        return Ok((StatusCode::BAD_REQUEST, layout::html(page)).into_response());
    }
    match auth::authenticate(&state, key).await.map(Principal::new) {
        Ok(principal) if !principal.allows(Action::Read) => {
            let page = signin_form(
                Some("That key may not read queues (its scope has no read action)."),
                None,
            );
            Ok((StatusCode::FORBIDDEN, layout::html(page)).into_response())
        }
        Ok(_) => {
            let secure = is_https(&headers);
            Ok((
                [(
                    header::SET_COOKIE,
                    cookie(&hex::encode(key), MAX_AGE_SECS, secure),
                )],
                Redirect::to("/dashboard"),
            )
                .into_response())
        }
        Err(e) if e.code() == ErrorCode::Unauthorized => {
            let page = signin_form(Some("That key is unknown or revoked."), None);
            Ok((StatusCode::UNAUTHORIZED, layout::html(page)).into_response())
        }
        Err(e) => Err(DashError::from_api(e)),
    }
}

/// `POST /dashboard/signout`: forgets the key in this browser.
pub async fn signout(_: SameOrigin, headers: HeaderMap) -> Response {
    (
        [(header::SET_COOKIE, clear_cookie(is_https(&headers)))],
        Redirect::to("/dashboard/signin"),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn reads_the_key_from_any_cookie_header() {
        let hexed = hex::encode("oq_abc_def");
        let h = headers(&[
            ("cookie", "a=1; other=2"),
            ("cookie", &format!("x=y; {COOKIE}={hexed}")),
        ]);
        assert_eq!(cookie_key(&h).as_deref(), Some("oq_abc_def"));
        assert_eq!(cookie_key(&headers(&[("cookie", "onceq_key=zz")])), None);
        assert_eq!(cookie_key(&headers(&[("cookie", "onceq_key=")])), None);
    }

    #[test]
    fn same_origin_rules() {
        let ok = |pairs| check_same_origin(&headers(pairs)).is_ok();
        assert!(ok(&[
            ("host", "127.0.0.1:8787"),
            ("origin", "http://127.0.0.1:8787")
        ]));
        assert!(ok(&[
            ("host", "10.0.0.5:8787"),
            ("x-forwarded-host", "queues.example.com"),
            ("origin", "https://queues.example.com"),
        ]));
        assert!(ok(&[("host", "h"), ("hx-request", "true")]));
        assert!(!ok(&[
            ("host", "127.0.0.1:8787"),
            ("origin", "http://evil.example")
        ]));
        assert!(!ok(&[
            ("host", "h"),
            ("origin", "null"),
            ("hx-request", "true")
        ]));
        assert!(!ok(&[("host", "h")]));
        assert!(!ok(&[
            ("host", "h"),
            ("origin", "http://h"),
            ("sec-fetch-site", "cross-site"),
        ]));
    }

    #[test]
    fn secure_only_over_https() {
        assert!(is_https(&headers(&[("x-forwarded-proto", "https")])));
        assert!(is_https(&headers(&[(
            "forwarded",
            "for=1.2.3.4;proto=https"
        )])));
        assert!(is_https(&headers(&[("origin", "https://q.example")])));
        assert!(!is_https(&headers(&[("origin", "http://127.0.0.1:8787")])));
        let set = cookie("ab", 60, true);
        assert_eq!(
            set.to_str().unwrap(),
            "onceq_key=ab; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=60; Secure"
        );
    }
}
