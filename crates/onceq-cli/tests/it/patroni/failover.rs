//! Automatic failover under load: the leader's Patroni and PostgreSQL
//! SIGKILLed together (its machine crashed); Patroni promotes the
//! synchronous standby once the leader lock expires, with no human step.

use std::time::{Duration, Instant};

use onceq_testdb::patroni::shared_patroni;

use super::{Scene, Way, run};

#[test]
fn the_leader_killed_through_the_multi_host_url_loses_nothing() {
    run(failover(Way::MultiHost));
}

#[test]
fn the_leader_killed_through_haproxy_loses_nothing() {
    run(failover(Way::Haproxy));
}

async fn failover(way: Way) {
    let (cluster, _turn) = shared_patroni().await;
    let db = cluster.create_database().await;
    let scene = Scene::start(cluster, way.url(cluster, &db), db).await;
    let old = cluster.leader().await.expect("a leader");
    cluster.nodes[old].kill().await;
    let killed = Instant::now();
    let new = cluster
        .wait_for_leader(Some(old), Duration::from_secs(60))
        .await;
    let promoted = killed.elapsed();
    let (_, back) = scene
        .finish(cluster, killed, &format!("failover ({way:?})"))
        .await;
    eprintln!(
        "patroni failover ({way:?}): n{old} killed, n{new} promoted {:.1} s later, first publish acknowledged {back:.1} s after the kill",
        promoted.as_secs_f64()
    );
}
