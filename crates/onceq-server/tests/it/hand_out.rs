//! A publish hands its message straight to a consume waiting on this
//! server (no claim of its own), under the consumer's lease; where the
//! queue does not allow it, the consumer is woken to claim as before.

use std::time::Duration;

use serde_json::{Value, json};

use crate::consume::long_poll_with;
use crate::{
    both,
    harness::{Backend, TestServer, sql_client},
};

/// A server whose long polls never re-check the store by themselves in a
/// test's time: what a waiting consumer gets, it got from a publish here.
async fn server(b: Backend) -> TestServer {
    let config = onceq_server::ServerConfig {
        long_poll_recheck: Duration::from_secs(60),
        ..Default::default()
    };
    TestServer::in_process_with(b, config).await
}

/// A consume of `queue` waiting 20 s with a lease of 45 s, once it waits.
async fn waiting(s: &TestServer, queue: &str) -> tokio::task::JoinHandle<Value> {
    let body = json!({"queue": queue, "wait_seconds": 20, "visibility_timeout": 45});
    let waiter = long_poll_with(s, body);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiter.is_finished(), "an empty long poll must wait");
    waiter
}

async fn answered(waiter: tokio::task::JoinHandle<Value>) -> Value {
    tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("the long poll did not return after a publish")
        .unwrap()
}

fn handed_out(m: &crate::prom::Scrape, queue: &str) -> f64 {
    let labels = [("project", "alpha"), ("queue", queue)];
    m.get("onceq_messages_handed_out_total", &labels)
        .unwrap_or(0.0)
}

async fn a_publish_hands_its_message_to_a_waiting_consumer(b: Backend) {
    let s = server(b).await;
    s.post("/v1/queue/create", json!({"name": "q"})).await.ok();
    let waiter = waiting(&s, "q").await;
    let r = s
        .post("/v1/queue/publish", json!({"queue": "q", "payload": "now"}))
        .await;
    r.ok();
    // The publish's answer is the contract's, whoever took the message.
    assert_eq!(r.data()["status"], "available");
    assert_eq!(r.data()["delivery_count"], 0);
    let got = answered(waiter).await;
    let m = &got["data"]["items"][0];
    assert_eq!(m["payload"], "now");
    assert_eq!(m["message_id"], r.data()["message_id"]);
    assert_eq!(
        (m["status"].as_str(), m["delivery_count"].as_i64()),
        (Some("in_flight"), Some(1))
    );
    let lease: jiff::Timestamp = m["lease_expires_at"].as_str().unwrap().parse().unwrap();
    assert_eq!(lease, s.clock.now() + jiff::SignedDuration::from_secs(45));
    let scrape = s.scrape().await;
    assert_eq!(
        handed_out(&scrape, "q"),
        1.0,
        "handed out, not claimed: {}",
        scrape.text
    );
    let labels = [("project", "alpha"), ("queue", "q")];
    assert_eq!(scrape.value("onceq_messages_consumed_total", &labels), 1.0);
    let stats = s.stats("q").await;
    assert_eq!(
        (stats["available"].as_i64(), stats["in_flight"].as_i64()),
        (Some(0), Some(1))
    );
    let ack = json!({"queue": "q", "message_id": m["message_id"], "receipt": m["receipt"]});
    let r = s.post("/v1/queue/ack", ack).await;
    r.ok();
    assert_eq!(r.data()["acked"], true);
}
both!(a_publish_hands_its_message_to_a_waiting_consumer);

/// A FIFO queue hands out only its groups' heads, which a claim decides:
/// its waiting consumer is woken and claims, as before hand-outs.
async fn a_queue_that_cannot_hand_out_wakes_its_consumer_to_claim(b: Backend) {
    let s = server(b).await;
    let create = json!({"name": "orders", "type": "fifo"});
    s.post("/v1/queue/create", create).await.ok();
    let waiter = waiting(&s, "orders").await;
    s.publish("orders", json!("first")).await;
    let got = answered(waiter).await;
    assert_eq!(got["data"]["items"][0]["payload"], "first");
    assert_eq!(handed_out(&s.scrape().await, "orders"), 0.0, "claimed");
}
both!(a_queue_that_cannot_hand_out_wakes_its_consumer_to_claim);

