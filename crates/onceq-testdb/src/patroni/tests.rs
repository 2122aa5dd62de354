//! The harness itself: the shared cluster comes up healthy, a crashed
//! leader is replaced by Patroni alone, HAProxy follows it, and a
//! cut-off leader steps down.

use std::time::{Duration, Instant};

use super::shared_patroni;

#[tokio::test]
async fn a_crashed_leader_is_replaced_and_haproxy_follows() {
    let (cluster, _turn) = shared_patroni().await;
    let old = cluster.leader().await.expect("a leader");
    cluster.nodes[old].kill().await;
    let killed = Instant::now();
    let new = cluster
        .wait_for_leader(Some(old), Duration::from_secs(60))
        .await;
    eprintln!("patroni: n{new} leads {:?} after n{old} was killed", killed.elapsed());
    // HAProxy marks the dead node down and the new leader up.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let via = tokio_postgres::connect(&cluster.haproxy_url("postgres"), tokio_postgres::NoTls).await;
        if let Ok((client, conn)) = via {
            tokio::spawn(conn);
            if client
                .query_one("SELECT pg_is_in_recovery()", &[])
                .await
                .is_ok_and(|r| !r.get::<_, bool>(0))
            {
                break;
            }
        }
        assert!(Instant::now() < deadline, "haproxy never reached the new leader");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The next borrower gets all three nodes back.
    cluster.wait_healthy().await;
    assert!(cluster.nodes[old].is_replica().await, "n{old} rejoined as a standby");
}

#[tokio::test]
async fn a_cut_off_leader_steps_down() {
    let (cluster, _turn) = shared_patroni().await;
    let old = cluster.leader().await.expect("a leader");
    cluster.nodes[old].cut_off();
    let new = cluster
        .wait_for_leader(Some(old), Duration::from_secs(60))
        .await;
    assert!(!cluster.nodes[old].is_primary().await, "n{old} still says primary");
    assert_ne!(new, old);
    cluster.nodes[old].reconnect();
    cluster.wait_healthy().await;
}
