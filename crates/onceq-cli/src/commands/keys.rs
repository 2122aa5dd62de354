//! `onceq keys create|list|revoke|rotate|set-rate`: straight on the store,
//! so it works whether or not a server runs (SQLite allows a second writer
//! process; PostgreSQL is shared anyway). Servers see every change on the
//! next request: on SQLite each request looks its key up; on PostgreSQL
//! servers cache lookups and drop the cache on the NOTIFY every change to
//! the keys table sends, so a change counts as soon as it is delivered.

use clap::Subcommand;
use jiff::{SignedDuration, Timestamp};
use onceq_server::auth;
use onceq_types::scope::{Actions, KeyScope, QueuePatterns};

use super::{RateArgs, StoreArgs};
use crate::output;

#[derive(Debug, Subcommand)]
pub enum KeysCmd {
    /// Create a key and print it (only this once).
    Create {
        /// The project the key acts for.
        #[arg(long, default_value = "default")]
        project: String,
        /// A note for operators.
        #[arg(long)]
        label: Option<String>,
        /// Queues the key may use: comma-separated names or patterns with
        /// `*` (e.g. 'exports-*,billing'). Default: every queue.
        #[arg(long, default_value = "*")]
        queues: String,
        /// What the key may do: comma-separated publish, consume, read,
        /// admin, or full. Default: full.
        #[arg(long, default_value = "full")]
        actions: String,
        /// The key stops working after this long (e.g. 30d, 12h).
        #[arg(long, value_parser = duration)]
        expires_in: Option<SignedDuration>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// List keys (never their secrets).
    List {
        #[command(flatten)]
        store: StoreArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a key by its id, on every server at once.
    Revoke {
        /// The key's public id (from `keys list`).
        key_id: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Create a new key with the same project and scope as KEY_ID and print
    /// it. Both keys work until the old one is revoked, or expires.
    Rotate {
        /// The key to replace.
        key_id: String,
        /// The old key stops working after this long (e.g. 1h, 7d).
        #[arg(long, value_parser = duration)]
        expire_old_in: Option<SignedDuration>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Give a key its own rate limit (or lift it with --clear).
    SetRate {
        /// The key's public id.
        key_id: String,
        #[command(flatten)]
        rate: RateArgs,
        #[command(flatten)]
        store: StoreArgs,
    },
}

pub async fn run(cmd: KeysCmd) -> anyhow::Result<()> {
    let now = Timestamp::now();
    match cmd {
        KeysCmd::Create {
            project,
            label,
            queues,
            actions,
            expires_in,
            store,
        } => {
            anyhow::ensure!(
                !project.is_empty()
                    && project.len() <= 80
                    && !project.chars().any(char::is_control),
                "--project must be 1 to 80 printable characters"
            );
            let scope = KeyScope {
                actions: Actions::parse(&actions).map_err(|e| anyhow::anyhow!("--actions: {e}"))?,
                queues: QueuePatterns::parse(&queues)
                    .map_err(|e| anyhow::anyhow!("--queues: {e}"))?,
            };
            let expires_at = expires_in.map(|d| after(now, d)).transpose()?;
            let store = super::open(&store).await?;
            let (key, record) =
                auth::create_scoped_key(store.as_ref(), &project, label, scope, expires_at, now)
                    .await?;
            eprintln!(
                "created key {} for project {:?} (actions: {}, queues: {})",
                record.key_id, record.project, record.scope.actions, record.scope.queues
            );
            println!("{}", key.secret);
        }
        KeysCmd::List { store, json } => {
            let store = super::open(&store).await?;
            list(store.key_list().await?, json)?;
        }
        KeysCmd::Revoke { key_id, store } => {
            let store = super::open(&store).await?;
            anyhow::ensure!(
                store.key_revoke(&key_id, now).await?,
                "no active key with id {key_id:?}"
            );
            println!("revoked {key_id}");
        }
        KeysCmd::Rotate {
            key_id,
            expire_old_in,
            store,
        } => {
            let old_expires = expire_old_in.map(|d| after(now, d)).transpose()?;
            let store = super::open(&store).await?;
            let (key, record) = auth::rotate_key(store.as_ref(), &key_id, old_expires, now).await?;
            let until = match old_expires {
                Some(t) => format!("until {t} or until revoked"),
                None => "until revoked".into(),
            };
            eprintln!(
                "created key {} for project {:?}; {key_id} keeps working {until}",
                record.key_id, record.project
            );
            println!("{}", key.secret);
        }
        KeysCmd::SetRate {
            key_id,
            rate,
            store,
        } => {
            let limit = rate.limit()?;
            let store = super::open(&store).await?;
            anyhow::ensure!(
                store.key_set_rate(&key_id, limit).await?,
                "no active key with id {key_id:?}"
            );
            println!("{key_id}: rate limit {}", super::describe_rate(limit));
        }
    }
    Ok(())
}

fn list(keys: Vec<onceq_store::KeyRecord>, json: bool) -> anyhow::Result<()> {
    if json {
        let rows: Vec<_> = keys
            .iter()
            .map(|k| {
                serde_json::json!({
                    "key_id": k.key_id, "project": k.project, "label": k.label,
                    "created_at": k.created_at, "revoked_at": k.revoked_at,
                    "actions": k.scope.actions.to_string(),
                    "queues": k.scope.queues.to_string(),
                    "expires_at": k.expires_at,
                    "rate_per_sec": k.rate.map(|r| r.per_sec),
                    "rate_burst": k.rate.map(|r| r.burst),
                })
            })
            .collect();
        return output::json(&rows);
    }
    let rows = keys
        .iter()
        .map(|k| {
            let opt = |t: Option<Timestamp>| t.map(|t| t.to_string()).unwrap_or_else(|| "-".into());
            vec![
                k.key_id.clone(),
                k.project.clone(),
                k.scope.actions.to_string(),
                k.scope.queues.to_string(),
                k.label.clone().unwrap_or_default(),
                k.created_at.to_string(),
                opt(k.expires_at),
                opt(k.revoked_at),
            ]
        })
        .collect();
    output::table(
        &[
            "KEY ID", "PROJECT", "ACTIONS", "QUEUES", "LABEL", "CREATED", "EXPIRES", "REVOKED",
        ],
        rows,
    );
    Ok(())
}

/// `30d`, `12h`, `1h 30m`, ...; a day is 24 hours.
fn duration(text: &str) -> Result<SignedDuration, String> {
    let span: jiff::Span = text
        .parse()
        .map_err(|e| format!("{e} (write durations like 30d, 12h or 1h 30m)"))?;
    span.to_duration(jiff::SpanRelativeTo::days_are_24_hours())
        .map_err(|e| e.to_string())
}

fn after(now: Timestamp, d: SignedDuration) -> anyhow::Result<Timestamp> {
    anyhow::ensure!(d.is_positive(), "a duration must be positive (e.g. 1h, 7d)");
    Ok(now.checked_add(d)?)
}
