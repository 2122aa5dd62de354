//! The page shell every dashboard page shares: head, skip link, header with
//! the project and sign-out, breadcrumbs, the flash region, footer.

use axum::response::Html;
use maud::{DOCTYPE, Markup, html};

use super::{POLL_SECS, assets, session::Viewer};

/// htmx settings: no inline indicator styles (the Content-Security-Policy
/// forbids them), no eval, no history snapshots of project data in local
/// storage, and error answers swapped in like any other (they are HTML
/// fragments saying what went wrong).
const HTMX_CONFIG: &str = r#"{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"historyCacheSize":0,"responseHandling":[{"code":"204","swap":false},{"code":"[23]..","swap":true},{"code":"[45]..","swap":true,"error":true}]}"#;

/// A rendered page as an HTML answer.
pub fn html(page: Markup) -> Html<String> {
    Html(page.into_string())
}

/// A fragment (already rendered) as an HTML answer.
pub fn html_fragment(fragment: String) -> Html<String> {
    Html(fragment)
}

/// One step of the breadcrumb trail; the last has no link.
pub struct Crumb {
    /// What it says.
    pub label: String,
    /// Where it goes.
    pub href: Option<String>,
}

impl Crumb {
    /// A linked step.
    pub fn link(label: impl Into<String>, href: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            href: Some(href.into()),
        }
    }

    /// The current page.
    pub fn here(label: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            href: None,
        }
    }
}

fn head(title: &str) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            meta name="color-scheme" content="light dark";
            meta name="htmx-config" content=(HTMX_CONFIG);
            // No favicon request (it would only answer 404).
            link rel="icon" href="data:,";
            title { (title) " · onceq" }
            link rel="stylesheet" href=(assets::css_url());
            script src=(assets::htmx_url()) defer {}
        }
    }
}

/// A page of a signed-in viewer.
pub fn page(
    title: &str,
    viewer: &Viewer,
    crumbs: &[Crumb],
    flash: Option<Markup>,
    main: Markup,
) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(title))
            body {
                a.skip href="#main" { "Skip to content" }
                header.top {
                    div.wrap.top-inner {
                        a.brand href="/dashboard" { span.brand-mark aria-hidden="true" { "◆" } " onceq" }
                        nav.main-nav aria-label="Main" {
                            a href="/dashboard" { "Queues" }
                            a href="/dashboard/cron" { "Cron" }
                            a href="/dashboard/webhooks" { "Webhooks" }
                        }
                        span.project title=(format!("Signed in with key {}", viewer.key_id)) {
                            "Project " strong { (viewer.project) }
                        }
                        form.signout method="post" action="/dashboard/signout" {
                            button.btn.btn-quiet type="submit" { "Sign out" }
                        }
                    }
                }
                main #main .wrap tabindex="-1" {
                    @if !crumbs.is_empty() {
                        nav.crumbs aria-label="Breadcrumb" {
                            ol {
                                @for c in crumbs {
                                    li {
                                        @match &c.href {
                                            Some(href) => a href=(href) { (c.label) },
                                            None => span aria-current="page" { (c.label) },
                                        }
                                    }
                                }
                            }
                        }
                    }
                    div #flash role="status" aria-live="polite" {
                        @if let Some(flash) = flash { (flash) }
                    }
                    (main)
                }
                (footer())
            }
        }
    }
}

/// A page without a signed-in viewer (sign-in, errors).
pub fn bare(title: &str, main: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(title))
            body.bare {
                a.skip href="#main" { "Skip to content" }
                header.top {
                    div.wrap.top-inner {
                        a.brand href="/dashboard" { span.brand-mark aria-hidden="true" { "◆" } " onceq" }
                    }
                }
                main #main .wrap.narrow tabindex="-1" { (main) }
                (footer())
            }
        }
    }
}

fn footer() -> Markup {
    html! {
        footer.wrap.foot {
            "onceq " (env!("CARGO_PKG_VERSION"))
            " · figures refresh every " (POLL_SECS) " s"
            " · " a href="/readyz" { "readiness" }
        }
    }
}

/// A region that re-fetches itself from `url` every [`POLL_SECS`] seconds
/// and swaps its content in. The region itself stays, so polling goes on
/// after an error answer (which is swapped in as a notice).
pub fn live(id: &str, url: &str, content: Markup) -> Markup {
    html! {
        div.live id=(id) hx-get=(url) hx-trigger=(format!("every {POLL_SECS}s")) hx-swap="innerHTML" {
            (content)
        }
    }
}

/// A success or information notice for the flash region.
pub fn notice(text: &str) -> Markup {
    html! { div.notice.ok { (text) } }
}

/// An error notice for the flash region.
pub fn notice_error(text: &str) -> Markup {
    html! { div.notice.error role="alert" { (text) } }
}

/// The flash region's new content, sent out of band with an htmx answer.
pub fn flash_oob(content: Markup) -> Markup {
    html! {
        div #flash role="status" aria-live="polite" hx-swap-oob="true" { (content) }
    }
}
