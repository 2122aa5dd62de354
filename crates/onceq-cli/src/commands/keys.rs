//! `onceq keys create|list|revoke|rotate|set-rate`: on the store directly,
//! so it works whether or not a server runs (SQLite allows a second writer
//! process; PostgreSQL is shared anyway), or with `--url` through a
//! server's admin API ([`super::admin`]). Servers see every change on the
//! next request: on SQLite each request looks its key up; on PostgreSQL
//! servers cache lookups and drop the cache on the NOTIFY every change to
//! the keys table sends, so a change counts as soon as it is delivered.

use clap::Subcommand;
use jiff::SignedDuration;
use onceq_types::admin::{KeyCreate, KeyInfo, KeyLimits, KeyRevoke, KeyRotate};

use super::{RateArgs, admin::AdminArgs};
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
        /// peek (payloads in answers that do not consume them), admin,
        /// accounts (the admin API: keys and limits of every project), or
        /// full (all but accounts). Default: full.
        #[arg(long, default_value = "full")]
        actions: String,
        /// The key stops working after this long (e.g. 30d, 12h).
        #[arg(long, value_parser = duration)]
        expires_in: Option<SignedDuration>,
        #[command(flatten)]
        target: AdminArgs,
    },
    /// List keys (never their secrets).
    List {
        #[command(flatten)]
        target: AdminArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a key by its id, on every server at once.
    Revoke {
        /// The key's public id (from `keys list`).
        key_id: String,
        #[command(flatten)]
        target: AdminArgs,
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
        target: AdminArgs,
    },
    /// Give a key its own rate limit (or lift it with --clear).
    SetRate {
        /// The key's public id.
        key_id: String,
        #[command(flatten)]
        rate: RateArgs,
        #[command(flatten)]
        target: AdminArgs,
    },
}

pub async fn run(cmd: KeysCmd) -> anyhow::Result<()> {
    match cmd {
        KeysCmd::Create {
            project,
            label,
            queues,
            actions,
            expires_in,
            target,
        } => {
            let req = KeyCreate {
                project: Some(project),
                label,
                actions: Some(actions),
                queues: Some(queues),
                expires_in_seconds: expires_in.map(|d| d.as_secs()),
            };
            let created = target.open().await?.keys_create(req).await?;
            let k = &created.key;
            eprintln!(
                "created key {} for project {:?} (actions: {}, queues: {})",
                k.key_id, k.project, k.actions, k.queues
            );
            println!("{}", created.secret);
        }
        KeysCmd::List { target, json } => list(target.open().await?.keys().await?, json)?,
        KeysCmd::Revoke { key_id, target } => {
            let req = KeyRevoke {
                key_id: Some(key_id),
            };
            let key = target.open().await?.keys_revoke(req).await?;
            println!("revoked {}", key.key_id);
        }
        KeysCmd::Rotate {
            key_id,
            expire_old_in,
            target,
        } => {
            let req = KeyRotate {
                key_id: Some(key_id.clone()),
                expire_old_in_seconds: expire_old_in.map(|d| d.as_secs()),
            };
            let target = target.open().await?;
            let created = target.keys_rotate(req).await?;
            let old = target
                .keys()
                .await?
                .into_iter()
                .find(|k| k.key_id == key_id);
            let until = match old.and_then(|k| k.expires_at) {
                Some(t) => format!("until {t} or until revoked"),
                None => "until revoked".into(),
            };
            eprintln!(
                "created key {} for project {:?}; {key_id} keeps working {until}",
                created.key.key_id, created.key.project
            );
            println!("{}", created.secret);
        }
        KeysCmd::SetRate {
            key_id,
            rate,
            target,
        } => {
            let req = KeyLimits {
                key_id: Some(key_id),
                rate_per_sec: Some(rate.rate),
                rate_burst: rate.burst.map(i64::from),
            };
            let key = target.open().await?.keys_limits(req).await?;
            println!(
                "{}: rate limit {}",
                key.key_id,
                super::describe_rate(key.rate_per_sec, key.rate_burst)
            );
        }
    }
    Ok(())
}

fn list(keys: Vec<KeyInfo>, json: bool) -> anyhow::Result<()> {
    if json {
        return output::json(&keys);
    }
    let rows = keys
        .into_iter()
        .map(|k| {
            let opt =
                |t: Option<jiff::Timestamp>| t.map(|t| t.to_string()).unwrap_or_else(|| "-".into());
            vec![
                k.key_id,
                k.project,
                k.actions,
                k.queues,
                k.label.unwrap_or_default(),
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
    let d = span
        .to_duration(jiff::SpanRelativeTo::days_are_24_hours())
        .map_err(|e| e.to_string())?;
    if !d.is_positive() {
        return Err("a duration must be positive (e.g. 1h, 7d)".into());
    }
    Ok(d)
}
