//! Cron schedules (`/dashboard/cron`): the project's schedules with their
//! next run, run count and paused state, one schedule's recent runs, and
//! pause/resume buttons. Read-only otherwise (create, update and delete
//! stay with the API and the CLI). Pause and resume go through
//! `routes::cron::set_job_paused`, the API's own path (missed
//! ticks skipped on resume, the cron loop woken).

use axum::{
    extract::{Path, Query, State},
    response::{IntoResponse, Redirect, Response},
};
use maud::{Markup, html};
use onceq_store::{CronRecord, CronRef, CronTarget};
use onceq_types::scope::Action;
use serde::Deserialize;

use super::{
    error::DashError,
    format::{count, time_full, time_rel, url_part},
    layout::{self, Crumb},
    paging::{self, PageQuery},
    queue::controls::paused_badge,
    session::{SameOrigin, Viewer},
};
use crate::{AppState, routes::cron::set_job_paused};

/// Set by a pause's (`yes`) or resume's (`no`) redirect.
#[derive(Debug, Deserialize, Default)]
pub struct Flash {
    paused: Option<String>,
}

/// Whether the viewer may see the schedule: one publishing into a queue
/// its key's patterns do not match is hidden, as that queue is.
fn visible(viewer: &Viewer, job: &CronRecord) -> bool {
    match &job.spec.target {
        CronTarget::Queue(q) => viewer.may_see(q),
        CronTarget::Task(_) => true,
    }
}

/// A schedule id from the path, checked as the API checks it.
fn job_id(id: String) -> Result<String, DashError> {
    crate::validate::token("job_id", &id).map_err(|e| DashError::BadRequest(e.message().into()))?;
    Ok(id)
}

async fn job(state: &AppState, viewer: &Viewer, id: &str) -> Result<CronRecord, DashError> {
    let found = state
        .store()
        .cron_get(&CronRef {
            project: viewer.project.clone(),
            job_id: id.to_owned(),
        })
        .await
        .map_err(|e| DashError::store(e, ""))?;
    found
        .filter(|j| visible(viewer, j))
        .ok_or_else(|| DashError::NotFound(format!("cron job {id:?} not found in this project")))
}

fn href(id: &str) -> String {
    format!("/dashboard/cron/{}", url_part(id))
}

fn schedule(j: &CronRecord) -> Markup {
    html! {
        @if let Some(expr) = &j.spec.cron_expr {
            code { (expr) } " " span.muted { (j.spec.timezone) }
        } @else if let Some(at) = j.spec.run_at {
            "once, " time datetime=(at.to_string()) { (super::format::utc(at)) }
        }
    }
}

fn target(j: &CronRecord) -> Markup {
    html! {
        @match &j.spec.target {
            CronTarget::Queue(q) => { "queue " a href=(format!("/dashboard/queues/{}", url_part(q))) { (q) } },
            CronTarget::Task(url) => { "task " span.mono { (url) } },
        }
    }
}

fn button(j: &CronRecord) -> Markup {
    let base = href(&j.job.job_id);
    let id = super::format::dom_id("", &j.job.job_id);
    html! {
        @if j.paused {
            form.inline method="post" action=(format!("{base}/resume")) {
                button.btn id=(format!("resume-{id}")) type="submit" { "Resume" }
            }
        } @else {
            form.inline method="post" action=(format!("{base}/pause")) {
                button.btn id=(format!("pause-{id}")) type="submit" { "Pause" }
            }
        }
    }
}

fn runs_of(j: &CronRecord) -> String {
    match j.spec.max_runs {
        Some(max) => format!("{} of {}", count(j.run_count), count(max)),
        None => count(j.run_count),
    }
}

/// `GET /dashboard/cron` (`?page=N`: [`PAGE_SIZE`](paging::PAGE_SIZE) schedules a page, in
/// the store's order, oldest first).
pub async fn page(
    State(state): State<AppState>,
    viewer: Viewer,
    Query(q): Query<PageQuery>,
) -> Result<Response, DashError> {
    let number = paging::page_number(q.page.as_deref()).map_err(DashError::BadRequest)?;
    let all: Vec<CronRecord> = state
        .store()
        .cron_list(&viewer.project)
        .await
        .map_err(|e| DashError::store(e, ""))?
        .into_iter()
        .filter(|j| visible(&viewer, j))
        .collect();
    let window = paging::numbered(all, number);
    let jobs = &window.items;
    let now = state.clock.now();
    let main = html! {
        div.page-head { h1 { "Cron schedules" } }
        @if jobs.is_empty() && window.total == 0 {
            div.empty {
                p { strong { "No schedules." } }
                p { "Create one with " code { "onceq cron create" } " or " code { "POST /v1/cron/create" } " (docs/cron.md)." }
            }
        } @else {
            div.table-wrap {
                table.data #cron-jobs {
                    caption.sr-only { "Cron schedules of this project, oldest first" }
                    thead { tr {
                        th scope="col" { "Schedule" }
                        th scope="col" { "When" }
                        th scope="col" { "Target" }
                        th scope="col" { "Next run" }
                        th.num scope="col" { "Runs" }
                        th scope="col" { span.sr-only { "Actions" } }
                    } }
                    tbody {
                        @for j in jobs {
                            tr id=(super::format::dom_id("cron-", &j.job.job_id)) {
                                th scope="row" {
                                    a href=(href(&j.job.job_id)) { (j.spec.name.as_deref().unwrap_or(&j.job.job_id)) }
                                    @if j.paused { " " (paused_badge()) }
                                    div.sub.mono { (j.job.job_id) }
                                }
                                td data-label="When" { (schedule(j)) }
                                td data-label="Target" { (target(j)) }
                                td data-label="Next run" {
                                    @if j.paused { span.muted { "paused" } }
                                    @else if let Some(t) = j.next_run_at { (time_rel(t, now)) }
                                    @else { span.muted { "ended" } }
                                }
                                td.num data-label="Runs" { (runs_of(j)) }
                                td.actions { (button(j)) }
                            }
                        }
                    }
                }
            }
        }
    };
    let main =
        html! { (main) (paging::numbered_pager(&window, number, "/dashboard/cron", "Schedules")) };
    let crumbs = [Crumb::here("Cron schedules")];
    Ok(layout::html(layout::page("Cron schedules", &viewer, &crumbs, None, main)).into_response())
}

