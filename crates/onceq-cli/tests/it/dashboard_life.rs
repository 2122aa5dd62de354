//! A message's whole life in a real browser: `browser/life.mjs` drives
//! Chromium (as `dashboard` does) against a real `onceq serve`: a nacked
//! message's error and attempts, a dead letter's error in its list, a
//! completed message and its result, a cancel through its confirmation,
//! `completed_retention_seconds` set from the settings form, and a
//! selection cancelled from the queue page.
//! This test starts the server, runs the story, and checks the end state
//! through the API.

use crate::dashboard::run_story;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_shows_a_messages_life_in_a_browser() {
    let key = "life-test-key";
    let (server, _data) = run_story("life.mjs", key);

    // What the pages did is what the store holds: of the three messages
    // left, one completed, one cancelled (both kept), one dead letter.
    let stats: serde_json::Value = reqwest::Client::new()
        .get(format!("{}/v1/queue/stats/imports", server.url))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(stats["data"]["message_count"], 0, "{stats}");
    assert_eq!(stats["data"]["dead_lettered"], 1, "{stats}");
    // The settings form's retention was saved, and the selection left
    // nothing in the queue.
    let get = |path: String| {
        let req = reqwest::Client::new()
            .get(format!("{}{path}", server.url))
            .bearer_auth(key);
        async move {
            let v: serde_json::Value = req.send().await.unwrap().json().await.unwrap();
            v
        }
    };
    let reports = get("/v1/queue/get/reports".into()).await;
    assert_eq!(
        reports["data"]["completed_retention_seconds"], 7200,
        "{reports}"
    );
    let stats = get("/v1/queue/stats/reports".into()).await;
    assert_eq!(stats["data"]["message_count"], 0, "{stats}");
    let (clean, _) = server.terminate();
    assert!(clean);
}
