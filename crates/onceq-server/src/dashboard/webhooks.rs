//! Account webhooks (`/dashboard/webhooks`): the project's webhooks, and
//! one webhook's recent deliveries (`/dashboard/webhooks/{id}`), each a
//! numbered page of [`PAGE_SIZE`](super::paging::PAGE_SIZE) rows whose
//! live region polls with its tag (`fresh`): an unchanged page answers no
//! body. Read-only (register, test and delete stay with the API and the
//! CLI); the secret is never shown.
//!
//! A webhook receives the events of every queue, so, as the API's list,
//! only a key whose queue patterns are `*` sees them. Both lists are
//! bounded by the store (`MAX_WEBHOOKS_PER_PROJECT` webhooks,
//! `MAX_ATTEMPTS_KEPT` attempts a webhook), read whole and cut to a page.

use axum::{
    extract::{Path, Query, State},
    http::HeaderMap,
    response::{IntoResponse, Response},
};
use maud::{Markup, html};
use onceq_store::{WebhookAttemptRecord, WebhookRecord, WebhookRef};
use onceq_types::webhook::MAX_ATTEMPTS_KEPT;

use super::{
    error::DashError,
    format::{dom_id, time_rel, url_part},
    fresh,
    layout::{self, Crumb},
    paging::{self, PageQuery, Window},
    session::Viewer,
};
use crate::AppState;

const BASE: &str = "/dashboard/webhooks";

/// As the API: webhooks are for keys that see every queue.
fn every_queue(viewer: &Viewer) -> Result<(), DashError> {
    match viewer.scope.queues.is_any() {
        true => Ok(()),
        false => Err(DashError::Forbidden(format!(
            "account webhooks receive the events of every queue; this API key may only use queues {}.",
            viewer.scope.queues
        ))),
    }
}

fn href(id: &str) -> String {
    format!("{BASE}/{}", url_part(id))
}

fn live_url(base: &str, number: usize) -> String {
    match number {
        1 => format!("{base}/live"),
        n => format!("{base}/live?page={n}"),
    }
}

fn number(q: &PageQuery) -> Result<usize, DashError> {
    paging::page_number(q.page.as_deref()).map_err(DashError::BadRequest)
}

async fn list(
    state: &AppState,
    viewer: &Viewer,
    number: usize,
) -> Result<Window<WebhookRecord>, DashError> {
    every_queue(viewer)?;
    let all = state
        .store()
        .webhook_list(&viewer.project)
        .await
        .map_err(|e| DashError::store(e, ""))?;
    Ok(paging::numbered(all, number))
}

fn list_body(window: &Window<WebhookRecord>, number: usize, now: jiff::Timestamp) -> Markup {
    html! {
        @if window.total == 0 {
            div.empty {
                p { strong { "No webhooks." } }
                p { "Register one with " code { "onceq webhooks register" } " or " code { "POST /v1/account/webhooks/register" } " (docs/webhooks.md)." }
            }
        } @else {
            div.table-wrap {
                table.data #webhooks {
                    caption.sr-only { "Webhooks of this project, oldest first" }
                    thead { tr {
                        th scope="col" { "Webhook" }
                        th scope="col" { "Events" }
                        th scope="col" { "Registered" }
                    } }
                    tbody {
                        @for w in &window.items {
                            tr id=(dom_id("webhook-", &w.webhook_id)) {
                                th scope="row" {
                                    a href=(href(&w.webhook_id)) { span.mono { (w.url) } }
                                    @if !w.description.is_empty() { div.sub { (w.description) } }
                                    div.sub.mono { (w.webhook_id) }
                                }
                                td data-label="Events" { (w.events.join(", ")) }
                                td data-label="Registered" { (time_rel(w.created_at, now)) }
                            }
                        }
                    }
                }
            }
        }
        (paging::numbered_pager(window, number, BASE, "Webhooks"))
    }
}

/// `GET /dashboard/webhooks` (`?page=N`).
pub async fn page(
    State(state): State<AppState>,
    viewer: Viewer,
    Query(q): Query<PageQuery>,
) -> Result<Response, DashError> {
    let number = number(&q)?;
    let window = list(&state, &viewer, number).await?;
    let content = list_body(&window, number, state.clock.now()).into_string();
    let main = html! {
        div.page-head { h1 { "Webhooks" } }
        (fresh::region("webhooks-live", &live_url(BASE, number), &content))
    };
    let crumbs = [Crumb::here("Webhooks")];
    Ok(layout::html(layout::page("Webhooks", &viewer, &crumbs, None, main)).into_response())
}