/// `GET /dashboard/cron/{job_id}`: one schedule and its recent runs.
pub async fn job_page(
    State(state): State<AppState>,
    viewer: Viewer,
    Path(id): Path<String>,
    Query(flash): Query<Flash>,
) -> Result<Response, DashError> {
    let id = job_id(id)?;
    let j = job(&state, &viewer, &id).await?;
    let now = state.clock.now();
    let title = j.spec.name.clone().unwrap_or_else(|| id.clone());
    let flash = flash.paused.as_deref().and_then(|p| match p {
        "yes" => Some(layout::notice(&format!(
            "Paused {title}: it does not fire until it is resumed."
        ))),
        "no" => Some(layout::notice(&format!(
            "Resumed {title}: the ticks missed while paused are skipped."
        ))),
        _ => None,
    });
    let main = html! {
        div.page-head {
            h1 { (title) @if j.paused { " " (paused_badge()) } }
            div.head-actions { (button(&j)) }
        }
        dl.facts #cron-facts {
            div { dt { "Id" } dd.mono { (id) } }
            div { dt { "When" } dd { (schedule(&j)) } }
            div { dt { "Target" } dd { (target(&j)) } }
            div { dt { "Next run" } dd #cron-next {
                @if j.paused { "paused" }
                @else if let Some(t) = j.next_run_at { (time_full(t, now)) }
                @else { "ended" }
            } }
            div { dt { "Runs" } dd #cron-run-count { (runs_of(&j)) } }
            div { dt { "Overlap" } dd { (j.spec.overlap_policy.as_str()) } }
        }
        h2 { "Recent runs" }
        @if j.runs.is_empty() {
            div.empty { p { "No runs yet." } }
        } @else {
            div.table-wrap {
                table.data #cron-runs {
                    caption.sr-only { "Recent runs, newest first" }
                    thead { tr {
                        th scope="col" { "Tick" }
                        th scope="col" { "Fired" }
                        th scope="col" { "Outcome" }
                        th scope="col" { "Message" }
                    } }
                    tbody {
                        @for r in &j.runs {
                            tr {
                                td { (time_rel(r.scheduled_at, now)) }
                                td { (time_rel(r.fired_at, now)) }
                                td {
                                    (r.outcome.as_str())
                                    @if let Some(e) = &r.error { div.sub { (e) } }
                                }
                                td.mono {
                                    @match (&r.message_id, &j.spec.target) {
                                        (Some(m), CronTarget::Queue(q)) => a href=(format!("/dashboard/queues/{}/messages/{}", url_part(q), url_part(m))) { (m) },
                                        (Some(m), _) => (m),
                                        (None, _) => span.muted { "—" },
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    let crumbs = [
        Crumb::link("Cron schedules", "/dashboard/cron"),
        Crumb::here(title.clone()),
    ];
    Ok(layout::html(layout::page(&title, &viewer, &crumbs, flash, main)).into_response())
}

/// `POST /dashboard/cron/{job_id}/pause`.
pub async fn pause(
    State(state): State<AppState>,
    _: SameOrigin,
    viewer: Viewer,
    Path(id): Path<String>,
) -> Result<Response, DashError> {
    set_paused(&state, &viewer, id, true).await
}

/// `POST /dashboard/cron/{job_id}/resume`.
pub async fn resume(
    State(state): State<AppState>,
    _: SameOrigin,
    viewer: Viewer,
    Path(id): Path<String>,
) -> Result<Response, DashError> {
    set_paused(&state, &viewer, id, false).await
}

async fn set_paused(
    state: &AppState,
    viewer: &Viewer,
    id: String,
    paused: bool,
) -> Result<Response, DashError> {
    viewer.require(Action::Admin)?;
    let id = job_id(id)?;
    // Not found for a schedule the key may not see, as for none.
    let j = job(state, viewer, &id).await?;
    let (record, _) = set_job_paused(state, j.job, paused).await?;
    let said = if record.paused { "yes" } else { "no" };
    Ok(Redirect::to(&format!("{}?paused={said}", href(&id))).into_response())
}
