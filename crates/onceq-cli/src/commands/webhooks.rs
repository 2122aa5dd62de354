//! `onceq webhooks register|list|deliveries|test|delete`: the project's
//! account webhooks, through the server's API.

use clap::Subcommand;
use onceq::types::webhook::{RegisterWebhook, WebhookAttempt};

use super::{ServerArgs, client};
use crate::output;

#[derive(Debug, Subcommand)]
pub enum WebhooksCmd {
    /// Register an endpoint for events; prints its secret this once.
    Register {
        /// Where events are POSTed (https://).
        #[arg(value_name = "URL")]
        endpoint: String,
        /// Event types, comma-separated, or `*` for all.
        #[arg(long, value_delimiter = ',', required = true)]
        events: Vec<String>,
        /// The signing secret (16..=255 printable ASCII); generated when absent.
        #[arg(long, env = "ONCEQ_WEBHOOK_SECRET", hide_env_values = true)]
        secret: Option<String>,
        /// Free text.
        #[arg(long)]
        description: Option<String>,
        /// A header added to every delivery, NAME=VALUE (repeatable).
        #[arg(long = "header", value_name = "NAME=VALUE")]
        headers: Vec<String>,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// The project's webhooks.
    List {
        #[command(flatten)]
        server: ServerArgs,
    },
    /// A webhook's latest delivery attempts, newest first.
    Deliveries {
        /// The webhook's id (whk_...).
        id: String,
        /// At most this many (1..=100).
        #[arg(long)]
        limit: Option<u32>,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Send a webhook.test event now and show the attempt.
    Test {
        /// The webhook's id (whk_...).
        id: String,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Delete a webhook.
    Delete {
        /// The webhook's id (whk_...).
        id: String,
        #[command(flatten)]
        server: ServerArgs,
    },
}

pub async fn run(cmd: WebhooksCmd) -> anyhow::Result<()> {
    match cmd {
        WebhooksCmd::Register {
            endpoint,
            events,
            secret,
            description,
            headers,
            server,
        } => {
            let mut map = serde_json::Map::new();
            for h in &headers {
                let (name, value) = h
                    .split_once('=')
                    .ok_or_else(|| anyhow::anyhow!("--header {h:?} must look like NAME=VALUE"))?;
                map.insert(name.to_owned(), value.into());
            }
            let headers = (!map.is_empty())
                .then(|| serde_json::value::to_raw_value(&map))
                .transpose()?;
            let req = RegisterWebhook {
                url: Some(endpoint),
                events: Some(events),
                secret,
                description,
                headers,
            };
            let w = client(&server)?.register_webhook(&req).await?;
            if server.json {
                return output::json(&w);
            }
            output::fields(&[
                ("id", w.id.clone()),
                ("url", w.url.clone()),
                ("events", w.events.join(",")),
                ("secret", w.secret.clone().unwrap_or_default()),
                ("created_at", w.created_at.to_string()),
            ]);
            eprintln!("the secret is shown only now: keep it to verify deliveries");
            Ok(())
        }
        WebhooksCmd::List { server } => {
            let hooks = client(&server)?.list_webhooks().await?;
            if server.json {
                return output::json(&hooks);
            }
            let rows = hooks
                .iter()
                .map(|w| {
                    vec![
                        w.id.clone(),
                        w.url.clone(),
                        w.events.join(","),
                        w.description.clone(),
                        w.created_at.to_string(),
                    ]
                })
                .collect();
            output::table(&["ID", "URL", "EVENTS", "DESCRIPTION", "CREATED"], rows);
            Ok(())
        }
        WebhooksCmd::Deliveries { id, limit, server } => {
            let attempts = client(&server)?.webhook_deliveries(&id, limit).await?;
            if server.json {
                return output::json(&attempts);
            }
            output::table(
                &[
                    "AT", "EVENT", "EVENT ID", "ATTEMPT", "OUTCOME", "STATUS", "MS", "ERROR",
                ],
                attempts.iter().map(row).collect(),
            );
            Ok(())
        }
        WebhooksCmd::Test { id, server } => {
            let a = client(&server)?.test_webhook(&id).await?;
            if server.json {
                return output::json(&a);
            }
            output::table(
                &[
                    "AT", "EVENT", "EVENT ID", "ATTEMPT", "OUTCOME", "STATUS", "MS", "ERROR",
                ],
                vec![row(&a)],
            );
            Ok(())
        }
        WebhooksCmd::Delete { id, server } => {
            let d = client(&server)?.delete_webhook(&id).await?;
            if server.json {
                return output::json(&d);
            }
            println!("deleted webhook {}", d.id);
            Ok(())
        }
    }
}

fn row(a: &WebhookAttempt) -> Vec<String> {
    vec![
        a.attempted_at.to_string(),
        a.event.clone(),
        a.event_id.clone(),
        a.attempt.to_string(),
        a.outcome.clone(),
        a.status
            .map(|s| s.to_string())
            .unwrap_or_else(|| "-".into()),
        a.latency_ms.to_string(),
        a.error.clone().unwrap_or_else(|| "-".into()),
    ]
}
