//! Message headers (queue-api-2.md §3): stored as the server gave them and
//! returned unchanged wherever the message is — hand-outs, browsing, dead
//! letters and redrives — on every publish path (alone, batch, keyed, FIFO).

use onceq_store::{DlqRedrive, MessageGet, MessageList, NewMessage};
use onceq_types::QueueType;
use onceq_types::queue::QueueSettings;

use crate::{Harness, defaults, msg, payload};

conformance!(
    headers_come_back_on_claim_and_browse,
    headers_survive_dead_letter_and_redrive,
    headers_on_keyed_batch_and_fifo_publishes,
    headers_must_be_a_json_object,
);

const TRACE: &str = r#"{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","x-tenant":"acme"}"#;

fn with_headers(payload: &str, headers: &str) -> NewMessage {
    NewMessage {
        headers: Some(headers.to_owned()),
        ..msg(payload)
    }
}

impl Harness {
    async fn record_headers(&self, queue: &str, id: &str) -> Option<String> {
        self.store
            .message_get(MessageGet {
                queue: self.q(queue),
                message_id: id.to_owned(),
                now: self.now,
            })
            .await
            .expect("message_get")
            .expect("the message is held")
            .headers
    }

    async fn listed_headers(&self, queue: &str) -> Vec<Option<String>> {
        let page = self
            .store
            .message_list(MessageList {
                queue: self.q(queue),
                state: None,
                search: None,
                group_id: None,
                after_seq: None,
                limit: 100,
                now: self.now,
            })
            .await
            .expect("message_list");
        page.messages.into_iter().map(|m| m.headers).collect()
    }
}

async fn headers_come_back_on_claim_and_browse(h: Harness) {
    let with = h
        .publish_msg("jobs", with_headers(&payload(1), TRACE))
        .await;
    let without = h.publish_one("jobs", &payload(2)).await;

    assert_eq!(
        h.record_headers("jobs", &with.message_id).await.as_deref(),
        Some(TRACE)
    );
    assert_eq!(h.record_headers("jobs", &without.message_id).await, None);
    assert_eq!(
        h.listed_headers("jobs").await,
        vec![Some(TRACE.to_owned()), None]
    );

    let claimed = h.claim("jobs", 10).await;
    assert_eq!(claimed.len(), 2);
    assert_eq!(claimed[0].message_id, with.message_id);
    assert_eq!(claimed[0].headers.as_deref(), Some(TRACE));
    assert_eq!(claimed[1].headers, None);
    // Still there while in flight.
    assert_eq!(
        h.record_headers("jobs", &with.message_id).await.as_deref(),
        Some(TRACE)
    );
}

async fn headers_survive_dead_letter_and_redrive(h: Harness) {
    let once = QueueSettings {
        max_retries: 0,
        ..defaults()
    };
    h.create("jobs", once).await.unwrap();
    let p = h
        .publish_msg("jobs", with_headers(&payload(1), TRACE))
        .await;
    let c = h.claim_one("jobs").await;
    assert!(h.nack_claimed("jobs", &c, true).await.dead_lettered);

    assert_eq!(
        h.record_headers("jobs-dlq", &p.message_id).await.as_deref(),
        Some(TRACE)
    );
    let redriven = h
        .store
        .dlq_redrive(DlqRedrive {
            queue: h.q("jobs"),
            max: None,
            now: h.now,
        })
        .await
        .expect("redrive");
    assert_eq!(redriven.redriven, 1);
    let again = h.claim_one("jobs").await;
    assert_eq!(again.message_id, p.message_id);
    assert_eq!(again.headers.as_deref(), Some(TRACE));
}

async fn headers_on_keyed_batch_and_fifo_publishes(h: Harness) {
    // A keyed batch takes the transaction path; each item keeps its own.
    let a = r#"{"n":"a"}"#;
    let b = r#"{"n":"b"}"#;
    let keyed = |p: i64, key: &str, headers: Option<&str>| NewMessage {
        idempotency_key: Some(key.to_owned()),
        headers: headers.map(str::to_owned),
        ..msg(&payload(p))
    };
    let out = h
        .publish(
            "jobs",
            vec![
                keyed(1, "k1", Some(a)),
                keyed(2, "k2", None),
                keyed(3, "k3", Some(b)),
            ],
        )
        .await
        .expect("publish");
    let got: Vec<_> = h
        .claim("jobs", 10)
        .await
        .into_iter()
        .map(|c| c.headers)
        .collect();
    assert_eq!(got, vec![Some(a.to_owned()), None, Some(b.to_owned())]);

    // A replay stores nothing: the first publish's headers stay.
    let replay = h.publish_msg("jobs", keyed(1, "k1", Some(b))).await;
    assert!(replay.replay);
    assert_eq!(replay.message_id, out[0].message_id);
    assert_eq!(
        h.record_headers("jobs", &out[0].message_id)
            .await
            .as_deref(),
        Some(a)
    );

    h.create(
        "ordered",
        QueueSettings {
            queue_type: QueueType::Fifo,
            ..defaults()
        },
    )
    .await
    .unwrap();
    h.publish_msg("ordered", with_headers(&payload(1), TRACE))
        .await;
    assert_eq!(h.claim_one("ordered").await.headers.as_deref(), Some(TRACE));
}

async fn headers_must_be_a_json_object(h: Harness) {
    // The server only ever stores a validated object; the schema's CHECK
    // refuses anything else should a bug try, and nothing is stored.
    h.create("jobs", defaults()).await.unwrap();
    for bad in [r#"["a"]"#, r#""text""#, "not json"] {
        h.publish(
            "jobs",
            vec![msg(&payload(1)), with_headers(&payload(2), bad)],
        )
        .await
        .expect_err("a non-object is refused");
    }
    assert!(
        h.listed_headers("jobs").await.is_empty(),
        "nothing half-stored"
    );
}
