//! `queue_pause`: a paused queue stores publishes and hands nothing out
//! (claims, so push delivery too); leases already out run on; the record,
//! stats, depths and the push scan say it is paused; resuming hands out
//! again. Idempotent both ways.

use onceq_store::{QueuePause, StoreError, SubscriptionInsert};
use onceq_types::QueueRecord;

use crate::{Harness, MsgExt, defaults, fifo, msg, payload};

conformance!(
    pause_holds_hand_outs_until_resumed,
    pause_lets_leases_already_out_run_on,
    pause_shows_in_record_list_stats_and_depths,
    pause_takes_a_queue_out_of_the_push_scan,
    pause_holds_a_fifo_queue_too,
    pause_of_an_unknown_queue_is_not_found,
);

impl Harness {
    pub async fn pause(&self, name: &str, paused: bool) -> onceq_store::Result<QueueRecord> {
        self.store
            .queue_pause(QueuePause {
                queue: self.q(name),
                paused,
            })
            .await
    }
}

async fn pause_holds_hand_outs_until_resumed(mut h: Harness) {
    h.create("jobs", defaults()).await.unwrap();
    h.publish_one("jobs", &payload(1)).await;
    assert!(h.pause("jobs", true).await.unwrap().paused);
    assert!(h.pause("jobs", true).await.unwrap().paused, "idempotent");

    // Publishes are accepted, due delays too, and nothing goes out.
    assert!(!h.publish_one("jobs", &payload(2)).await.replay);
    h.publish_msg("jobs", msg(&payload(3)).delay(5)).await;
    h.advance(10);
    assert!(h.claim("jobs", 10).await.is_empty());
    assert_eq!(h.stats("jobs").await.available, 3, "all held, none out");

    assert!(!h.pause("jobs", false).await.unwrap().paused);
    assert!(!h.pause("jobs", false).await.unwrap().paused, "idempotent");
    let got = h.claim("jobs", 10).await;
    assert_eq!(
        got.iter().map(|c| c.payload.as_str()).collect::<Vec<_>>(),
        [payload(1), payload(2), payload(3)],
        "in publish order, as if never paused"
    );
}

async fn pause_lets_leases_already_out_run_on(mut h: Harness) {
    h.create("jobs", defaults()).await.unwrap();
    for n in 0..4 {
        h.publish_one("jobs", &payload(n)).await;
    }
    let out = h.claim("jobs", 4).await;
    h.pause("jobs", true).await.unwrap();

    assert!(
        h.ack("jobs", &out[0].message_id, Some(&out[0].receipt))
            .await
    );
    let ext = h
        .extend("jobs", &out[1].message_id, Some(&out[1].receipt), 300)
        .await;
    assert!(ext.extended, "extend works while paused");
    let nack = h.nack_claimed("jobs", &out[2], true).await;
    assert!(nack.requeued, "nack works while paused");
    // The last lease expires: back in the queue, and still not handed out.
    h.advance(31);
    assert_eq!(h.lease_expire(100).await.requeued, 1);
    assert!(h.claim("jobs", 10).await.is_empty());
    let s = h.stats("jobs").await;
    assert_eq!((s.available, s.in_flight), (2, 1));

    h.pause("jobs", false).await.unwrap();
    assert_eq!(h.claim("jobs", 10).await.len(), 2);
}

async fn pause_shows_in_record_list_stats_and_depths(h: Harness) {
    let created = h.create("jobs", defaults()).await.unwrap().record;
    assert!(!created.paused, "a new queue runs");
    h.create("other", defaults()).await.unwrap();
    let paused = h.pause("jobs", true).await.unwrap();
    assert_eq!(
        paused,
        QueueRecord {
            paused: true,
            ..created
        },
        "nothing else changes"
    );
    assert_eq!(h.get("jobs").await, Some(paused));
    let list = h.store.queue_list(&h.q("jobs").project).await.unwrap();
    let flags: Vec<_> = list.iter().map(|q| (q.name.as_str(), q.paused)).collect();
    assert_eq!(
        flags,
        [
            ("jobs", true),
            ("jobs-dlq", false),
            ("other", false),
            ("other-dlq", false)
        ]
    );
    assert!(h.stats("jobs").await.paused);
    assert!(!h.stats("other").await.paused);
    let depths = h.store.queue_depths(h.now).await.unwrap();
    let flags: Vec<_> = depths
        .iter()
        .map(|d| (d.queue.queue.as_str(), d.paused))
        .collect();
    assert_eq!(
        flags,
        [
            ("jobs", true),
            ("jobs-dlq", false),
            ("other", false),
            ("other-dlq", false)
        ]
    );
    // A create with the queue's settings still answers it, paused.
    let again = h.create("jobs", defaults()).await.unwrap();
    assert!(!again.created && again.record.paused);
}

async fn pause_takes_a_queue_out_of_the_push_scan(h: Harness) {
    h.create("jobs", defaults()).await.unwrap();
    h.store
        .subscription_insert(SubscriptionInsert {
            queue: h.q("jobs"),
            url: "https://x.example".into(),
            secret: "0123456789abcdef-secret".into(),
            max_in_flight: 10,
            timeout_seconds: 30,
            now: h.now,
        })
        .await
        .unwrap();
    h.publish_one("jobs", &payload(1)).await;
    let due = |h: &Harness| {
        let store = h.store.clone();
        let now = h.now;
        async move { store.subscription_scan(now).await.unwrap()[0].due }
    };
    assert!(due(&h).await);
    h.pause("jobs", true).await.unwrap();
    assert!(!due(&h).await, "a paused queue has nothing to push");
    h.pause("jobs", false).await.unwrap();
    assert!(due(&h).await);
}

async fn pause_holds_a_fifo_queue_too(h: Harness) {
    h.create("orders", fifo()).await.unwrap();
    h.publish_msg("orders", msg(&payload(1)).group("a")).await;
    h.publish_msg("orders", msg(&payload(2)).group("b")).await;
    h.pause("orders", true).await.unwrap();
    assert!(h.claim("orders", 10).await.is_empty());
    h.pause("orders", false).await.unwrap();
    assert_eq!(h.claim("orders", 10).await.len(), 2, "both heads");
}

async fn pause_of_an_unknown_queue_is_not_found(h: Harness) {
    for paused in [true, false] {
        assert!(matches!(
            h.pause("nope", paused).await,
            Err(StoreError::QueueNotFound)
        ));
    }
    assert_eq!(h.get("nope").await, None, "not created by a pause");
}
