//! Hot statements and browsing run as index probes, whatever the statistics.

use super::*;

/// The dashboard's search probes indexes (the primary key, and
/// `onceq_messages_idempotency` from V5) and its pages walk
/// `(queue_id, seq)`: neither may fall back to reading the whole backlog.
/// With sequential scans disabled the planner still picks one when no index
/// can answer, so a plan without "Seq Scan" proves an index does.
#[tokio::test]
async fn message_browsing_uses_indexes() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    let now = publish("q").now;
    store.key_insert(key("k", 7)).await.unwrap();
    store.message_publish(publish("q")).await.unwrap();
    let client = raw(&db.url).await;
    // A backlog the planner knows about: 20 000 keyed messages in one queue.
    client
        .batch_execute(
            "INSERT INTO onceq_messages (id, queue_id, state, payload, idempotency_key,
                                         visible_at, created_at)
             SELECT 'm' || i, q.id, 'available', '{}', 'key-' || i, now(), now()
             FROM onceq_queues q, generate_series(1, 20000) i WHERE q.name = 'q';
             ANALYZE onceq_messages;
             SET enable_seqscan = off;",
        )
        .await
        .unwrap();
    let queue_id: i64 = client
        .query_one("SELECT id FROM onceq_queues WHERE name = 'q'", &[])
        .await
        .unwrap()
        .get(0);
    let plan = |rows: Vec<tokio_postgres::Row>| {
        rows.iter()
            .map(|r| r.get::<_, String>(0))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let state: Option<&str> = None;
    let search = plan(
        client
            .query(
                &format!("EXPLAIN {}", crate::postgres::sql::MESSAGE_SEARCH),
                &[
                    &queue_id,
                    &i64::MIN,
                    &now,
                    &state,
                    &101i64,
                    &"key-77",
                    &state,
                ],
            )
            .await
            .unwrap(),
    );
    assert!(!search.contains("Seq Scan"), "{search}");
    assert!(search.contains("onceq_messages_idempotency"), "{search}");
    assert!(search.contains("onceq_messages_pkey"), "{search}");
    let list = plan(
        client
            .query(
                &format!("EXPLAIN {}", crate::postgres::sql::MESSAGE_LIST),
                &[&queue_id, &42i64, &now, &state, &101i64, &state],
            )
            .await
            .unwrap(),
    );
    assert!(!list.contains("Seq Scan"), "{list}");
    assert!(list.contains("onceq_messages_queue"), "{list}");
    // The group filter walks the group index (V2) from the cursor.
    let group = plan(
        client
            .query(
                &format!("EXPLAIN {}", crate::postgres::sql::MESSAGE_LIST),
                &[&queue_id, &42i64, &now, &state, &101i64, &Some("g")],
            )
            .await
            .unwrap(),
    );
    assert!(!group.contains("Seq Scan"), "{group}");
    assert!(group.contains("onceq_messages_group"), "{group}");

    // The payload search reads the newest 1 000 of the 20 000 backward
    // along (queue_id, seq), and no more: run, not only planned.
    let payloads = plan(
        client
            .query(
                &format!(
                    "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) {}",
                    crate::postgres::sql::MESSAGE_PAYLOAD_SEARCH
                ),
                &[&queue_id, &now, &1000i64, &"nothing-matches", &50i64],
            )
            .await
            .unwrap(),
    );
    assert!(!payloads.contains("Seq Scan"), "{payloads}");
    assert!(
        payloads.contains("Index Scan Backward using onceq_messages_queue"),
        "{payloads}"
    );
    assert!(payloads.contains("actual rows=1000 "), "{payloads}");
    let count = plan(
        client
            .query(
                &format!(
                    "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) {}",
                    crate::postgres::sql::MESSAGE_RECENT_COUNT
                ),
                &[&queue_id, &1001i64],
            )
            .await
            .unwrap(),
    );
    assert!(!count.contains("Seq Scan"), "{count}");
    assert!(count.contains("actual rows=1001 "), "{count}");
}

