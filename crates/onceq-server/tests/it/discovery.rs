//! Discovery by id (queue-api-2.md §9), and that every route the server
//! serves under `/v1` is in `/v1/discovery`, so a route added later cannot
//! be left out of it.

use std::collections::BTreeSet;

use reqwest::Method;

use crate::{
    both,
    harness::{Backend, TestServer},
};

async fn one_capability_by_id(b: Backend) {
    let s = TestServer::in_process_with(b, TestServer::priced()).await;
    let all = s.send(Method::GET, "/v1/discovery", None, None).await;
    all.ok();
    for c in all.data()["capabilities"].as_array().unwrap() {
        let id = c["id"].as_str().unwrap();
        // No key needed.
        let r = s
            .send(Method::GET, &format!("/v1/discovery/{id}"), None, None)
            .await;
        r.ok();
        assert_eq!(r.data(), c, "{id}: the record /v1/discovery lists");
    }
    let publish = s.get("/v1/discovery/queue.publish").await;
    assert_eq!(publish.data()["billing"]["price_usd"], 0.00002);
    let r = s
        .send(Method::GET, "/v1/discovery/queue.nope", None, None)
        .await;
    let message = r.err(404, "NOT_FOUND");
    assert!(message.contains("queue.nope"), "{message}");
    assert_eq!(
        r.body["error"]["hint"],
        "GET /v1/discovery lists every capability id"
    );
}
both!(one_capability_by_id);

// Served at a second method or in a second form, as the same capability
// (docs/api.md): listed in discovery once, by its capability's own.
use onceq_types::capability::ALIASES;

async fn every_route_is_in_discovery(b: Backend) {
    let s = TestServer::in_process(b).await;
    let doc = s.send(Method::GET, "/openapi.json", None, None).await;
    let discovery = s.send(Method::GET, "/v1/discovery", None, None).await;
    let listed: BTreeSet<(String, String)> = discovery.data()["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["method"].as_str().unwrap().to_owned(),
                c["path"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let mut routes = 0;
    for (path, item) in doc.body["paths"].as_object().unwrap() {
        if !path.starts_with("/v1/") {
            continue;
        }
        for method in item.as_object().unwrap().keys() {
            let method = method.to_ascii_uppercase();
            if !["GET", "POST", "PUT", "PATCH", "DELETE"].contains(&method.as_str()) {
                continue;
            }
            routes += 1;
            let alias = ALIASES.contains(&(method.as_str(), path.as_str()));
            assert!(
                alias || listed.contains(&(method.clone(), path.clone())),
                "{method} {path} is served but not in /v1/discovery"
            );
        }
    }
    assert!(routes > 20, "the document lists the routes ({routes})");
}
both!(every_route_is_in_discovery);
