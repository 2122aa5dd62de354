//! A planned switchover (`patronictl switchover`) under load: clients see
//! at most 503 with `Retry-After` — also through HAProxy, which goes on
//! routing to the demoted leader, a read-only standby by then, for up to
//! three checks (`inter 3s fall 3`) — and nothing is lost.

use std::time::Instant;

use onceq_testdb::patroni::shared_patroni;

use super::{Scene, Way, run};

#[test]
fn a_switchover_through_the_multi_host_url_is_at_most_503() {
    run(switchover(Way::MultiHost));
}

#[test]
fn a_switchover_through_haproxy_is_at_most_503() {
    run(switchover(Way::Haproxy));
}

async fn switchover(way: Way) {
    let (cluster, _turn) = shared_patroni().await;
    let db = cluster.create_database().await;
    let scene = Scene::start(cluster, way.url(cluster, &db), db).await;
    let old = cluster.leader().await.expect("a leader");
    let started = Instant::now();
    cluster.switchover(None).await;
    let switched = started.elapsed();
    let (seen, back) = scene
        .finish(cluster, started, &format!("switchover ({way:?})"))
        .await;
    let new = cluster.leader().await.expect("a leader");
    assert_ne!(new, old, "the switchover moved the leader");
    eprintln!(
        "patroni switchover ({way:?}): n{old} -> n{new}, patronictl done {:.1} s after it began, first publish acknowledged after the outage {back:.1} s; {} answers 503",
        switched.as_secs_f64(),
        seen.unavailable()
    );
}
