//! `onceq publish QUEUE --file jobs.jsonl`: one message per line, sent with
//! `publish_batch` ten at a time.
//!
//! A line is either a payload (any JSON value but null) or a publish body:
//! an object that has a `payload` member and no member other than
//! `payload`, `delay_seconds`, `priority`, `idempotency_key` and
//! `message_group_id`. Blank lines are skipped. The whole file is read and
//! checked before anything is sent, so a bad line publishes nothing.

use std::{io::Read, path::Path};

use anyhow::Context;
use onceq_types::{MAX_BATCH, request::BatchItem};
use serde_json::Value;

use super::{ServerArgs, client};
use crate::{output, progress};

/// The members that make a line a publish body rather than a payload.
const BODY_KEYS: &[&str] = &[
    "payload",
    "delay_seconds",
    "priority",
    "idempotency_key",
    "deduplication_id",
    "message_group_id",
];

/// What `--delay` and `--priority` set for lines that do not say.
#[derive(Debug, Clone, Copy, Default)]
pub struct Defaults {
    pub delay_seconds: Option<i64>,
    pub priority: Option<i64>,
}

/// Publishes every line of `file` (`-` for stdin) to `queue`.
pub async fn publish_file(
    queue: &str,
    file: &Path,
    defaults: Defaults,
    server: &ServerArgs,
) -> anyhow::Result<()> {
    let text = read(file)?;
    let items = parse(&text, defaults)?;
    let c = client(server)?;
    let total = items.len();
    let pb = progress::bar(total as u64, &format!("publishing to {queue}"));
    let (mut published, mut replayed) = (0usize, 0usize);
    let mut items = items.into_iter().peekable();
    while items.peek().is_some() {
        let chunk: Vec<BatchItem> = items.by_ref().take(MAX_BATCH).collect();
        let n = chunk.len();
        let answer = c.publish_batch(queue, chunk).await.with_context(|| {
            format!("{published} of {total} message(s) were published before this batch failed")
        })?;
        let replays = answer
            .iter()
            .filter(|m| m.idempotent_replay == Some(true))
            .count();
        replayed += replays;
        published += n - replays;
        pb.inc(n as u64);
    }
    pb.finish_and_clear();
    if server.json {
        return output::json(&serde_json::json!({
            "queue": queue, "published": published, "replayed": replayed,
        }));
    }
    println!("published {published} message(s) to {queue} ({replayed} replayed)");
    Ok(())
}

fn read(file: &Path) -> anyhow::Result<String> {
    if file == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading stdin")?;
        return Ok(text);
    }
    std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))
}

/// Every non-blank line as a batch item, each with an idempotency key (its
/// own or a fresh one), so that the client may retry a batch safely.
pub fn parse(text: &str, defaults: Defaults) -> anyhow::Result<Vec<BatchItem>> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            item(line, defaults).map_err(|e| {
                crate::errors::Hinted::new(
                    format!("line {}: {e:#}", i + 1),
                    "each line is one JSON payload, or a publish body {\"payload\": ..., \"priority\": ..., \"delay_seconds\": ...}",
                )
                .into()
            })
        })
        .collect()
}

fn item(line: &str, defaults: Defaults) -> anyhow::Result<BatchItem> {
    let value: Value = crate::errors::decode_line(line).context("not valid JSON")?;
    let is_body = matches!(&value, Value::Object(m)
        if m.contains_key("payload") && m.keys().all(|k| BODY_KEYS.contains(&k.as_str())));
    let mut item = if is_body {
        crate::errors::decode_line::<BatchItem>(line).context("not a valid publish body")?
    } else {
        BatchItem {
            payload: Some(serde_json::value::to_raw_value(&value)?),
            ..BatchItem::default()
        }
    };
    if item.payload.as_ref().is_none_or(|p| p.get() == "null") {
        anyhow::bail!("the payload must not be null");
    }
    item.delay_seconds = item.delay_seconds.or(defaults.delay_seconds);
    item.priority = item.priority.or(defaults.priority);
    // `deduplication_id` is the key's other name: a line's own wins over
    // a generated one.
    if item.idempotency_key.is_none() && item.deduplication_id.is_none() {
        item.idempotency_key = Some(uuid::Uuid::now_v7().to_string());
    }
    Ok(item)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_bodies_and_blank_lines() {
        let text = "{\"n\":1}\n\n  \n{\"payload\":{\"n\":2},\"priority\":5,\"idempotency_key\":\"k2\"}\n\
                    {\"payload\":3,\"other\":true}\n\"text\"\n";
        let items = parse(
            text,
            Defaults {
                delay_seconds: Some(7),
                priority: Some(1),
            },
        )
        .unwrap();
        let got: Vec<(Value, Option<i64>, Option<i64>)> = items
            .iter()
            .map(|i| {
                let payload = serde_json::from_str(i.payload.as_ref().unwrap().get()).unwrap();
                (payload, i.delay_seconds, i.priority)
            })
            .collect();
        use serde_json::json;
        assert_eq!(
            got,
            [
                (json!({"n": 1}), Some(7), Some(1)),
                (json!({"n": 2}), Some(7), Some(5)),
                // an unknown member: the whole object is the payload
                (json!({"payload": 3, "other": true}), Some(7), Some(1)),
                (json!("text"), Some(7), Some(1)),
            ]
        );
        assert_eq!(items[1].idempotency_key.as_deref(), Some("k2"));
        assert!(items.iter().all(|i| i.idempotency_key.is_some()));
    }

    #[test]
    fn bad_lines_are_named() {
        let err = parse("1\n{nope\n", Defaults::default()).unwrap_err();
        assert_eq!(format!("{err:#}").split(':').next(), Some("line 2"));
        let err = parse("1\n2\nnull\n", Defaults::default()).unwrap_err();
        assert!(format!("{err:#}").starts_with("line 3: the payload must not be null"));
        let err = parse("{\"payload\": null}", Defaults::default()).unwrap_err();
        assert!(format!("{err:#}").contains("must not be null"), "{err:#}");
    }
}