/// Every hot statement, planned as it runs (generic, under
/// `sql::HOT_BEGIN`), probes indexes: none reads a whole table or index,
/// or hashes one, or walks one per row (a join filter), and none is compiled
/// by JIT, whether the plan is made on empty tables (a fresh or drained
/// database, vacuumed) or on big ones (2 000 queues, a 20 000 backlog with
/// its keys, analyzed).
#[tokio::test]
async fn hot_statements_probe_indexes_on_empty_and_full_tables() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    store.message_publish(publish("q")).await.unwrap();
    let client = raw(&db.url).await;
    client
        .batch_execute("DELETE FROM onceq_messages")
        .await
        .unwrap();
    // Its own statement: VACUUM cannot run in the implicit transaction of
    // a multi-statement query.
    client.batch_execute("VACUUM ANALYZE").await.unwrap();
    assert_hot_plans_probe(&client, "empty").await;
    client
        .batch_execute(
            "INSERT INTO onceq_queues (project, name, queue_type, max_retries,
                 message_retention_days, visibility_timeout_default, enable_priority, created_at)
             SELECT 'p', 'q' || i, 'standard', 3, 4, 30, false, now()
             FROM generate_series(1, 2000) i;
             INSERT INTO onceq_messages (id, queue_id, state, payload, idempotency_key,
                                         visible_at, created_at)
             SELECT 'm' || i, q.id, 'available', '{}', 'key-' || i, now(), now()
             FROM onceq_queues q, generate_series(1, 20000) i WHERE q.name = 'q';
             INSERT INTO onceq_dedupe_keys (queue_id, key, message_id, payload_hash,
                                            created_at, expires_at)
             SELECT queue_id, idempotency_key, id, sha256(id::bytea), now(), now()
             FROM onceq_messages;
             ANALYZE;",
        )
        .await
        .unwrap();
    assert_hot_plans_probe(&client, "full").await;
}

/// Prepares each hot statement afresh under [`sql::HOT_BEGIN`]
/// and checks its plan (explained with every parameter NULL: a generic plan
/// does not look at them).
async fn assert_hot_plans_probe(client: &tokio_postgres::Client, tables: &str) {
    use crate::postgres::sql;
    // JIT for any plan at all: the hot settings must turn it off (the
    // cost that triggers it depends on the tables' size).
    client
        .batch_execute("SET jit_above_cost = 0")
        .await
        .unwrap();
    client.batch_execute(sql::HOT_BEGIN).await.unwrap();
    for &(name, text) in sql::HOT {
        let params = (1..)
            .take_while(|i| text.contains(&format!("${i}")))
            .map(|_| "NULL")
            .collect::<Vec<_>>();
        let args = match params.is_empty() {
            true => String::new(),
            false => format!("({})", params.join(", ")),
        };
        client
            .batch_execute(&format!("PREPARE {name} AS {text}"))
            .await
            .unwrap();
        let plan = explained(client, &format!("EXPLAIN EXECUTE {name}{args}")).await;
        // A join filter is a nested loop whose inner side is read whole
        // for each outer row instead of probed by the join's columns.
        for whole in ["Seq Scan", "Hash Join", "Merge Join", "Join Filter", "JIT"] {
            assert!(!plan.contains(whole), "{name} on {tables} tables:\n{plan}");
        }
        // Retry-After's probe is of its own index (project, expiry), not
        // a walk of every live entry by expiry.
        if name == "ledger_first_expiry" {
            assert!(
                plan.contains("onceq_request_ledger_server_expiry"),
                "{name} on {tables} tables:\n{plan}"
            );
        }
        // And every index is probed, not walked whole: each index scan has
        // its condition.
        let scans = plan.matches("Index Scan").count() + plan.matches("Index Only Scan").count();
        let probes = plan.matches("Index Cond").count();
        // One exception, by design: a claim on a queue with max_in_flight
        // counts its leases by walking the partial index of leased
        // messages (every queue's in-flight ones, never the backlog). It
        // runs only for such queues (a CASE branch), and a per-queue index
        // of leases would cost every claim and ack of every queue.
        let lease_walks = match name {
            "message_claim" => plan
                .matches("Index Scan using onceq_messages_leased on onceq_messages f")
                .count(),
            _ => 0,
        };
        assert!(lease_walks <= 1, "{name} on {tables} tables:\n{plan}");
        assert_eq!(
            scans - lease_walks,
            probes,
            "{name} on {tables} tables:\n{plan}"
        );
        // The history's functions are inlined into the statement (V22),
        // not called per row: a call would be named in the outputs.
        if text.contains("onceq_attempt") {
            let verbose =
                explained(client, &format!("EXPLAIN (VERBOSE) EXECUTE {name}{args}")).await;
            assert!(
                verbose.contains("jsonb_path_query_array") && !verbose.contains("onceq_attempt"),
                "{name} on {tables} tables:\n{verbose}"
            );
        }
    }
    client
        .batch_execute("ROLLBACK; DEALLOCATE ALL; RESET jit_above_cost")
        .await
        .unwrap();
}

