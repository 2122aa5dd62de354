//! The client's webhook calls over real HTTP: register (the secret shown
//! once), list, deliveries, test and delete, and their errors.

use onceq::{Error, types::webhook::RegisterWebhook};

use crate::harness::Env;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn register_list_deliveries_delete() {
    let env = Env::start().await;
    let c = env.client();
    let made = c
        .register_webhook(&RegisterWebhook {
            url: Some("https://hooks.example/in".into()),
            events: Some(vec!["queue.created".into(), "message.failed".into()]),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(made.id.starts_with("whk_"));
    assert!(made.secret.as_deref().unwrap().starts_with("whsec_"));
    let listed = c.list_webhooks().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].secret, None);
    assert_eq!(listed[0].events, ["queue.created", "message.failed"]);
    assert!(
        c.webhook_deliveries(&made.id, Some(5))
            .await
            .unwrap()
            .is_empty()
    );
    let bad = c
        .register_webhook(&RegisterWebhook {
            url: Some("https://hooks.example/in".into()),
            events: Some(vec!["queue.exploded".into()]),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(matches!(&bad, Error::InvalidParams(_)), "{bad:?}");
    assert!(bad.to_string().contains("queue.exploded"), "{bad}");
    assert!(c.delete_webhook(&made.id).await.unwrap().deleted);
    let gone = c.test_webhook(&made.id).await.unwrap_err();
    assert!(
        matches!(
            gone,
            Error::Server { status: 404, .. } | Error::QueueNotFound(_)
        ),
        "{gone:?}"
    );
    assert!(c.list_webhooks().await.unwrap().is_empty());
}
