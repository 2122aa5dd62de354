//! `onceq keys create|list|revoke`: straight on the store, so it works
//! whether or not a server runs (SQLite allows a second writer process;
//! PostgreSQL is shared anyway).

use clap::Subcommand;
use onceq_server::auth;

use super::StoreArgs;
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
    /// Revoke a key by its id.
    Revoke {
        /// The key's public id (from `keys list`).
        key_id: String,
        #[command(flatten)]
        store: StoreArgs,
    },
}

pub async fn run(cmd: KeysCmd) -> anyhow::Result<()> {
    let now = jiff::Timestamp::now();
    match cmd {
        KeysCmd::Create {
            project,
            label,
            store,
        } => {
            anyhow::ensure!(
                !project.is_empty()
                    && project.len() <= 80
                    && !project.chars().any(char::is_control),
                "--project must be 1 to 80 printable characters"
            );
            let store = open(&store).await?;
            let (key, record) = auth::create_key(store.as_ref(), &project, label, now).await?;
            eprintln!(
                "created key {} for project {:?}",
                record.key_id, record.project
            );
            println!("{}", key.secret);
        }
        KeysCmd::List { store, json } => {
            let store = open(&store).await?;
            let keys = store.key_list().await?;
            if json {
                let rows: Vec<_> = keys
                    .iter()
                    .map(|k| {
                        serde_json::json!({
                            "key_id": k.key_id, "project": k.project, "label": k.label,
                            "created_at": k.created_at, "revoked_at": k.revoked_at,
                        })
                    })
                    .collect();
                output::json(&rows)?;
            } else {
                let rows = keys
                    .iter()
                    .map(|k| {
                        vec![
                            k.key_id.clone(),
                            k.project.clone(),
                            k.label.clone().unwrap_or_default(),
                            k.created_at.to_string(),
                            k.revoked_at
                                .map(|t| t.to_string())
                                .unwrap_or_else(|| "-".into()),
                        ]
                    })
                    .collect();
                output::table(&["KEY ID", "PROJECT", "LABEL", "CREATED", "REVOKED"], rows);
            }
        }
        KeysCmd::Revoke { key_id, store } => {
            let store = open(&store).await?;
            anyhow::ensure!(
                store.key_revoke(&key_id, now).await?,
                "no active key with id {key_id:?}"
            );
            println!("revoked {key_id}");
        }
    }
    Ok(())
}

async fn open(args: &StoreArgs) -> anyhow::Result<std::sync::Arc<dyn onceq_store::Store>> {
    Ok(onceq_store::open(args.database_url.as_deref(), &args.data_dir).await?)
}