/// The text of `explain`'s plan, one line per row.
async fn explained(client: &tokio_postgres::Client, explain: &str) -> String {
    client
        .simple_query(explain)
        .await
        .unwrap()
        .into_iter()
        .filter_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(String::from),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The purge of finished messages walks their expiry index, never the
/// table (nor the backlog, which is another table).
#[tokio::test]
async fn finished_purge_walks_the_expiry_index() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    let now = publish("q").now;
    store.message_publish(publish("q")).await.unwrap();
    let client = raw(&db.url).await;
    client
        .batch_execute(
            "INSERT INTO onceq_finished (id, queue_id, state, payload, priority, delivery_count,
                                         created_at, visible_at, finished_at, expires_at)
             SELECT 'f' || i, q.id, 'completed', '{}', 0, 1, now(), now(), now(),
                    now() + make_interval(secs => i)
             FROM onceq_queues q, generate_series(1, 20000) i WHERE q.name = 'q';
             ANALYZE onceq_finished;
             SET enable_seqscan = off;",
        )
        .await
        .unwrap();
    let plan = client
        .query(
            &format!("EXPLAIN {}", crate::postgres::sql::FINISHED_PURGE),
            &[&now, &10_000i64],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get::<_, String>(0))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(!plan.contains("Seq Scan"), "{plan}");
    assert!(plan.contains("onceq_finished_expiry"), "{plan}");
}

