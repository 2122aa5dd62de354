//! Actions on a selection of messages (the "with selected" forms of the
//! queue and dead-letter pages): the form read and checked, the
//! confirmation step a destructive action goes through, and the tally of
//! what each message's change did, carried through the redirect.
//!
//! A selection is bounded: [`MAX_SELECTED`] messages at most, one page.
//! Delete, cancel and redrive change the whole selection in one store call
//! (the batch forms, one transaction); promote changes each message by the
//! single-message operation. Either way a message that moved meanwhile
//! (acked, claimed, redriven) is reported, not an error.
//!
//! The confirmation is a step of its own, not a script: a POST without
//! `confirm=yes` answers a page that says what will happen and repeats the
//! form with `confirm=yes`. It works the same with and without JavaScript,
//! and the repeated form is a change like any other (same-origin checked).

use axum::body::Bytes;
use maud::{Markup, html};
use serde::Deserialize;

use super::{error::DashError, format::preview, queue::PAGE_SIZE};
use crate::validate;

/// Messages one selection may hold: a page.
pub const MAX_SELECTED: usize = PAGE_SIZE as usize;

/// Whether a form body carries `confirm=yes` (sent by a confirmation
/// step's form, or by htmx after the browser's own dialog).
pub fn confirmed(body: &Bytes) -> bool {
    form_urlencoded::parse(body).any(|(k, v)| k == "confirm" && v == "yes")
}

/// A "with selected" form, read.
#[derive(Debug, Clone)]
pub struct Selection {
    /// The action's name as sent (`delete`, `promote`, `redrive`).
    pub action: String,
    /// The selected message ids, each once, in the order sent.
    pub ids: Vec<String>,
    /// `confirm=yes` was sent: the confirmation step is passed.
    pub confirmed: bool,
}

impl Selection {
    /// Reads a form body: `action`, `id` (repeated), `confirm`. Each
    /// failure names its field; `allowed` lists the actions of the page.
    pub fn parse(body: &Bytes, allowed: &[&str]) -> Result<Self, DashError> {
        let mut action = None;
        let mut ids: Vec<String> = Vec::new();
        let mut confirmed = false;
        for (k, v) in form_urlencoded::parse(body) {
            match &*k {
                "action" => action = Some(v.into_owned()),
                "id" => {
                    validate::token("id", &v)
                        .map_err(|e| DashError::BadRequest(e.message().to_owned()))?;
                    if !ids.iter().any(|seen| *seen == v) {
                        ids.push(v.into_owned());
                    }
                }
                "confirm" => confirmed = v == "yes",
                _ => {}
            }
        }
        let action = action.unwrap_or_default();
        if !allowed.contains(&action.as_str()) {
            return Err(DashError::BadRequest(format!(
                "action must be one of {} (got {:?})",
                allowed.join(", "),
                preview(&action, 40)
            )));
        }
        if ids.is_empty() {
            return Err(DashError::BadRequest(
                "id: select at least one message (tick its box) before choosing an action".into(),
            ));
        }
        if ids.len() > MAX_SELECTED {
            return Err(DashError::BadRequest(format!(
                "id: at most {MAX_SELECTED} messages (one page) per action, got {}; \
                 select fewer, or page through",
                ids.len()
            )));
        }
        Ok(Self {
            action,
            ids,
            confirmed,
        })
    }
}

/// What a selection's changes did, message by message. Read back from
/// the redirect's query leniently: a count that is not a number reads as 0
/// (it only words a notice), so a mangled link still shows its page.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Tally {
    /// The action done (`deleted`, `promoted`, `redrove`), for the flash.
    pub did: Option<String>,
    /// Messages changed.
    #[serde(default, deserialize_with = "lenient")]
    pub ok: u32,
    /// Messages left alone because a consumer holds them.
    #[serde(default, deserialize_with = "lenient")]
    pub held: u32,
    /// Messages no longer there.
    #[serde(default, deserialize_with = "lenient")]
    pub gone: u32,
    /// Messages left alone because the action does not apply to their
    /// state (a promote of a message that is not delayed).
    #[serde(default, deserialize_with = "lenient")]
    pub skipped: u32,
}

fn lenient<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let s = String::deserialize(d)?;
    Ok(s.trim().parse().unwrap_or(0))
}

