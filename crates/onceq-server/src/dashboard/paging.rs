//! Paging of the lists that grow with a tenant (its queues, its cron
//! schedules), so a page's render cost, and its live refresh's, is bounded
//! by [`PAGE_SIZE`] rows however many the project has: the figures of a
//! row (a queue's `queue_stats`, its sparkline) are read for the rows of
//! the page only.
//!
//! The list itself is read whole (names and settings, one query, no
//! figures) because a scoped key sees only the items its patterns match,
//! which no store index can page by; the page is then cut from it. Two
//! ways of cutting: after a key (`?after=NAME`, a keyset on a list sorted
//! by that key: the queues, by name) or by page number (`?page=N`, for a
//! list in creation order: the schedules, the webhooks and a webhook's
//! deliveries).

use maud::{Markup, html};
use serde::Deserialize;

/// Rows per page.
pub const PAGE_SIZE: usize = 50;

/// `?after=` and `?page=`, as a page and its live fragment take them.
#[derive(Debug, Default, Deserialize)]
pub struct PageQuery {
    /// Continue after this key.
    pub after: Option<String>,
    /// The page number (from 1).
    pub page: Option<String>,
}

/// One page of a list.
#[derive(Debug)]
pub struct Window<T> {
    /// Its rows, at most [`PAGE_SIZE`].
    pub items: Vec<T>,
    /// How many rows come before it.
    pub skipped: usize,
    /// How many the whole list has.
    pub total: usize,
}

impl<T> Window<T> {
    /// "Rows 51–100 of 6 000", for the pager.
    pub fn range(&self) -> String {
        use super::format::count;
        if self.items.is_empty() {
            return format!("none of {}", count(self.total as i64));
        }
        format!(
            "{}–{} of {}",
            count(self.skipped as i64 + 1),
            count((self.skipped + self.items.len()) as i64),
            count(self.total as i64)
        )
    }

    /// Whether rows follow this page.
    pub fn has_next(&self) -> bool {
        self.skipped + self.items.len() < self.total
    }
}

/// The page of `all` (sorted by `key`) that follows `after`.
pub fn after<T>(all: Vec<T>, key: impl Fn(&T) -> &str, after: Option<&str>) -> Window<T> {
    let total = all.len();
    let skipped = match after {
        Some(a) => all.partition_point(|x| key(x) <= a),
        None => 0,
    };
    let items = all.into_iter().skip(skipped).take(PAGE_SIZE).collect();
    Window {
        items,
        skipped,
        total,
    }
}

/// Page `page` (from 1) of `all`; a page past the end is empty.
pub fn numbered<T>(all: Vec<T>, page: usize) -> Window<T> {
    let total = all.len();
    let skipped = page.saturating_sub(1).saturating_mul(PAGE_SIZE).min(total);
    let items = all.into_iter().skip(skipped).take(PAGE_SIZE).collect();
    Window {
        items,
        skipped,
        total,
    }
}

/// The pager of a numbered list at `base` (`/dashboard/cron`): where
/// this page is among `noun` ("Schedules"), "First page", "Next page".
pub fn numbered_pager<T>(window: &Window<T>, number: usize, base: &str, noun: &str) -> Markup {
    html! {
        @if number > 1 || window.has_next() {
            nav.pager aria-label="Pages" {
                span.muted { (noun) " " (window.range()) ", " (PAGE_SIZE) " a page" }
                @if number > 1 {
                    a.btn href=(base) { "← First page" }
                }
                @if window.has_next() {
                    a.btn rel="next" href=(format!("{base}?page={}", number + 1)) { "Next page →" }
                }
            }
        }
    }
}

/// `?page=` read: a whole number from 1, or an error naming the field.
pub fn page_number(raw: Option<&str>) -> Result<usize, String> {
    match raw.map(str::trim) {
        None | Some("") => Ok(1),
        Some(s) => s
            .parse::<usize>()
            .ok()
            .filter(|n| *n >= 1)
            .ok_or_else(|| format!("page must be a whole number from 1, got {s:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyset_and_numbered_pages() {
        let names: Vec<String> = (0..120).map(|n| format!("q{n:03}")).collect();
        let first = after(names.clone(), |s| s, None);
        assert_eq!(
            (first.items.len(), first.skipped, first.has_next()),
            (50, 0, true)
        );
        let last = after(names.clone(), |s| s, Some("q099"));
        assert_eq!(last.items, names[100..]);
        assert!(!last.has_next());
        // A cursor that is no longer in the list (deleted) still places.
        let gap = after(names.clone(), |s| s, Some("q049x"));
        assert_eq!(gap.items[0], "q050");
        assert_eq!(numbered(names.clone(), 3).items, names[100..]);
        assert!(numbered(names, 9).items.is_empty());
        assert_eq!(page_number(Some("2")), Ok(2));
        assert!(page_number(Some("0")).unwrap_err().contains("page"));
    }
}
