//! The web dashboard, served by `onceq serve` under `/dashboard`
//! (docs/dashboard.md).
//!
//! Server-rendered HTML (maud) and vendored htmx: each page holds a "live"
//! region that re-fetches its fragment every [`POLL_SECS`] seconds, and the
//! buttons post with htmx and swap the answer in. Every page and action
//! also works without JavaScript (plain links, forms and redirects).
//!
//! - [`session`]: sign-in with an API key kept in an HttpOnly cookie and
//!   re-authenticated on every request; the same-origin check of changes.
//! - [`error`]: [`DashError`](error::DashError), failures as HTML.
//! - [`assets`]: htmx and the stylesheet, from inside the binary.
//! - [`layout`]: the page shell: skip link, header, breadcrumbs, flash.
//! - [`mod@format`]: numbers, ages, times, payloads, URLs.
//! - [`sparkline`]: throughput charts as inline SVG.
//! - [`overview`], [`queue`], [`message`], [`dlq`], [`purge`]: the pages;
//!   the queue's pause/resume and settings form are [`queue::controls`]
//!   and [`queue::settings_page`].
//! - [`cron`]: the cron schedules, their recent runs, pause/resume.
//! - [`webhooks`]: the account webhooks and each one's recent deliveries,
//!   paged, polled with `fresh`.
//! - [`paging`]: pages of the lists that grow with a tenant (queues,
//!   schedules), bounded; [`fresh`]: live refreshes that send nothing
//!   while unchanged (`ETag`, `If-None-Match`).
//! - [`overview`], [`queue`], [`message`], [`dlq`], [`finished`],
//!   [`purge`]: the pages; [`dlq_table`] the dead letters' table (with
//!   their last error).
//! - [`life`]: a message's life on its page: state wherever it is, last
//!   error, attempts, a completed one's result; [`cancel`] its "Cancel".
//! - [`bulk`]: "with selected" forms: bounded selections, the confirmation
//!   step, the tally of what was done; [`dlq_selected`] is the dead-letter
//!   page's (the queue page's is [`queue::selected`]).

pub mod assets;
pub mod bulk;
pub mod cancel;
pub mod cron;
pub mod dlq;
pub mod dlq_selected;
pub mod dlq_table;
pub mod error;
pub mod finished;
pub mod format;
pub mod fresh;
pub mod layout;
pub mod life;
pub mod message;
pub mod overview;
pub mod paging;
pub mod purge;
pub mod queue;
pub mod session;
pub mod sparkline;
pub mod subscriptions;
pub mod webhooks;

use axum::{
    Router,
    extract::{DefaultBodyLimit, Request},
    http::{HeaderName, HeaderValue, StatusCode, header},
    middleware::{self, Next},
    response::{IntoResponse, Redirect, Response},
    routing::{get, post},
};

use crate::AppState;
use error::{ErrorFragment, SignInRedirect};

/// How often live regions refresh.
pub const POLL_SECS: u32 = 3;

/// The largest form body the dashboard reads (a sign-in or a purge
/// confirmation is a few hundred bytes).
const MAX_FORM_BYTES: usize = 16 * 1024;

/// The dashboard's routes, and `/` redirecting to it.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(|| async { Redirect::to("/dashboard") }))
        .route("/dashboard", get(overview::page))
        .route("/dashboard/", get(|| async { Redirect::to("/dashboard") }))
        .route(
            "/dashboard/signin",
            get(session::signin_page).post(session::signin),
        )
        .route("/dashboard/signout", post(session::signout))
        .route("/dashboard/assets/{file}", get(assets::serve))
        .route("/dashboard/live/queues", get(overview::live))
        .route("/dashboard/cron", get(cron::page))
        .route("/dashboard/cron/{job_id}", get(cron::job_page))
        .route("/dashboard/cron/{job_id}/pause", post(cron::pause))
        .route("/dashboard/cron/{job_id}/resume", post(cron::resume))
        .route("/dashboard/webhooks", get(webhooks::page))
        .route("/dashboard/webhooks/live", get(webhooks::live))
        .route("/dashboard/webhooks/{id}", get(webhooks::deliveries))
        .route(
            "/dashboard/webhooks/{id}/live",
            get(webhooks::deliveries_live),
        )
        .route("/dashboard/queues/{queue}", get(queue::page))
        .route("/dashboard/queues/{queue}/live", get(queue::live))
        .route(
            "/dashboard/queues/{queue}/selected",
            post(queue::selected::apply),
        )
        .route(
            "/dashboard/queues/{queue}/pause",
            post(queue::controls::pause),
        )
        .route(
            "/dashboard/queues/{queue}/resume",
            post(queue::controls::resume),
        )
        .route(
            "/dashboard/queues/{queue}/settings",
            get(queue::settings_page::page).post(queue::settings_page::save),
        )
        .route(
            "/dashboard/queues/{queue}/messages/{id}",
            get(message::page),
        )
        .route(
            "/dashboard/queues/{queue}/messages/{id}/live",
            get(message::live),
        )
        .route(
            "/dashboard/queues/{queue}/messages/{id}/cancel",
            post(cancel::cancel),
        )
        .route("/dashboard/queues/{queue}/completed", get(finished::page))
        .route("/dashboard/queues/{queue}/dlq", get(dlq::page))
        .route("/dashboard/queues/{queue}/dlq/live", get(dlq::live))
        .route(
            "/dashboard/queues/{queue}/dlq/selected",
            post(dlq_selected::apply),
        )
        .route(
            "/dashboard/queues/{queue}/dlq/redrive",
            post(dlq::redrive_all),
        )
        .route(
            "/dashboard/queues/{queue}/dlq/{id}/redrive",
            post(dlq::redrive_one),
        )
        .route(
            "/dashboard/queues/{queue}/dlq/{id}/delete",
            post(dlq::delete_one),
        )
        .route(
            "/dashboard/queues/{queue}/purge",
            get(purge::page).post(purge::purge),
        )
        .layer(DefaultBodyLimit::max(MAX_FORM_BYTES))
        .layer(middleware::from_fn(shape))
}

/// Whether the request was made by htmx (a fragment swap, not a page).
pub fn is_htmx(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get("hx-request")
        .is_some_and(|v| v.as_bytes() == b"true")
}

/// Around every dashboard answer: security headers, and for htmx requests
/// errors as fragments and sign-in redirects as `HX-Redirect`.
async fn shape(req: Request, next: Next) -> Response {
    let htmx = is_htmx(req.headers());
    let mut res = next.run(req).await;
    if htmx {
        if let Some(SignInRedirect(to)) = res.extensions().get::<SignInRedirect>().cloned() {
            let cookie = res.headers().get(header::SET_COOKIE).cloned();
            res = (
                StatusCode::UNAUTHORIZED,
                [(
                    HeaderName::from_static("hx-redirect"),
                    HeaderValue::from_static(to),
                )],
            )
                .into_response();
            if let Some(cookie) = cookie {
                res.headers_mut().insert(header::SET_COOKIE, cookie);
            }
        } else if let Some(ErrorFragment(fragment)) =
            res.extensions().get::<ErrorFragment>().cloned()
        {
            let status = res.status();
            res = (status, layout::html_fragment(fragment)).into_response();
        }
    }
    let h = res.headers_mut();
    // Scripts and styles only from this server: no inline script or style,
    // which also keeps htmx from evaluating anything.
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
             connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    // Pages show a project's data: never kept by a shared cache or the
    // back-forward cache of a signed-out browser. Assets set their own.
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    res
}
