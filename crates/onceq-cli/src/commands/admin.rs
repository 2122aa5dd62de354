//! Where `onceq keys` and `onceq projects` do their work: on the store
//! directly (an existing one only: they never create an empty store nobody
//! serves), or through a server's admin API with `--url`. Either way the
//! same operations of `onceq_server::admin` run with the same bodies, and
//! the answers are the same records, so the output is the same.

use std::sync::Arc;

use clap::Args;
use jiff::Timestamp;
use onceq_server::admin;
use onceq_store::{OpenMode, Store, StoreOptions};
use onceq_types::admin::{
    CreatedKey, KeyCreate, KeyInfo, KeyLimits, KeyRevoke, KeyRotate, ProjectInfo, ProjectLimits,
};

use super::StoreArgs;

/// The store flags, or `--url` and a key for the admin API.
#[derive(Debug, Clone, Args)]
pub struct AdminArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// Work through the admin API of the server at this URL instead of on
    /// the store (needs a key with the `accounts` action).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// The API key for --url.
    #[arg(long, env = "ONCEQ_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
}

/// An open target of the admin operations.
pub enum Target {
    /// The store itself.
    Store(Arc<dyn Store>),
    /// A server's admin API.
    Api(onceq::Client),
}

impl AdminArgs {
    /// Opens the store (an existing onceq store only) or makes the client.
    pub async fn open(&self) -> anyhow::Result<Target> {
        if let Some(url) = &self.url {
            let key = self.api_key.as_deref().ok_or_else(|| {
                anyhow::anyhow!(
                    "--url needs a key with the accounts action: --api-key or ONCEQ_API_KEY"
                )
            })?;
            return Ok(Target::Api(onceq::Client::new(url, key)?));
        }
        let url = self.store.database_url()?;
        let options = StoreOptions {
            mode: OpenMode::Existing,
            ..StoreOptions::default()
        };
        let store = onceq_store::open_with(url.as_deref(), &self.store.data_dir, options)
            .await
            .map_err(|e| {
                anyhow::anyhow!(
                    "{e}\nhint: run \"onceq serve\" first (it creates the store), or pass \
                     --data-dir/--database-url naming the server's store, or --url for its admin API"
                )
            })?;
        Ok(Target::Store(store))
    }
}

/// The CLI's view of a server's refusal or an operation's: its message.
fn api(e: onceq_server::ApiError) -> anyhow::Error {
    anyhow::anyhow!("{}", e.message())
}

impl Target {
    pub async fn keys(&self) -> anyhow::Result<Vec<KeyInfo>> {
        Ok(match self {
            Target::Store(s) => admin::keys_list(s.as_ref()).await.map_err(api)?,
            Target::Api(c) => c.admin_keys().await?,
        })
    }

    pub async fn keys_create(&self, req: KeyCreate) -> anyhow::Result<CreatedKey> {
        Ok(match self {
            Target::Store(s) => admin::keys_create(s.as_ref(), req, Timestamp::now())
                .await
                .map_err(api)?,
            Target::Api(c) => c.admin_keys_create(&req).await?,
        })
    }

    pub async fn keys_revoke(&self, req: KeyRevoke) -> anyhow::Result<KeyInfo> {
        Ok(match self {
            Target::Store(s) => admin::keys_revoke(s.as_ref(), req, Timestamp::now())
                .await
                .map_err(api)?,
            Target::Api(c) => c.admin_keys_revoke(&req).await?,
        })
    }

    pub async fn keys_rotate(&self, req: KeyRotate) -> anyhow::Result<CreatedKey> {
        Ok(match self {
            Target::Store(s) => admin::keys_rotate(s.as_ref(), req, Timestamp::now())
                .await
                .map_err(api)?,
            Target::Api(c) => c.admin_keys_rotate(&req).await?,
        })
    }

    pub async fn keys_limits(&self, req: KeyLimits) -> anyhow::Result<KeyInfo> {
        Ok(match self {
            Target::Store(s) => admin::keys_limits(s.as_ref(), req).await.map_err(api)?,
            Target::Api(c) => c.admin_keys_limits(&req).await?,
        })
    }

    pub async fn projects(&self) -> anyhow::Result<Vec<ProjectInfo>> {
        Ok(match self {
            Target::Store(s) => admin::projects_list(s.as_ref()).await.map_err(api)?,
            Target::Api(c) => c.admin_projects().await?,
        })
    }

    pub async fn projects_limits(&self, req: ProjectLimits) -> anyhow::Result<ProjectInfo> {
        Ok(match self {
            Target::Store(s) => admin::projects_limits(s.as_ref(), req).await.map_err(api)?,
            Target::Api(c) => c.admin_projects_limits(&req).await?,
        })
    }
}
