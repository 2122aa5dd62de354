//! How the dashboard writes numbers, ages, times, payloads and URLs.

use jiff::{Timestamp, tz::TimeZone};
use maud::{Markup, html};

/// `12345` as `12,345`.
pub fn count(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A duration in whole seconds, in its two largest units: `45 s`,
/// `3 m 12 s`, `2 h 5 m`, `3 d 4 h`.
pub fn age(secs: i64) -> String {
    let s = secs.max(0);
    let (d, h, m) = (s / 86_400, s % 86_400 / 3600, s % 3600 / 60);
    match () {
        _ if d > 0 => format!("{d} d {h} h"),
        _ if h > 0 => format!("{h} h {m} m"),
        _ if m > 0 => format!("{m} m {} s", s % 60),
        _ => format!("{s} s"),
    }
}

/// `t` relative to `now`: `5 s ago`, `in 12 s`, `now`.
pub fn relative(t: Timestamp, now: Timestamp) -> String {
    let secs = now.duration_since(t).as_secs();
    match secs {
        0 => "now".into(),
        s if s > 0 => format!("{} ago", age(s)),
        s => format!("in {}", age(-s)),
    }
}

/// `t` in UTC to the second, e.g. `2026-07-26 12:00:05 UTC`.
pub fn utc(t: Timestamp) -> String {
    t.to_zoned(TimeZone::UTC)
        .strftime("%Y-%m-%d %H:%M:%S UTC")
        .to_string()
}

/// A `<time>` showing `t` relative to `now`, the exact time as its tooltip.
pub fn time_rel(t: Timestamp, now: Timestamp) -> Markup {
    html! { time datetime=(t.to_string()) title=(utc(t)) { (relative(t, now)) } }
}

/// A `<time>` showing `t` exactly, then how long ago (or ahead) it is.
pub fn time_full(t: Timestamp, now: Timestamp) -> Markup {
    html! {
        time datetime=(t.to_string()) { (utc(t)) }
        " " span.muted { "(" (relative(t, now)) ")" }
    }
}

/// A payload (or result) in a table cell: its first `max` characters, or
/// "withheld" when `gate` does not let the key read payloads. Every
/// listing shows payloads through this.
pub fn payload_cell(gate: crate::payloads::PayloadGate, payload: &str, max: usize) -> Markup {
    match gate.reveal(payload) {
        Some(p) => html! { code { (preview(p, max)) } },
        None => withheld(),
    }
}

/// What stands where a payload is withheld (the key lacks `peek`).
pub fn withheld() -> Markup {
    html! { span.muted.payload-withheld title="This API key may not read payloads (it lacks the peek action)" { "withheld" } }
}

/// The first `max` characters of a payload on one line.
pub fn preview(payload: &str, max: usize) -> String {
    let mut chars = payload.chars();
    let head: String = chars.by_ref().take(max).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

/// Compact JSON re-indented for reading. Works on the text, token by token,
/// without parsing numbers, so what is shown is exactly what is stored
/// (a parse into `f64` would round big integers). Input that is not the
/// store's compact JSON comes back unchanged.
pub fn pretty(json: &str) -> String {
    let mut out = String::with_capacity(json.len() * 2);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut chars = json.chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.extend(std::iter::repeat_n("  ", depth));
    };
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                let close = if c == '{' { '}' } else { ']' };
                if chars.peek() == Some(&close) {
                    out.push(chars.next().unwrap_or(close));
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                let Some(d) = depth.checked_sub(1) else {
                    return json.to_owned();
                };
                depth = d;
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    if depth != 0 || in_string {
        return json.to_owned();
    }
    out
}

/// `s` percent-encoded for a URL path segment or query value: everything
/// but unreserved characters.
pub fn url_part(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// An id attribute value derived from `s` (message ids, queue names), so
/// focus survives a live refresh that replaces the element.
pub fn dom_id(prefix: &str, s: &str) -> String {
    let mut out = String::from(prefix);
    for c in s.chars() {
        out.push(if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
            c
        } else {
            '_'
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_ages() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(-1234567), "-1,234,567");
        assert_eq!(age(0), "0 s");
        assert_eq!(age(192), "3 m 12 s");
        assert_eq!(age(7500), "2 h 5 m");
        assert_eq!(age(3 * 86_400 + 4 * 3600 + 9), "3 d 4 h");
        let t: Timestamp = "2026-07-26T12:00:00Z".parse().unwrap();
        let later: Timestamp = "2026-07-26T12:00:05Z".parse().unwrap();
        assert_eq!(relative(t, later), "5 s ago");
        assert_eq!(relative(later, t), "in 5 s");
        assert_eq!(relative(t, t), "now");
        assert_eq!(utc(later), "2026-07-26 12:00:05 UTC");
    }

    #[test]
    fn pretty_keeps_every_token() {
        let json = r#"{"a":[1,{"b":"x, y: {z}"},[]],"big":123456789012345678901234567890,"e":{},"s":"q\"}"}"#;
        let p = pretty(json);
        assert_eq!(
            p,
            "{\n  \"a\": [\n    1,\n    {\n      \"b\": \"x, y: {z}\"\n    },\n    []\n  ],\n  \"big\": 123456789012345678901234567890,\n  \"e\": {},\n  \"s\": \"q\\\"}\"\n}"
        );
        let squeezed: String = p.split_whitespace().collect();
        assert!(squeezed.contains("123456789012345678901234567890"));
        assert_eq!(pretty("42"), "42");
        assert_eq!(
            pretty("{\"a\":1"),
            "{\"a\":1",
            "unbalanced comes back as is"
        );
    }

    #[test]
    fn previews_and_urls() {
        assert_eq!(preview("abcdef", 3), "abc…");
        assert_eq!(preview("abc", 3), "abc");
        assert_eq!(url_part("a b/c?d=é"), "a%20b%2Fc%3Fd%3D%C3%A9");
        assert_eq!(dom_id("m-", "qmsg_1.2"), "m-qmsg_1_2");
    }
}
