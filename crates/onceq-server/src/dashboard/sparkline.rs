//! Throughput charts: published and acked per 10-second bucket over the
//! last 15 minutes, as a small inline SVG (no script, no image request).
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

/// The chart of one queue's series.
pub fn chart(series: &Series) -> Markup {
    let peak = series
        .published
        .iter()
        .chain(&series.acked)
        .copied()
        .max()
        .unwrap_or(0);
    let minutes = series.published.len() as i64 * BUCKET_SECS / 60;
    let label = format!(
        "Published and acked per {BUCKET_SECS} seconds over the last {minutes} minutes; \
         peak {peak} per {BUCKET_SECS} seconds"
    );
    let max = peak.max(1);
    html! {
        svg.spark role="img" aria-label=(label) viewBox=(format!("0 0 {WIDTH} {HEIGHT}"))
            width=(WIDTH) height=(HEIGHT) preserveAspectRatio="none" {
            title { (label) }
            line.spark-base x1="0" y1=(HEIGHT - 2) x2=(WIDTH) y2=(HEIGHT - 2) {}
            polyline.spark-pub points=(points(&series.published, max)) {}
            polyline.spark-ack points=(points(&series.acked, max)) {}
        }
    }
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
