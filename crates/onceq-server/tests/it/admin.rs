//! The admin API (`/v1/admin/...`): keys and projects of every project,
//! for a key with the `accounts` action only; every field validated.

use serde_json::json;

use crate::{
    both,
    harness::{Backend, TestServer},
};

async fn keys_created_listed_rotated_limited_and_revoked(b: Backend) {
    let s = TestServer::in_process(b).await;
    let ops = s.scoped_key("ops", "full,accounts", "*").await;

    let created = s
        .post_as(
            &ops,
            "/v1/admin/keys/create",
            json!({"project": "shop", "label": "web", "actions": "publish",
                   "queues": "exports-*", "expires_in_seconds": 3600}),
        )
        .await;
    let created = created.ok().data().clone();
    let secret = created["secret"].as_str().unwrap().to_owned();
    let id = created["key"]["key_id"].as_str().unwrap().to_owned();
    assert!(secret.starts_with(&format!("oq_{id}_")), "{created}");
    assert_eq!(created["key"]["project"], "shop");
    assert_eq!(created["key"]["actions"], "publish");
    assert_eq!(created["key"]["queues"], "exports-*");
    assert!(created["key"]["expires_at"].is_string());
    // The new key works, within its scope.
    s.post_as(
        &secret,
        "/v1/queue/publish",
        json!({"queue": "exports-daily", "payload": 1}),
    )
    .await
    .ok();

    // The list shows it, never a secret.
    let list = s.get_as(&ops, "/v1/admin/keys").await;
    let items = list.ok().data()["items"].as_array().unwrap().clone();
    let shop = items.iter().find(|k| k["key_id"] == id.as_str()).unwrap();
    assert_eq!(shop["label"], "web");
    assert!(!list.body.to_string().contains(&secret));
    assert!(items.iter().all(|k| k.get("secret").is_none()));

    // Rotation: a new secret, same project and scope; both work.
    let rotated = s
        .post_as(
            &ops,
            "/v1/admin/keys/rotate",
            json!({"key_id": id, "expire_old_in_seconds": 60}),
        )
        .await;
    let rotated = rotated.ok().data().clone();
    let new_secret = rotated["secret"].as_str().unwrap().to_owned();
    assert_ne!(new_secret, secret);
    assert_eq!(rotated["key"]["actions"], "publish");
    for key in [&secret, &new_secret] {
        s.post_as(
            key,
            "/v1/queue/publish",
            json!({"queue": "exports-daily", "payload": 2}),
        )
        .await
        .ok();
    }

    // A key's own rate limit, then lifted.
    let limited = s
        .post_as(
            &ops,
            "/v1/admin/keys/limits",
            json!({"key_id": id, "rate_per_sec": 5, "rate_burst": 10}),
        )
        .await;
    assert_eq!(limited.ok().data()["rate_per_sec"], 5.0);
    assert_eq!(limited.data()["rate_burst"], 10);
    let lifted = s
        .post_as(
            &ops,
            "/v1/admin/keys/limits",
            json!({"key_id": id, "rate_per_sec": null}),
        )
        .await;
    assert!(lifted.ok().data()["rate_per_sec"].is_null());

    // Revocation: refused at once; a second revocation is a 404.
    let revoked = s
        .post_as(&ops, "/v1/admin/keys/revoke", json!({"key_id": id}))
        .await;
    assert!(revoked.ok().data()["revoked_at"].is_string());
    s.post_as(
        &secret,
        "/v1/queue/publish",
        json!({"queue": "exports-daily", "payload": 3}),
    )
    .await
    .err(401, "UNAUTHORIZED");
    let m = s
        .post_as(&ops, "/v1/admin/keys/revoke", json!({"key_id": id}))
        .await
        .err(404, "NOT_FOUND");
    assert!(m.contains(&id) && m.contains("GET /v1/admin/keys"), "{m}");
    s.post_as(
        &new_secret,
        "/v1/queue/publish",
        json!({"queue": "exports-a", "payload": 4}),
    )
    .await
    .ok();
}
both!(keys_created_listed_rotated_limited_and_revoked);

