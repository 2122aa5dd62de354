//! Behind a pooler, the hot statements run as functions made from them at
//! start (`hot_functions.rs`), made once however many servers start at
//! once; a role that may not create them runs the statements as before.

use super::*;
use crate::postgres::{db, sql};

/// The hot statements that return no rows (or only `void`): they stay
/// plain statements.
const NOT_WRAPPED: &[&str] = &[
    "dedupe_key_release_many",
    "message_delete_many",
    "fifo_group_lock",
];

/// The names of the functions made in the database at `url`.
async fn functions(url: &str) -> Vec<String> {
    raw(url)
        .await
        .query(
            "SELECT proname FROM pg_proc WHERE proname LIKE 'onceq\\_hot\\_%' ORDER BY 1",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// What a store sends for `statement`.
fn sent(store: &PgStore, statement: &str) -> String {
    match &*store.db.statements() {
        db::Statements::Unnamed(unnamed) => unnamed[statement].text.to_string(),
        db::Statements::Prepared => panic!("a direct store prepares its statements"),
    }
}

#[tokio::test]
async fn behind_a_pooler_the_hot_statements_run_as_functions_made_once() {
    let db = PgStore::test_database().await;
    let bouncer = onceq_testdb::shared_pgbouncer().await;
    let url = format!("{}?pgbouncer=transaction", bouncer.url_of(&db.name));
    // Two servers starting at once: one makes each function, the other
    // finds it (or loses the race to make it), and neither fails.
    let (a, b) = tokio::join!(PgStore::connect(&url), PgStore::connect(&url));
    let (a, b) = (a.unwrap(), b.unwrap());
    let made = functions(&db.url).await;
    assert_eq!(made.len(), sql::HOT.len() - NOT_WRAPPED.len(), "{made:?}");
    for &(name, text) in sql::HOT {
        for store in [&a, &b] {
            let call = sent(store, text);
            match NOT_WRAPPED.contains(&name) {
                true => assert_eq!(call, text, "{name}"),
                false => assert!(
                    made.iter()
                        .any(|f| call.starts_with(&format!("SELECT * FROM {f}("))),
                    "{name} goes out as {call}"
                ),
            }
        }
    }
    // Each carries the hot settings itself, so a call needs no transaction
    // to SET LOCAL them in (a group of acks or of single publishes is one
    // call, committed alone).
    let settings: Vec<Vec<String>> = raw(&db.url)
        .await
        .query(
            "SELECT coalesce(proconfig, '{}') FROM pg_proc WHERE proname LIKE 'onceq\\_hot\\_%'",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(settings.len(), made.len());
    for config in settings {
        for want in [
            "plan_cache_mode=force_generic_plan",
            "enable_seqscan=off",
            "enable_hashjoin=off",
            "enable_mergejoin=off",
            "jit=off",
        ] {
            assert!(config.iter().any(|c| c == want), "{config:?} lacks {want}");
        }
    }
    // Through the functions: a message published by one server is claimed
    // and acked through the other.
    a.message_publish(publish("q")).await.unwrap();
    let claimed = b
        .message_claim(crate::MessageClaim {
            queue: QueueRef::new("p", "q"),
            max: 10,
            visibility_timeout: None,
            now: publish("q").now,
        })
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    // A third server, later, makes nothing new.
    PgStore::connect(&url).await.unwrap();
    assert_eq!(functions(&db.url).await, made);
}

#[tokio::test]
async fn a_direct_store_makes_no_functions() {
    let db = PgStore::test_database().await;
    PgStore::connect(&db.url).await.unwrap();
    assert_eq!(functions(&db.url).await, Vec::<String>::new());
}

/// PostgreSQL 15 grants no `CREATE` on `public` to other roles: a role
/// that was given only its tables cannot make the functions, and its
/// statements go out as plain text, as before there were any.
#[tokio::test]
async fn a_role_that_may_not_create_functions_sends_the_statements_themselves() {
    let db = PgStore::test_database().await;
    let role = format!("{}_plain", db.name);
    raw(&db.url)
        .await
        .batch_execute(&format!("CREATE ROLE {role} LOGIN"))
        .await
        .unwrap();
    let url = db.url.replacen("postgres@", &format!("{role}@"), 1);
    let client = raw(&url).await;
    let statements = db::Statements::learn(&client).await.unwrap();
    let db::Statements::Unnamed(unnamed) = statements else {
        panic!("learning is for a pooler")
    };
    assert_eq!(&*unnamed[sql::MESSAGE_CLAIM].text, sql::MESSAGE_CLAIM);
    assert_eq!(functions(&db.url).await, Vec::<String>::new());
}