/// Ten messages published at once beside three waiting consumers: each
/// consumer is handed some, and none is handed twice or lost.
async fn a_batch_is_spread_over_the_waiting_consumers(b: Backend) {
    let s = server(b).await;
    s.post("/v1/queue/create", json!({"name": "q"})).await.ok();
    let mut waiters = Vec::new();
    for _ in 0..3 {
        waiters.push(waiting(&s, "q").await);
    }
    let batch: Vec<Value> = (0..10).map(|n| json!({"payload": {"n": n}})).collect();
    s.publish_batch("q", &batch).await;
    let mut seen = Vec::new();
    for w in waiters {
        let got = answered(w).await;
        let items = got["data"]["items"].as_array().unwrap().clone();
        assert!(!items.is_empty(), "every waiting consumer gets some");
        seen.extend(
            items
                .into_iter()
                .map(|m| m["payload"]["n"].as_i64().unwrap()),
        );
    }
    // The rest waits for a claim.
    let r = s
        .post(
            "/v1/queue/consume",
            json!({"queue": "q", "max_messages": 10}),
        )
        .await;
    r.ok();
    let rest = r.data()["items"].as_array().unwrap().clone();
    seen.extend(rest.iter().map(|m| m["payload"]["n"].as_i64().unwrap()));
    seen.sort_unstable();
    assert_eq!(seen, (0..10).collect::<Vec<_>>());
}
both!(a_batch_is_spread_over_the_waiting_consumers);

/// A server as [`server`]'s whose waiting consumes keep the acks they
/// carry for `carry` before doing them alone.
async fn carrying_server(b: Backend, carry: Duration) -> TestServer {
    let config = onceq_server::ServerConfig {
        long_poll_recheck: Duration::from_secs(60),
        ack_carry: carry,
        ..Default::default()
    };
    TestServer::in_process_with(b, config).await
}

/// A message handed out on `queue` by a publish here (which tells the
/// consumes waiting there that their acks may wait with them), and another
/// consume still waiting there.
async fn first_handed(s: &TestServer, queue: &str) -> (Value, tokio::task::JoinHandle<Value>) {
    s.post("/v1/queue/create", json!({"name": queue}))
        .await
        .ok();
    let first = waiting(s, queue).await;
    let other = waiting(s, queue).await;
    s.publish(queue, json!("first")).await;
    (answered(first).await["data"]["items"][0].clone(), other)
}

/// A consume of `queue` waiting 20 s that acks `m`, once it waits.
async fn waiting_with_ack(
    s: &TestServer,
    queue: &str,
    m: &Value,
) -> tokio::task::JoinHandle<Value> {
    let ack = json!({"message_id": m["message_id"], "receipt": m["receipt"]});
    let body = json!({"queue": queue, "wait_seconds": 20, "acks": [ack]});
    let acking = long_poll_with(s, body);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!acking.is_finished(), "an empty long poll must wait");
    acking
}

fn acks_carried(m: &crate::prom::Scrape, queue: &str) -> f64 {
    let labels = [("project", "alpha"), ("queue", queue)];
    m.get("onceq_acks_carried_total", &labels).unwrap_or(0.0)
}

