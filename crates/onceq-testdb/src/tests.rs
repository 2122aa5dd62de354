use crate::{StopMode, TestCluster, fresh_database};

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
