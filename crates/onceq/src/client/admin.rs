//! The admin API (`/v1/admin/...`): keys and projects of every project.
//! The client's key must hold the `accounts` action; any other answers
//! [`Error`] with status 403.

use onceq_types::{
    admin::{
        CreatedKey, KeyCreate, KeyInfo, KeyLimits, KeyRevoke, KeyRotate, ProjectInfo, ProjectLimits,
    },
    reply::Items,
};
use reqwest::Method;

use super::{Answer, Client, Error};

impl Client {
    /// Every key of every project (never their secrets).
    pub async fn admin_keys(&self) -> Result<Vec<KeyInfo>, Error> {
        let a: Answer<Items<KeyInfo>> = self
            .call::<(), _>(Method::GET, "/v1/admin/keys", None)
            .await?;
        Ok(a.data.items)
    }

    /// Creates a key; the answer's `secret` is shown this once.
    pub async fn admin_keys_create(&self, req: &KeyCreate) -> Result<CreatedKey, Error> {
        Ok(self
            .call(Method::POST, "/v1/admin/keys/create", Some(req))
            .await?
            .data)
    }

    /// Revokes a key on every server.
    pub async fn admin_keys_revoke(&self, req: &KeyRevoke) -> Result<KeyInfo, Error> {
        Ok(self
            .call(Method::POST, "/v1/admin/keys/revoke", Some(req))
            .await?
            .data)
    }

    /// A new key with the old one's project, scope, expiry and rate limit.
    pub async fn admin_keys_rotate(&self, req: &KeyRotate) -> Result<CreatedKey, Error> {
        Ok(self
            .call(Method::POST, "/v1/admin/keys/rotate", Some(req))
            .await?
            .data)
    }

    /// Sets or lifts a key's own rate limit.
    pub async fn admin_keys_limits(&self, req: &KeyLimits) -> Result<KeyInfo, Error> {
        Ok(self
            .call(Method::POST, "/v1/admin/keys/limits", Some(req))
            .await?
            .data)
    }

    /// Every project with its credit, spend and rate limit.
    pub async fn admin_projects(&self) -> Result<Vec<ProjectInfo>, Error> {
        let a: Answer<Items<ProjectInfo>> = self
            .call::<(), _>(Method::GET, "/v1/admin/projects", None)
            .await?;
        Ok(a.data.items)
    }

    /// Sets a project's credit limit and/or rate limit.
    pub async fn admin_projects_limits(&self, req: &ProjectLimits) -> Result<ProjectInfo, Error> {
        Ok(self
            .call(Method::POST, "/v1/admin/projects/limits", Some(req))
            .await?
            .data)
    }
}