/// Polls `stats` of `queue` until `in_flight` is `n` (5 s at most).
async fn in_flight_becomes(s: &TestServer, queue: &str, n: i64) {
    for _ in 0..250 {
        if s.stats(queue).await["in_flight"].as_i64() == Some(n) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!(
        "in_flight of {queue} never became {n}: {}",
        s.stats(queue).await
    );
}

/// Beside another waiting consume, a consume's acks wait with it and are
/// committed by the publish that hands it its next message, in that
/// publish's transaction; it answers with both.
async fn a_consume_s_acks_go_with_the_publish_that_hands_it_a_message(b: Backend) {
    let s = carrying_server(b, Duration::from_secs(60)).await;
    let (m, other) = first_handed(&s, "q").await;
    let acking = waiting_with_ack(&s, "q", &m).await;
    assert_eq!(s.stats("q").await["in_flight"], 1, "the ack waits");
    // The older waiting consume is handed the first message, this one the
    // second, with its ack.
    s.publish("q", json!("second")).await;
    assert_eq!(
        answered(other).await["data"]["items"][0]["payload"],
        "second"
    );
    s.publish("q", json!("third")).await;
    let got = answered(acking).await;
    assert_eq!(got["data"]["items"][0]["payload"], "third");
    let acks = &got["data"]["acks"];
    assert_eq!(
        acks["successful"][0]["message_id"], m["message_id"],
        "{got}"
    );
    assert_eq!(acks["failed"].as_array().map(Vec::len), Some(0), "{got}");
    assert_eq!(acks_carried(&s.scrape().await, "q"), 1.0);
    let stats = s.stats("q").await;
    assert_eq!(
        (stats["message_count"].as_i64(), stats["in_flight"].as_i64()),
        (Some(2), Some(2)),
        "the first message is gone: {stats}"
    );
}
both!(a_consume_s_acks_go_with_the_publish_that_hands_it_a_message);

/// With no publish coming, the consume takes its acks back and does them
/// alone while it goes on waiting.
async fn carried_acks_no_publish_takes_are_done_alone(b: Backend) {
    let s = carrying_server(b, Duration::from_millis(100)).await;
    let (m, other) = first_handed(&s, "q").await;
    let acking = waiting_with_ack(&s, "q", &m).await;
    in_flight_becomes(&s, "q", 0).await;
    assert!(!acking.is_finished(), "still waiting");
    s.publish("q", json!("second")).await;
    answered(other).await;
    s.publish("q", json!("third")).await;
    let got = answered(acking).await;
    assert_eq!(got["data"]["items"][0]["payload"], "third");
    let acks = &got["data"]["acks"];
    assert_eq!(
        acks["successful"][0]["message_id"], m["message_id"],
        "{got}"
    );
    assert_eq!(acks_carried(&s.scrape().await, "q"), 0.0);
}
both!(carried_acks_no_publish_takes_are_done_alone);

/// A consume whose caller goes away while its acks wait with it still has
/// them done, as a consume that committed them in its first claim did.
async fn a_consume_that_goes_away_leaves_its_acks_done(b: Backend) {
    let s = carrying_server(b, Duration::from_secs(60)).await;
    let (m, other) = first_handed(&s, "q").await;
    let acking = waiting_with_ack(&s, "q", &m).await;
    acking.abort();
    in_flight_becomes(&s, "q", 0).await;
    let ack = json!({"queue": "q", "message_id": m["message_id"], "receipt": m["receipt"]});
    let r = s.post("/v1/queue/ack", ack).await;
    r.ok();
    assert_eq!(r.data()["acked"], false, "done once already");
    other.abort();
}
both!(a_consume_that_goes_away_leaves_its_acks_done);

/// A consumer that goes away while the publish that took its offer
/// commits leaves nothing behind it: the publish hands the message back
/// before it answers, so whoever its publisher tells next finds it there.
/// (PostgreSQL, where a table lock can hold the publish mid-commit and
/// then hold back what it does next.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_gone_while_its_publish_commits_leaves_the_message_available() {
    let s = server(Backend::Postgres).await;
    s.post("/v1/queue/create", json!({"name": "q"})).await.ok();
    // The publish path's statements prepared on its connection first (a
    // statement that inserts into the table waits on the lock when it is
    // parsed, as well as when it runs).
    let warm = json!({"queue": "warm", "payload": "warm"});
    s.post("/v1/queue/publish", warm).await.ok();
    let waiter = waiting(&s, "q").await;
    let url = s.database_url().unwrap();
    let (lock, look) = (sql_client(url).await, sql_client(url).await);
    lock.batch_execute("BEGIN; LOCK TABLE onceq_messages IN EXCLUSIVE MODE")
        .await
        .unwrap();
    let (http, url, key) = (s.http.clone(), s.url("/v1/queue/publish"), s.key.clone());
    let mut publish = tokio::spawn(async move {
        let body = json!({"queue": "q", "payload": "p"});
        let r = http.post(url).bearer_auth(key).json(&body).send().await;
        r.unwrap().json::<Value>().await.unwrap()
    });
    // The publish took the waiting consumer's offer and waits on the lock.
    // (Its insert, not a maintenance pass that came by.)
    let blocked = "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) \
                   WHERE l.relation = 'onceq_messages'::regclass AND NOT l.granted \
                   AND a.query LIKE '%INSERT INTO onceq_messages%'";
    for attempt in 0.. {
        if look.query_one(blocked, &[]).await.unwrap().get::<_, i64>(0) > 0 {
            break;
        }
        assert!(attempt < 1000, "the publish never reached the lock");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    waiter.abort();
    for attempt in 0.. {
        let scrape = s.scrape().await;
        if scrape.value("onceq_long_polls_waiting", &[]) == 0.0 {
            break;
        }
        assert!(
            attempt < 1000,
            "the server kept waiting on a poll whose client went"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Lets the publish commit, then holds back whatever it writes next.
    lock.batch_execute("COMMIT; BEGIN; LOCK TABLE onceq_messages IN EXCLUSIVE MODE")
        .await
        .unwrap();
    let early = tokio::time::timeout(Duration::from_secs(2), &mut publish).await;
    let state = "SELECT m.state, m.delivery_count FROM onceq_messages m \
                 JOIN onceq_queues q ON q.id = m.queue_id WHERE q.name = 'q'";
    let row = look.query_one(state, &[]).await.unwrap();
    let then: (String, i32) = (row.get(0), row.get(1));
    lock.batch_execute("COMMIT").await.unwrap();
    let r = match early {
        Ok(answered) => {
            assert_eq!(
                then,
                ("available".to_owned(), 0),
                "the publish answered while its message was leased to a consumer that had gone"
            );
            answered.unwrap()
        }
        Err(_) => publish.await.unwrap(),
    };
    assert_eq!(r["data"]["status"], "available", "{r}");
    let got = s.post("/v1/queue/consume", json!({"queue": "q"})).await;
    got.ok();
    let items = got.data()["items"].clone();
    assert_eq!(items[0]["message_id"], r["data"]["message_id"], "{items}");
    assert_eq!(items[0]["delivery_count"], 1, "its hand-out uncounted");
}