impl Tally {
    /// An empty tally of `did`.
    pub fn of(did: &str) -> Self {
        Self {
            did: Some(did.to_owned()),
            ..Self::default()
        }
    }

    /// Counts the outcomes of a batch (delete, redrive) message by message.
    pub fn count(&mut self, outcomes: &[onceq_store::SingleOutcome]) {
        for outcome in outcomes {
            match outcome {
                onceq_store::SingleOutcome::Done => self.ok += 1,
                onceq_store::SingleOutcome::InFlight => self.held += 1,
                onceq_store::SingleOutcome::NotFound => self.gone += 1,
            }
        }
    }

    /// The query string carrying the tally through a redirect.
    pub fn query(&self) -> String {
        format!(
            "did={}&ok={}&held={}&gone={}&skipped={}",
            self.did.as_deref().unwrap_or(""),
            self.ok,
            self.held,
            self.gone,
            self.skipped
        )
    }

    /// The flash text, or `None` when no tally was carried.
    pub fn text(&self, target: &str) -> Option<String> {
        let verb = match self.did.as_deref()? {
            "deleted" => "Deleted".to_owned(),
            "promoted" => "Promoted".to_owned(),
            "redrove" => format!("Redrove to {target}"),
            _ => return None,
        };
        let mut parts = vec![format!("{verb}: {}", messages(self.ok))];
        if self.held > 0 {
            parts.push(format!(
                "{} in flight, kept by their consumer",
                messages(self.held)
            ));
        }
        if self.gone > 0 {
            parts.push(format!("{} no longer here", messages(self.gone)));
        }
        if self.skipped > 0 {
            parts.push(format!(
                "{} not delayed, left as they were",
                messages(self.skipped)
            ));
        }
        Some(format!("{}.", parts.join("; ")))
    }
}

fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

fn messages(n: u32) -> String {
    if n == 1 {
        "1 message".into()
    } else {
        format!("{n} messages")
    }
}

/// The confirmation step of a destructive action: what will happen (and,
/// for a selection, which messages), and the same POST to `action_url`
/// again with `confirm=yes` (or a way `back`). The one confirmation every
/// page uses.
pub fn confirm_page(
    action_url: &str,
    back: &str,
    selection: Option<&Selection>,
    what: &str,
    button: &str,
) -> Markup {
    html! {
        div.page-head { h1 { "Confirm: " (what) } }
        div.notice.danger #confirm-what {
            @if let Some(selection) = selection {
                p { (capitalised(what)) ": " strong { (messages(selection.ids.len() as u32)) } "." }
                ul.mono.confirm-ids {
                    @for id in &selection.ids { li { (id) } }
                }
            } @else {
                p { "This will " (what) "." }
            }
        }
        form.card method="post" action=(action_url) {
            @if let Some(selection) = selection {
                input type="hidden" name="action" value=(selection.action);
                @for id in &selection.ids { input type="hidden" name="id" value=(id); }
            }
            input type="hidden" name="confirm" value="yes";
            div.form-actions {
                button.btn.btn-danger #confirm-button type="submit" autofocus { (button) }
                a.btn.btn-quiet href=(back) { "Cancel" }
            }
        }
    }
}

/// The "with selected" bar: a form of its own (`id` = `form_id`) that the
/// rows' checkboxes join with their `form` attribute, so the live refresh
/// of the table never resets the action chosen.
pub fn bar(form_id: &str, action_url: &str, actions: &[(&str, &str)]) -> Markup {
    html! {
        form.bulk-bar id=(form_id) method="post" action=(action_url) {
            label for=(format!("{form_id}-action")) { "With selected (up to " (MAX_SELECTED) "):" }
            select id=(format!("{form_id}-action")) name="action" {
                @for (value, label) in actions { option value=(value) { (label) } }
            }
            button.btn #bulk-apply type="submit" { "Apply…" }
        }
    }
}

/// A row's checkbox, joining the bar's form. Kept across live refreshes
/// (`hx-preserve`, by its id) so a refresh never clears a selection.
pub fn checkbox(form_id: &str, id: &str) -> Markup {
    html! {
        input.select type="checkbox" name="id" value=(id) form=(form_id)
            id=(super::format::dom_id("sel-", id)) hx-preserve="true"
            aria-label=(format!("Select {id}"));
    }
}
