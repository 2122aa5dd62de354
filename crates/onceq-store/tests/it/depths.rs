//! `queue_depths` (what `/metrics` exports) and `pool_stats`.

use onceq_store::{QueueDepth, QueueRef};

use crate::{Harness, MsgExt, fifo, msg, payload};

conformance!(
    depths_of_every_queue_in_every_project,
    depths_agree_with_stats,
    depths_of_an_empty_store,
    pool_stats_name_the_pools,
);

fn depth(queue: QueueRef) -> QueueDepth {
    QueueDepth {
        queue,
        available: 0,
        delayed: 0,
        in_flight: 0,
        dead_lettered: 0,
        oldest_created_at: None,
        paused: false,
    }
}

async fn depths_of_every_queue_in_every_project(mut h: Harness) {
    let b = h.as_project("proj-b").await;
    let t_first = h.now;
    for n in 0..4 {
        h.publish_one("jobs", &payload(n)).await;
    }
    h.advance(10);
    h.publish_msg("jobs", msg(&payload(4)).delay(100)).await;
    h.publish_msg("jobs", msg(&payload(5)).delay(5)).await;
    let claimed = h.claim("jobs", 2).await;
    let c = h.claim_one("jobs").await;
    assert!(h.nack_claimed("jobs", &c, false).await.dead_lettered);
    let t_b = b.now; // b's clock is its own, still at t0
    b.publish_one("other", &payload(1)).await;
    h.advance(6); // the 5 s delay is due: it counts as available

    let got = h.store.queue_depths(h.now).await.unwrap();
    let want = vec![
        QueueDepth {
            available: 2, // one left of the first four, plus the due one
            delayed: 1,
            in_flight: 2,
            dead_lettered: 1,
            oldest_created_at: Some(t_first),
            ..depth(h.q("jobs"))
        },
        QueueDepth {
            available: 1,
            oldest_created_at: Some(t_first),
            ..depth(h.q("jobs-dlq"))
        },
        QueueDepth {
            available: 1,
            oldest_created_at: Some(t_b),
            ..depth(b.q("other"))
        },
        depth(b.q("other-dlq")),
    ];
    assert_eq!(got, want);
    assert_eq!(claimed.len(), 2);
}

async fn depths_agree_with_stats(mut h: Harness) {
    h.create("orders", fifo()).await.unwrap();
    for n in 0..6 {
        h.publish_msg(
            "orders",
            msg(&payload(n)).group(if n % 2 == 0 { "a" } else { "b" }),
        )
        .await;
        h.advance(3);
    }
    h.claim("orders", 10).await;
    h.advance(31);
    h.lease_expire(100).await;
    h.claim("orders", 1).await;
    h.advance(7);
    let got = h.store.queue_depths(h.now).await.unwrap();
    for name in ["orders", "orders-dlq"] {
        let s = h.stats(name).await;
        let d = got.iter().find(|d| d.queue.queue == name).unwrap();
        assert_eq!(
            (d.available, d.delayed, d.in_flight, d.dead_lettered),
            (s.available, s.delayed, s.in_flight, s.dead_lettered),
            "{name}"
        );
        let age = d.oldest_created_at.map_or(0, |t| (h.now - t).get_seconds());
        assert_eq!(age, s.oldest_message_age_seconds, "{name}");
    }
}

async fn depths_of_an_empty_store(h: Harness) {
    assert_eq!(h.store.queue_depths(h.now).await.unwrap(), vec![]);
}

async fn pool_stats_name_the_pools(h: Harness) {
    h.publish_one("jobs", &payload(1)).await;
    h.stats("jobs").await;
    let pools = h.store.pool_stats();
    let names: Vec<&str> = pools.iter().map(|p| p.pool).collect();
    match h.store.backend() {
        "postgres" => {
            assert_eq!(names, ["postgres"]);
            let p = &pools[0];
            assert!(p.size >= 1 && p.size <= p.max_size.unwrap(), "{p:?}");
            // Between calls only the publish committer holds a connection
            // (postgres/hot.rs); the ack committer has not run yet.
            assert_eq!(p.available + 1, p.size, "{p:?}");
            assert_eq!(p.waiting, 0);
        }
        _ => {
            assert_eq!(names, ["sqlite_readers", "sqlite_writer"]);
            assert!(pools[0].size >= 1, "a read ran: {:?}", pools[0]);
            assert_eq!(pools[0].available, pools[0].size, "{:?}", pools[0]);
            assert_eq!(pools[1].waiting, 0, "{:?}", pools[1]);
        }
    }
}
