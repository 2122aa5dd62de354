//! Account webhooks (`/v1/account/webhooks/...`): the project's endpoints
//! that receive its events. Deliveries are signed like push deliveries:
//! check them with [`crate::push::verify_request`], and dedupe by the
//! `onceq-event-id` header.

use onceq_types::{
    reply::Items,
    webhook::{RegisterWebhook, Webhook, WebhookAttempt, WebhookDeleted},
};
use reqwest::Method;

use super::{Answer, Client, Error, id_segment};

impl Client {
    /// Registers a webhook; the answer's `secret` is shown this once.
    pub async fn register_webhook(&self, req: &RegisterWebhook) -> Result<Webhook, Error> {
        Ok(self
            .call(Method::POST, "/v1/account/webhooks/register", Some(req))
            .await?
            .data)
    }

    /// The project's webhooks, oldest first (never their secrets).
    pub async fn list_webhooks(&self) -> Result<Vec<Webhook>, Error> {
        let a: Answer<Items<Webhook>> = self
            .call::<(), _>(Method::GET, "/v1/account/webhooks/list", None)
            .await?;
        Ok(a.data.items)
    }

    /// A webhook's latest delivery attempts, newest first (at most
    /// `limit`, 1..=100; the server's default 50 when `None`).
    pub async fn webhook_deliveries(
        &self,
        id: &str,
        limit: Option<u32>,
    ) -> Result<Vec<WebhookAttempt>, Error> {
        let mut path = format!("/v1/account/webhooks/deliveries/{}", id_segment(id)?);
        if let Some(limit) = limit {
            path.push_str(&format!("?limit={limit}"));
        }
        let a: Answer<Items<WebhookAttempt>> = self.call::<(), _>(Method::GET, &path, None).await?;
        Ok(a.data.items)
    }

    /// Sends a `webhook.test` event to the webhook now; the attempt.
    pub async fn test_webhook(&self, id: &str) -> Result<WebhookAttempt, Error> {
        let path = format!("/v1/account/webhooks/test/{}", id_segment(id)?);
        Ok(self.call::<(), _>(Method::POST, &path, None).await?.data)
    }

    /// Deletes a webhook (its pending events with it).
    pub async fn delete_webhook(&self, id: &str) -> Result<WebhookDeleted, Error> {
        let path = format!("/v1/account/webhooks/delete/{}", id_segment(id)?);
        Ok(self.call::<(), _>(Method::DELETE, &path, None).await?.data)
    }
}