async fn project_limits_set_and_cleared(b: Backend) {
    let s = TestServer::in_process(b).await;
    let ops = s.scoped_key("ops", "full,accounts", "*").await;
    let set = s
        .post_as(
            &ops,
            "/v1/admin/projects/limits",
            json!({"project": "alpha", "credit_limit_usd": 0.5, "rate_per_sec": 100}),
        )
        .await;
    let p = set.ok().data().clone();
    assert_eq!(p["name"], "alpha");
    assert_eq!(p["credit_limit_usd"], 0.5);
    assert_eq!(p["rate_per_sec"], 100.0);
    assert_eq!(p["rate_burst"], 100);
    let list = s.get_as(&ops, "/v1/admin/projects").await;
    let items = list.ok().data()["items"].as_array().unwrap().clone();
    let alpha = items.iter().find(|p| p["name"] == "alpha").unwrap();
    assert_eq!(alpha["credit_limit_usd"], 0.5);
    assert!(items.iter().any(|p| p["name"] == "beta"));
    // Only what the body names changes.
    let cleared = s
        .post_as(
            &ops,
            "/v1/admin/projects/limits",
            json!({"project": "alpha", "credit_limit_usd": null}),
        )
        .await;
    assert!(cleared.ok().data()["credit_limit_usd"].is_null());
    assert_eq!(cleared.data()["rate_per_sec"], 100.0);
    let m = s
        .post_as(
            &ops,
            "/v1/admin/projects/limits",
            json!({"project": "nope", "rate_per_sec": 1}),
        )
        .await
        .err(404, "NOT_FOUND");
    assert!(m.contains("\"nope\"") && m.contains("keys/create"), "{m}");
}
both!(project_limits_set_and_cleared);

