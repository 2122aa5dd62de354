//! A queue's push subscriptions, on its page: where its messages are pushed
//! and with what limits (never the signing secrets).

use maud::{Markup, html};
use onceq_store::QueueRef;

use super::{error::DashError, format::time_rel, session::Viewer};
use crate::AppState;

/// The section, or nothing when the queue has no subscription.
pub async fn section(state: &AppState, viewer: &Viewer, queue: &str) -> Result<Markup, DashError> {
    let subs = state
        .store()
        .subscription_list(&QueueRef::new(&viewer.project, queue))
        .await
        .map_err(|e| DashError::store(e, queue))?;
    let now = state.clock.now();
    Ok(html! {
        @if !subs.is_empty() {
            section.subscriptions aria-labelledby="subs-title" {
                h2 #subs-title { "Push subscriptions" }
                div.table-wrap {
                    table.data {
                        caption.sr-only { "Webhooks this queue's messages are pushed to" }
                        thead { tr {
                            th scope="col" { "Subscription" }
                            th scope="col" { "URL" }
                            th.num scope="col" { "In flight at most" }
                            th.num scope="col" { "Timeout" }
                            th scope="col" { "Created" }
                        } }
                        tbody {
                            @for s in &subs {
                                tr {
                                    th.mono scope="row" { (s.subscription_id) }
                                    td.mono { (s.url) }
                                    td.num { (s.max_in_flight) }
                                    td.num { (s.timeout_seconds) " s" }
                                    td { (time_rel(s.created_at, now)) }
                                }
                            }
                        }
                    }
                }
            }
        }
    })
}