/// `GET /dashboard/webhooks/live` (`?page=N`): the list's live region;
/// empty when unchanged since the tag the poll sends.
pub async fn live(
    State(state): State<AppState>,
    viewer: Viewer,
    Query(q): Query<PageQuery>,
    headers: HeaderMap,
) -> Result<Response, DashError> {
    let number = number(&q)?;
    let window = list(&state, &viewer, number).await?;
    let content = list_body(&window, number, state.clock.now()).into_string();
    Ok(fresh::answer(
        &headers,
        "webhooks-live",
        &live_url(BASE, number),
        content,
    ))
}

/// A webhook id from the path, checked as the API checks it.
fn webhook_id(id: String) -> Result<String, DashError> {
    crate::validate::token("id", &id).map_err(|e| DashError::BadRequest(e.message().into()))?;
    Ok(id)
}

async fn attempts(
    state: &AppState,
    viewer: &Viewer,
    id: &str,
    number: usize,
) -> Result<Window<WebhookAttemptRecord>, DashError> {
    every_queue(viewer)?;
    let w = WebhookRef {
        project: viewer.project.clone(),
        webhook_id: id.to_owned(),
    };
    let all = state
        .store()
        .webhook_attempts(&w, MAX_ATTEMPTS_KEPT as u32)
        .await
        .map_err(|e| DashError::store(e, ""))?
        .ok_or_else(|| DashError::NotFound(format!("webhook {id:?} not found in this project")))?;
    Ok(paging::numbered(all, number))
}

fn attempts_body(
    id: &str,
    window: &Window<WebhookAttemptRecord>,
    number: usize,
    now: jiff::Timestamp,
) -> Markup {
    html! {
        @if window.total == 0 {
            div.empty { p { "No deliveries yet." } }
        } @else {
            div.table-wrap {
                table.data #webhook-deliveries {
                    caption.sr-only { "Recent delivery attempts, newest first" }
                    thead { tr {
                        th scope="col" { "Attempted" }
                        th scope="col" { "Event" }
                        th.num scope="col" { "Attempt" }
                        th scope="col" { "Outcome" }
                        th.num scope="col" { "Status" }
                        th.num scope="col" { "Latency" }
                    } }
                    tbody {
                        @for a in &window.items {
                            tr.delivery {
                                td data-label="Attempted" { (time_rel(a.attempted_at, now)) }
                                td data-label="Event" {
                                    (a.event_type)
                                    div.sub.mono { (a.event_id) }
                                }
                                td.num data-label="Attempt" { (a.attempt) }
                                td data-label="Outcome" {
                                    (a.outcome)
                                    @if let Some(e) = &a.error { div.sub { (e) } }
                                }
                                td.num data-label="Status" {
                                    @match a.status { Some(s) => (s), None => span.muted { "—" } }
                                }
                                td.num data-label="Latency" { (a.latency_ms) " ms" }
                            }
                        }
                    }
                }
            }
        }
        (paging::numbered_pager(window, number, &href(id), "Deliveries"))
    }
}

/// `GET /dashboard/webhooks/{id}` (`?page=N`): one webhook's recent
/// deliveries, newest first.
pub async fn deliveries(
    State(state): State<AppState>,
    viewer: Viewer,
    Path(id): Path<String>,
    Query(q): Query<PageQuery>,
) -> Result<Response, DashError> {
    let id = webhook_id(id)?;
    let number = number(&q)?;
    let window = attempts(&state, &viewer, &id, number).await?;
    let content = attempts_body(&id, &window, number, state.clock.now()).into_string();
    let title = format!("Webhook {id}");
    let main = html! {
        div.page-head {
            h1 { "Deliveries" }
            p.sub.mono { (id) }
        }
        (fresh::region("deliveries-live", &live_url(&href(&id), number), &content))
    };
    let crumbs = [Crumb::link("Webhooks", BASE), Crumb::here(id.clone())];
    Ok(layout::html(layout::page(&title, &viewer, &crumbs, None, main)).into_response())
}

/// `GET /dashboard/webhooks/{id}/live` (`?page=N`): the deliveries' live
/// region; empty when unchanged since the tag the poll sends.
pub async fn deliveries_live(
    State(state): State<AppState>,
    viewer: Viewer,
    Path(id): Path<String>,
    Query(q): Query<PageQuery>,
    headers: HeaderMap,
) -> Result<Response, DashError> {
    let id = webhook_id(id)?;
    let number = number(&q)?;
    let window = attempts(&state, &viewer, &id, number).await?;
    let content = attempts_body(&id, &window, number, state.clock.now()).into_string();
    Ok(fresh::answer(
        &headers,
        "deliveries-live",
        &live_url(&href(&id), number),
        content,
    ))
}