async fn bad_input_names_the_field_and_stores_nothing(b: Backend) {
    let s = TestServer::in_process(b).await;
    let ops = s.scoped_key("ops", "full,accounts", "*").await;
    let before = s.get_as(&ops, "/v1/admin/keys").await.data()["items"]
        .as_array()
        .unwrap()
        .len();
    for (path, body, field) in [
        ("/v1/admin/keys/create", json!({}), "project"),
        ("/v1/admin/keys/create", json!({"project": ""}), "project"),
        (
            "/v1/admin/keys/create",
            json!({"project": "a\u{7}"}),
            "project",
        ),
        ("/v1/admin/keys/create", json!({"project": 7}), "project"),
        (
            "/v1/admin/keys/create",
            json!({"project": "p", "actions": "write"}),
            "actions",
        ),
        (
            "/v1/admin/keys/create",
            json!({"project": "p", "queues": "a b"}),
            "queues",
        ),
        (
            "/v1/admin/keys/create",
            json!({"project": "p", "label": ""}),
            "label",
        ),
        (
            "/v1/admin/keys/create",
            json!({"project": "p", "expires_in_seconds": 0}),
            "expires_in_seconds",
        ),
        (
            "/v1/admin/keys/create",
            json!({"project": "p", "expires_in_seconds": 1.5}),
            "expires_in_seconds",
        ),
        ("/v1/admin/keys/revoke", json!({}), "key_id"),
        ("/v1/admin/keys/rotate", json!({"key_id": ""}), "key_id"),
        (
            "/v1/admin/keys/rotate",
            json!({"key_id": "x", "expire_old_in_seconds": -1}),
            "expire_old_in_seconds",
        ),
        (
            "/v1/admin/keys/limits",
            json!({"key_id": "x"}),
            "rate_per_sec",
        ),
        (
            "/v1/admin/keys/limits",
            json!({"key_id": "x", "rate_per_sec": -1}),
            "rate_per_sec",
        ),
        (
            "/v1/admin/keys/limits",
            json!({"key_id": "x", "rate_per_sec": 1, "rate_burst": 0}),
            "rate_burst",
        ),
        (
            "/v1/admin/projects/limits",
            json!({"credit_limit_usd": 1}),
            "project",
        ),
        (
            "/v1/admin/projects/limits",
            json!({"project": "alpha"}),
            "credit_limit_usd",
        ),
        (
            "/v1/admin/projects/limits",
            json!({"project": "alpha", "credit_limit_usd": -1}),
            "credit_limit_usd",
        ),
        (
            "/v1/admin/projects/limits",
            json!({"project": "alpha", "credit_limit_usd": 2, "rate_burst": 3}),
            "rate_burst",
        ),
    ] {
        let m = s
            .post_as(&ops, path, body.clone())
            .await
            .err(400, "INVALID_PARAMS");
        assert!(m.contains(field), "{path} {body}: {m}");
    }
    // Nothing half-stored: no key, no limit.
    let after = s.get_as(&ops, "/v1/admin/keys").await.data()["items"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(after, before);
    let projects = s.get_as(&ops, "/v1/admin/projects").await;
    let alpha = projects.data()["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "alpha")
        .unwrap()
        .clone();
    assert!(alpha["credit_limit_usd"].is_null() && alpha["rate_per_sec"].is_null());
}
both!(bad_input_names_the_field_and_stores_nothing);

/// A project's `full` key (and its `admin` one) is refused every admin
/// route with 403 and a hint; without a key, 401.
async fn only_an_accounts_key_may_call_it(b: Backend) {
    let s = TestServer::in_process(b).await;
    let admin = s.scoped_key("alpha", "admin,read", "*").await;
    for key in [&s.key, &admin] {
        for path in ["/v1/admin/keys", "/v1/admin/projects"] {
            let m = s.get_as(key, path).await.err(403, "FORBIDDEN");
            assert!(
                m.contains("accounts") && m.contains("onceq keys create"),
                "{m}"
            );
        }
        for path in [
            "/v1/admin/keys/create",
            "/v1/admin/keys/revoke",
            "/v1/admin/keys/rotate",
            "/v1/admin/keys/limits",
            "/v1/admin/projects/limits",
        ] {
            s.post_as(key, path, json!({"project": "alpha", "key_id": "x"}))
                .await
                .err(403, "FORBIDDEN");
        }
    }
    // Nothing made by the refusals.
    let ops = s.scoped_key("ops", "accounts", "*").await;
    let keys = s.get_as(&ops, "/v1/admin/keys").await;
    assert_eq!(keys.ok().data()["items"].as_array().unwrap().len(), 4);
    s.send(reqwest::Method::GET, "/v1/admin/keys", None, None)
        .await
        .err(401, "UNAUTHORIZED");
}
both!(only_an_accounts_key_may_call_it);

/// Each admin route is in `/openapi.json` with its own operationId and in
/// discovery with its capability id.
async fn documented_and_discovered(b: Backend) {
    let s = TestServer::in_process(b).await;
    let doc = s
        .send(reqwest::Method::GET, "/openapi.json", None, None)
        .await;
    let discovery = s
        .send(reqwest::Method::GET, "/v1/discovery", None, None)
        .await;
    let caps = discovery.ok().data()["capabilities"]
        .as_array()
        .unwrap()
        .clone();
    for (method, path, operation, id) in [
        (
            "get",
            "/v1/admin/keys",
            "admin_keys_list",
            "admin.keys.list",
        ),
        (
            "post",
            "/v1/admin/keys/create",
            "admin_keys_create",
            "admin.keys.create",
        ),
        (
            "post",
            "/v1/admin/keys/revoke",
            "admin_keys_revoke",
            "admin.keys.revoke",
        ),
        (
            "post",
            "/v1/admin/keys/rotate",
            "admin_keys_rotate",
            "admin.keys.rotate",
        ),
        (
            "post",
            "/v1/admin/keys/limits",
            "admin_keys_limits",
            "admin.keys.limits",
        ),
        (
            "get",
            "/v1/admin/projects",
            "admin_projects_list",
            "admin.projects.list",
        ),
        (
            "post",
            "/v1/admin/projects/limits",
            "admin_projects_limits",
            "admin.projects.limits",
        ),
    ] {
        let op = &doc.body["paths"][path][method];
        assert_eq!(op["operationId"], operation, "{method} {path}");
        assert!(op["responses"]["403"].is_object(), "{path}: 403 documented");
        let cap = caps
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("{id}"));
        assert_eq!(cap["path"], path);
        assert_eq!(cap["method"], method.to_uppercase());
    }
}
both!(documented_and_discovered);