/// A page of the completed-jobs listing walks
/// `onceq_finished_queue_newest` (V14) backward from its cursor and reads
/// the page and one row more: never the queue's other finished messages,
/// and never onceq_messages (the backlog). Run, not only planned.
#[tokio::test]
async fn finished_list_walks_its_index_from_the_cursor() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    store.message_publish(publish("q")).await.unwrap();
    let client = raw(&db.url).await;
    client
        .batch_execute(
            "INSERT INTO onceq_finished (id, queue_id, state, payload, priority, delivery_count,
                                         created_at, visible_at, finished_at, expires_at)
             SELECT 'f' || i, q.id, 'completed', '{}', 0, 1, now(), now(),
                    now() - make_interval(secs => i), now() + interval '1 day'
             FROM onceq_queues q, generate_series(1, 20000) i WHERE q.name = 'q';
             INSERT INTO onceq_messages (id, queue_id, state, payload, visible_at, created_at)
             SELECT 'm' || i, q.id, 'available', '{}', now(), now()
             FROM onceq_queues q, generate_series(1, 20000) i WHERE q.name = 'q';
             ANALYZE onceq_finished; ANALYZE onceq_messages;
             SET enable_seqscan = off;",
        )
        .await
        .unwrap();
    let row = client
        .query_one(
            "SELECT queue_id, finished_at FROM onceq_finished WHERE id = 'f10000'",
            &[],
        )
        .await
        .unwrap();
    let (queue_id, cursor_at): (i64, jiff::Timestamp) = (row.get(0), row.get(1));
    let analyse =
        |sql: &str| format!("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) {sql}");
    let plan = |rows: Vec<tokio_postgres::Row>| {
        rows.iter()
            .map(|r| r.get::<_, String>(0))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let newest = plan(
        client
            .query(
                &analyse(crate::postgres::sql::FINISHED_LIST),
                &[&queue_id, &51i64],
            )
            .await
            .unwrap(),
    );
    let before = plan(
        client
            .query(
                &analyse(crate::postgres::sql::FINISHED_LIST_BEFORE),
                &[&queue_id, &51i64, &cursor_at, &"f10000"],
            )
            .await
            .unwrap(),
    );
    for plan in [&newest, &before] {
        assert!(!plan.contains("Seq Scan"), "{plan}");
        assert!(!plan.contains("onceq_messages"), "{plan}");
        assert!(!plan.contains("Sort"), "{plan}");
        assert!(
            plan.contains("Index Scan Backward using onceq_finished_queue_newest"),
            "{plan}"
        );
        assert!(plan.contains("actual rows=51 "), "{plan}");
    }
}

/// Every pooled connection runs with JIT off: a plan whose cost is
/// estimated from the table's size (a queue's stats beside 100 000 waiting
/// messages) compiled itself for 0.6 s on every call.
#[tokio::test]
async fn pooled_connections_run_without_jit() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    let conn = store.client().await.unwrap();
    let jit: String = conn.raw().query_one("SHOW jit", &[]).await.unwrap().get(0);
    assert_eq!(jit, "off");
}

/// A queue's stats, as the store reads them, read its own messages by
/// queue id and never the table: beside 20 000 messages in another queue
/// (analyzed, so that the planner knows the split), no sequential scan of
/// onceq_messages runs, and the per-queue index is probed. Read from the
/// statistics PostgreSQL keeps per table, which the store's backend sends
/// within a second of its transaction (both counters in one report).
#[tokio::test]
async fn queue_stats_read_only_the_queues_own_messages() {
    let db = PgStore::test_database().await;
    let store = PgStore::connect(&db.url).await.unwrap();
    let now = publish("small").now;
    for _ in 0..3 {
        store.message_publish(publish("small")).await.unwrap();
    }
    store.message_publish(publish("big")).await.unwrap();
    let client = raw(&db.url).await;
    client
        .batch_execute(
            "INSERT INTO onceq_messages (id, queue_id, state, payload, visible_at, created_at)
             SELECT 'm' || i, q.id, 'available', '{}', now(), now()
             FROM onceq_queues q, generate_series(1, 20000) i WHERE q.name = 'big';
             ANALYZE onceq_messages;
             SET stats_fetch_consistency = none;",
        )
        .await
        .unwrap();
    let scans = async || -> (i64, i64) {
        let row = client
            .query_one(
                "SELECT t.seq_scan, i.idx_scan
                 FROM pg_stat_user_tables t, pg_stat_user_indexes i
                 WHERE t.relname = 'onceq_messages' AND i.indexrelname = 'onceq_messages_queue'",
                &[],
            )
            .await
            .unwrap();
        (row.get(0), row.get(1))
    };
    let (seq_before, probes_before) = scans().await;
    let stats = store
        .queue_stats(&crate::QueueRef::new("p", "small"), now)
        .await
        .unwrap();
    assert_eq!((stats.available, stats.message_count), (3, 3));
    eventually(
        "the stats' probe of onceq_messages_queue is reported",
        async || scans().await.1 > probes_before,
    )
    .await;
    assert_eq!(
        scans().await.0,
        seq_before,
        "a sequential scan of onceq_messages"
    );
}
