//! [`DashError`]: what can go wrong on a dashboard request, answered as an
//! HTML page (or, for htmx requests, an HTML fragment; see `super::shape`).

use axum::{
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use maud::{Markup, html};
use onceq_types::ErrorCode;

use super::{layout, session};
use crate::ApiError;

/// A dashboard failure.
#[derive(Debug)]
pub enum DashError {
    /// No valid key: go to the sign-in page. `expired` when a key was
    /// presented but is unknown or revoked now (the cookie is cleared).
    SignIn {
        /// A key was presented and refused.
        expired: bool,
    },
    /// A mutating request that may come from another site.
    Forbidden(String),
    /// Bad input; the message names the field.
    BadRequest(String),
    /// No such queue or message.
    NotFound(String),
    /// The store failed (unavailable or internal): logged, shown safely.
    Api(ApiError),
}

/// Marks an error answer so `super::shape` can send htmx requests only
/// the fragment instead of a whole page.
#[derive(Clone)]
pub struct ErrorFragment(pub String);

/// Marks a sign-in redirect so `super::shape` can turn it into an
/// `HX-Redirect` for htmx requests (which would otherwise follow the 303
/// and swap the sign-in page into the fragment).
#[derive(Clone)]
pub struct SignInRedirect(pub &'static str);

impl DashError {
    /// Maps an API error (from auth or the store).
    pub fn from_api(e: ApiError) -> Self {
        match e.code() {
            ErrorCode::Unauthorized => Self::SignIn { expired: true },
            ErrorCode::QueueNotFound | ErrorCode::NotFound => Self::NotFound(e.message().into()),
            ErrorCode::InvalidParams => Self::BadRequest(e.message().into()),
            _ => Self::Api(e),
        }
    }

    /// Maps a store error concerning `queue`.
    pub fn store(e: onceq_store::StoreError, queue: &str) -> Self {
        Self::from_api(ApiError::from_store(e, queue))
    }
}

impl From<ApiError> for DashError {
    fn from(e: ApiError) -> Self {
        Self::from_api(e)
    }
}

fn error_box(title: &str, message: &str) -> Markup {
    html! {
        div.notice.error role="alert" {
            strong { (title) }
            " " (message)
        }
    }
}

impl IntoResponse for DashError {
    fn into_response(self) -> Response {
        let mut retry_after = None;
        let (status, title, message) = match self {
            DashError::SignIn { expired } => {
                let to = if expired {
                    "/dashboard/signin?expired=1"
                } else {
                    "/dashboard/signin"
                };
                let mut res = (
                    StatusCode::SEE_OTHER,
                    [(header::LOCATION, HeaderValue::from_static(to))],
                )
                    .into_response();
                if expired {
                    res.headers_mut()
                        .insert(header::SET_COOKIE, session::clear_cookie(false));
                }
                res.extensions_mut().insert(SignInRedirect(to));
                return res;
            }
            DashError::Forbidden(m) => (StatusCode::FORBIDDEN, "Refused.", m),
            DashError::BadRequest(m) => (StatusCode::BAD_REQUEST, "Bad request.", m),
            DashError::NotFound(m) => (StatusCode::NOT_FOUND, "Not found.", m),
            DashError::Api(e) => {
                let status = StatusCode::from_u16(e.code().http_status())
                    .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                e.log_cause();
                // As the API says it: when to come back (429, 503).
                retry_after = e.retry_after();
                let title = match e.code() {
                    ErrorCode::RateLimited => "Too many requests.",
                    _ => "Something went wrong.",
                };
                (status, title, e.message().to_owned())
            }
        };
        let fragment = error_box(title, &message);
        let page = layout::bare(
            title,
            html! {
                h1 { (title) }
                (fragment)
                p { a href="/dashboard" { "Back to the queues" } }
            },
        );
        let mut res = (status, layout::html(page)).into_response();
        if let Some(secs) = retry_after {
            res.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        res.extensions_mut()
            .insert(ErrorFragment(fragment.into_string()));
        res
    }
}
