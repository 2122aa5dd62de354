use std::sync::atomic::{AtomicUsize, Ordering};

use crate::{StopMode, TestCluster, database_from_template, fresh_database};

async fn select_one(url: &str) -> Result<i32, tokio_postgres::Error> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
    tokio::spawn(connection);
    let row = client.query_one("SELECT 1", &[]).await?;
    Ok(row.get(0))
}

#[tokio::test]
async fn databases_survive_stop_and_restart() {
    let cluster = TestCluster::start().await;
    let a = cluster.create_database().await;
    let b = cluster.create_database().await;
    assert_ne!(a.name, b.name);
    for db in [&a, &b] {
        assert_eq!(select_one(&db.url).await.unwrap(), 1);
    }
    assert_eq!(select_one(&cluster.admin_url()).await.unwrap(), 1);

    cluster.stop(StopMode::Fast).await;
    assert!(select_one(&a.url).await.is_err(), "stopped, yet it answers");
    cluster.restart_server().await;
    assert_eq!(select_one(&a.url).await.unwrap(), 1);

    cluster.stop(StopMode::Immediate).await;
    cluster.restart_server().await;
    assert_eq!(select_one(&b.url).await.unwrap(), 1);

    let dir = cluster.dir().to_path_buf();
    drop(cluster);
    assert!(!dir.exists(), "{} left behind", dir.display());
}

#[tokio::test]
async fn fresh_databases_are_distinct() {
    let a = fresh_database().await;
    let b = fresh_database().await;
    assert_ne!(a.url, b.url);
    assert_eq!(select_one(&a.url).await.unwrap(), 1);
    assert_eq!(select_one(&b.url).await.unwrap(), 1);
}

#[tokio::test]
async fn pgbouncer_pools_transactions_in_front_of_a_cluster() {
    let cluster = TestCluster::start().await;
    let db = cluster.create_database().await;
    let bouncer = crate::pgbouncer::PgBouncer::start(&cluster, 2).await;
    let (client, connection) =
        tokio_postgres::connect(&bouncer.url_of(&db.name), tokio_postgres::NoTls)
            .await
            .unwrap();
    tokio::spawn(connection);
    // Simple queries carry no prepared statement: they work in
    // transaction pooling.
    let rows = client.simple_query("SELECT 1").await.unwrap();
    assert!(!rows.is_empty());
    let log = bouncer.log();
    assert!(log.contains("process up"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn template_databases_are_copies_of_one_set_up() {
    static INITS: AtomicUsize = AtomicUsize::new(0);
    let init = |url: String| async move {
        INITS.fetch_add(1, Ordering::SeqCst);
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        let connection = tokio::spawn(connection);
        client
            .batch_execute("CREATE TABLE t (x int); INSERT INTO t VALUES (7)")
            .await
            .unwrap();
        drop(client);
        connection.await.unwrap().unwrap();
    };
    let (a, b) = tokio::join!(
        database_from_template("testdb_test", init),
        database_from_template("testdb_test", init)
    );
    let c = database_from_template("testdb_test", init).await;
    assert_eq!(INITS.load(Ordering::SeqCst), 1, "set up once");
    for db in [&a, &b, &c] {
        let (client, connection) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        let row = client.query_one("SELECT x FROM t", &[]).await.unwrap();
        assert_eq!(row.get::<_, i32>(0), 7);
        // A copy, not the template: what one test writes, others never see.
        client.batch_execute("DROP TABLE t").await.unwrap();
    }
    assert_ne!(a.name, b.name);
    let template = a.url.replace(&a.name, "onceq_template_testdb_test");
    assert!(
        select_one(&template).await.is_err(),
        "the template refuses connections"
    );
}
