//! Throughput charts: published and acked, and beside them failed (nacks
//! and expired leases) and dead-lettered, per 10-second bucket over the
//! last 15 minutes, as small inline SVGs (no script, no image request).
//! Each chart has its own scale: a few failures beside thousands of
//! publishes stay visible.
//!
//! Colours come from the stylesheet (classes, not inline styles: the
//! dashboard's Content-Security-Policy allows no inline style). The chart
//! carries a text alternative; the numbers beside it say the same in words.

use maud::{Markup, PreEscaped, html};

use crate::throughput::{BUCKET_SECS, Series};

const WIDTH: usize = 120;
const HEIGHT: u64 = 28;

/// Polyline points of `values` scaled to the chart, highest at `max`.
fn points(values: &[u64], max: u64) -> String {
    let step = WIDTH as f64 / (values.len().max(2) - 1) as f64;
    let usable = (HEIGHT - 4) as f64;
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let y = HEIGHT as f64 - 2.0 - (*v as f64 / max as f64) * usable;
            format!("{:.1},{:.1}", i as f64 * step, y)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// One chart of two lines (`a` drawn first, classes `ca` and `cb`).
fn two_lines(a: &[u64], b: &[u64], classes: (&str, &str), what: &str) -> Markup {
    let peak = a.iter().chain(b).copied().max().unwrap_or(0);
    let minutes = a.len() as i64 * BUCKET_SECS / 60;
    let label = format!(
        "{what} per {BUCKET_SECS} seconds over the last {minutes} minutes; \
         peak {peak} per {BUCKET_SECS} seconds"
    );
    let max = peak.max(1);
    html! {
        svg.spark role="img" aria-label=(label) viewBox=(format!("0 0 {WIDTH} {HEIGHT}"))
            width=(WIDTH) height=(HEIGHT) preserveAspectRatio="none" {
            title { (label) }
            line.spark-base x1="0" y1=(HEIGHT - 2) x2=(WIDTH) y2=(HEIGHT - 2) {}
            polyline class=(classes.0) points=(points(a, max)) {}
            polyline class=(classes.1) points=(points(b, max)) {}
        }
    }
}

/// The published/acked chart of one queue's series.
pub fn chart(series: &Series) -> Markup {
    two_lines(
        &series.published,
        &series.acked,
        ("spark-pub", "spark-ack"),
        "Published and acked",
    )
}

/// The failed/dead-lettered chart of one queue's series.
pub fn failures(series: &Series) -> Markup {
    two_lines(
        &series.failed,
        &series.dead_lettered,
        ("spark-fail", "spark-dead"),
        "Failed (nacked or lease expired) and dead-lettered",
    )
}

/// The last minute in words: `12/min in · 11/min acked`.
pub fn last_minute(series: &Series) -> Markup {
    let (published, acked) = series.recent((60 / BUCKET_SECS) as usize);
    html! {
        span.rate {
            span.rate-pub { (published) (PreEscaped("&#8239;")) "/min in" }
            " · "
            span.rate-ack { (acked) (PreEscaped("&#8239;")) "/min acked" }
        }
    }
}

/// The last minute's failures in words: `3/min failed · 1/min dead`.
pub fn last_minute_failures(series: &Series) -> Markup {
    let (failed, dead) = series.recent_failures((60 / BUCKET_SECS) as usize);
    html! {
        span.rate {
            span.rate-fail { (failed) (PreEscaped("&#8239;")) "/min failed" }
            " · "
            span.rate-dead { (dead) (PreEscaped("&#8239;")) "/min dead-lettered" }
        }
    }
}
