//! Who may read `/metrics`: it lists every project's queue names and
//! counts, so by default only loopback peers get it; a token opens it to
//! whoever holds the token, `--metrics-public` to everyone. The peer
//! address is the one the server's accept loop records on every request;
//! here it is set on the request, through the real router.

use std::net::SocketAddr;

use axum::{body::Body, extract::ConnectInfo, http::Request};
use onceq_server::{ServerConfig, config::MetricsConfig};
use tower::ServiceExt;

use crate::harness::{Backend, TestServer};

async fn status(s: &TestServer, from: [u8; 4], bearer: Option<&str>) -> u16 {
    let mut request =
        Request::get("/metrics").extension(ConnectInfo(SocketAddr::from((from, 40_000))));
    if let Some(token) = bearer {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let answer = onceq_server::app(s.state.clone())
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    answer.status().as_u16()
}

fn metrics(config: MetricsConfig) -> ServerConfig {
    ServerConfig {
        metrics: config,
        ..ServerConfig::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_only_loopback_peers_read_metrics() {
    let s = TestServer::start(Backend::Sqlite).await;
    assert_eq!(status(&s, [127, 0, 0, 1], None).await, 200);
    assert_eq!(status(&s, [10, 1, 2, 3], None).await, 403);
    assert_eq!(status(&s, [203, 0, 113, 9], None).await, 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_is_asked_of_everyone_and_public_opens_it() {
    let with_token = metrics(MetricsConfig {
        token: Some("scrape-me".into()),
        ..MetricsConfig::default()
    });
    let s = TestServer::start_with(Backend::Sqlite, with_token).await;
    assert_eq!(status(&s, [127, 0, 0, 1], None).await, 401);
    assert_eq!(status(&s, [10, 1, 2, 3], Some("scrape-me")).await, 200);
    assert_eq!(status(&s, [10, 1, 2, 3], Some("wrong")).await, 401);

    let public = metrics(MetricsConfig {
        public: true,
        ..MetricsConfig::default()
    });
    let s = TestServer::start_with(Backend::Sqlite, public).await;
    assert_eq!(status(&s, [10, 1, 2, 3], None).await, 200);
}
