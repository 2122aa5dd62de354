//! `/openapi.json`: generated from the router, so every route is in it and
//! every operation in it is routed; every reference resolves; the envelope,
//! the errors and auth are described.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::harness::{Backend, TestServer};

/// The document as served.
async fn served(s: &TestServer) -> Value {
    let r = s.http.get(s.url("/openapi.json")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/json");
    r.json().await.unwrap()
}

/// Every (METHOD, path) the document describes.
fn operations(doc: &Value) -> BTreeSet<(String, String)> {
    let mut ops = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in ["get", "post", "put", "delete", "patch", "head", "options"] {
            if item.get(method).is_some() {
                ops.insert((method.to_uppercase(), path.clone()));
            }
        }
    }
    ops
}

/// Routes added in `app.rs` with a literal path (`.route("/x", ..)`,
/// `.nest(..)`, ...) are served without being documented: each must be.
/// `utoipa_axum::routes!` registrations document themselves.
#[test]
fn every_route_is_documented() {
    let doc = serde_json::to_value(onceq_server::openapi::document()).unwrap();
    let documented: BTreeSet<String> = doc["paths"].as_object().unwrap().keys().cloned().collect();
    let source = include_str!("../../src/app.rs");
    let mut raw = Vec::new();
    for call in [".route(", ".route_service(", ".nest(", ".nest_service("] {
        for (i, _) in source.match_indices(call) {
            let rest = source[i + call.len()..].trim_start();
            let literal = rest
                .strip_prefix('"')
                .and_then(|r| r.split_once('"'))
                .map(|(path, _)| path.to_owned());
            raw.push(literal.unwrap_or_else(|| {
                panic!("app.rs: {call}..) without a literal path; this test cannot check it")
            }));
        }
    }
    assert!(
        source.contains(".routes(routes!("),
        "app.rs registers its routes with routes!()"
    );
    // Routers merged in whole are not checked path by path: only the
    // dashboard's may be, and it stays out of the document on purpose (HTML
    // pages for people, not API; docs/api.md, "Authentication").
    for (i, _) in source.match_indices(".merge(") {
        let merged = source[i + ".merge(".len()..].trim_start();
        assert!(
            merged.starts_with("dashboard::routes())"),
            "app.rs merges a router other than the dashboard's: {}",
            merged.lines().next().unwrap_or_default()
        );
    }
    for path in &documented {
        assert!(
            path != "/" && !path.starts_with("/dashboard"),
            "the dashboard's page {path} is in the OpenAPI document"
        );
    }
    for path in &raw {
        assert!(
            documented
                .iter()
                .any(|d| d == path || d.starts_with(&format!("{path}/"))),
            "app.rs routes {path} without documenting it: register it with routes!(handler) \
             and annotate the handler with #[utoipa::path] (see the openapi module doc)"
        );
    }
}

/// Every operation has an operationId and no two share one: generators
/// name a client's functions after them, and refuse (openapi-spec-validator)
/// or break (openapi-typescript's `operations` type) on a duplicate. A
/// handler routed at two methods needs an annotation per method, each
/// with its own `operation_id` (see `queues::delete_post`).
#[test]
fn operation_ids_are_unique() {
    let doc = serde_json::to_value(onceq_server::openapi::document()).unwrap();
    let mut seen = std::collections::BTreeMap::new();
    for (method, path) in operations(&doc) {
        let op = &doc["paths"][&path][method.to_lowercase()];
        let id = op["operationId"]
            .as_str()
            .unwrap_or_else(|| panic!("{method} {path} has no operationId"))
            .to_owned();
        if let Some(first) = seen.insert(id.clone(), format!("{method} {path}")) {
            panic!("operationId {id:?} is used by {first} and by {method} {path}");
        }
    }
    assert!(seen.len() >= 20, "{seen:?}");
}

/// A request body's schema names its fields as they are sent (`type`, not
/// the Rust field `queue_type`): the same list the near-miss rule reads
/// (`request::Fields`). A `request!` macro that hid a `serde(rename)` from
/// the schema derive once documented `queue_type`, which the server ignores.
#[test]
fn request_schemas_name_the_wire_fields() {
    use onceq_types::request::Fields;
    let doc = serde_json::to_value(onceq_server::openapi::document()).unwrap();
    let bodies: [(&str, &[&str]); 9] = [
        ("CreateQueue", onceq_types::request::CreateQueue::FIELDS),
        ("UpdateQueue", onceq_types::request::UpdateQueue::FIELDS),
        ("Publish", onceq_types::request::Publish::FIELDS),
        ("BatchItem", onceq_types::request::BatchItem::FIELDS),
        ("Consume", onceq_types::request::Consume::FIELDS),
        ("Ack", onceq_types::request::Ack::FIELDS),
        ("Nack", onceq_types::request::Nack::FIELDS),
        ("Redrive", onceq_types::request::Redrive::FIELDS),
        ("CronCreate", onceq_types::cron::CronCreate::FIELDS),
    ];
    for (name, fields) in bodies {
        let props: BTreeSet<&str> = doc["components"]["schemas"][name]["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("{name} has no properties"))
            .keys()
            .map(String::as_str)
            .collect();
        for p in &props {
            assert!(
                fields.contains(p),
                "{name} documents {p:?}, not one of its fields {fields:?}"
            );
        }
    }
    let create = &doc["components"]["schemas"]["CreateQueue"]["properties"];
    assert!(create.get("type").is_some(), "{create}");
}

/// No schema says "one of several types" as a `type` list (but `[T,
/// "null"]`, an optional value): openapi-python-client drops the
/// operations whose bodies have one. Use a `oneOf` of typed schemas
/// (`onceq_types::openapi::payload`).
#[test]
fn type_lists_are_nullable_only() {
    fn walk(v: &Value, at: &str, bad: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::Array(types)) = m.get("type") {
                    let non_null = types.iter().filter(|t| *t != "null").count();
                    if non_null > 1 {
                        bad.push(format!("{at}: type {types:?}"));
                    }
                }
                for (k, v) in m {
                    walk(v, &format!("{at}/{k}"), bad);
                }
            }
            Value::Array(a) => {
                for (i, v) in a.iter().enumerate() {
                    walk(v, &format!("{at}/{i}"), bad);
                }
            }
            _ => {}
        }
    }
    let doc = serde_json::to_value(onceq_server::openapi::document()).unwrap();
    let mut bad = Vec::new();
    walk(&doc, "#", &mut bad);
    assert!(bad.is_empty(), "type lists generators drop: {bad:#?}");
}

/// The reverse: every operation of the document is served (not the 404 or
/// 405 fallback), on the real router.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_documented_operation_is_routed() {
    let s = TestServer::in_process(Backend::Sqlite).await;
    let doc = served(&s).await;
    let ops = operations(&doc);
    assert!(ops.len() >= 20, "{ops:?}");
    for (method, path) in &ops {
        let path = path
            .replace("{queue}", "q")
            .replace("{subscription_id}", "psub_0");
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let r = s
            .http
            .request(method.clone(), s.url(&path))
            .bearer_auth(&s.key)
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let text = r.text().await.unwrap();
        assert!(
            status != 405 && !text.contains("no endpoint"),
            "{method} {path} is documented but not routed: {status} {text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_document_is_the_generated_one_and_refs_resolve() {
    let s = TestServer::in_process(Backend::Sqlite).await;
    let doc = served(&s).await;
    assert_eq!(
        doc,
        serde_json::to_value(onceq_server::openapi::document()).unwrap()
    );
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    assert_eq!(doc["info"]["version"], env!("CARGO_PKG_VERSION"));

    let schemas = doc["components"]["schemas"].as_object().unwrap();
    let mut refs = Vec::new();
    collect_refs(&doc, &mut refs);
    assert!(refs.len() > 20);
    for r in refs {
        let name = r
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("unexpected $ref {r}"));
        assert!(schemas.contains_key(name), "$ref {r} does not resolve");
    }
}

fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("$ref") {
                out.push(r.clone());
            }
            m.values().for_each(|v| collect_refs(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

#[test]
fn envelope_errors_and_auth_are_described() {
    let doc = serde_json::to_value(onceq_server::openapi::document()).unwrap();
    let op = &doc["paths"]["/v1/queue/publish"]["post"];
    let statuses: Vec<&str> = op["responses"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    // 402/403/429: the guard (credit, scope, rate); 408: a body too slow.
    assert_eq!(
        statuses,
        [
            "200", "400", "401", "402", "403", "408", "413", "422", "429", "500", "503"
        ]
    );

    let ok = &op["responses"]["200"]["content"]["application/json"]["schema"];
    assert_eq!(ok["properties"]["ok"]["enum"], serde_json::json!([true]));
    assert_eq!(
        ok["properties"]["data"]["$ref"],
        "#/components/schemas/PublishedMessage"
    );
    assert_eq!(ok["properties"]["error"]["type"], "null");
    assert_eq!(
        ok["properties"]["metadata"]["$ref"],
        "#/components/schemas/Metadata"
    );

    let err = &op["responses"]["422"]["content"]["application/json"]["schema"];
    assert_eq!(err["properties"]["ok"]["enum"], serde_json::json!([false]));
    assert_eq!(err["properties"]["data"]["type"], "null");
    assert_eq!(
        err["properties"]["error"]["properties"]["code"]["enum"],
        serde_json::json!(["IDEMPOTENCY_KEY_REUSED"])
    );
    let not_found = &doc["paths"]["/v1/queue/stats/{queue}"]["get"]["responses"]["404"];
    assert_eq!(
        not_found["content"]["application/json"]["schema"]["properties"]["error"]["properties"]["code"]
            ["enum"],
        serde_json::json!(["QUEUE_NOT_FOUND", "NOT_FOUND"])
    );
    assert!(
        doc["paths"]["/v1/queue/consume"]["post"]["responses"]["503"]["headers"]
            .get("Retry-After")
            .is_some()
    );

    // request bodies: required fields and ranges, as the server checks them
    let publish = &doc["components"]["schemas"]["Publish"];
    let required: Vec<&str> = publish["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(required, ["queue", "payload"]);
    assert_eq!(publish["properties"]["delay_seconds"]["maximum"], 604800);
    assert_eq!(
        publish["properties"]["queue"]["pattern"],
        "^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}(-dlq)?$"
    );
    // payload: any JSON but null, one branch per type (see `type_lists_are_nullable_only`)
    let branches: Vec<&Value> = publish["properties"]["payload"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| &b["type"])
        .collect();
    assert_eq!(
        branches,
        ["object", "array", "string", "number", "boolean"]
            .map(Value::from)
            .iter()
            .collect::<Vec<_>>(),
        "payload: any JSON but null"
    );

    // auth: bearer everywhere but the open endpoints
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    assert_eq!(doc["security"], serde_json::json!([{"bearer": []}]));
    for open in ["/healthz", "/readyz", "/v1/discovery", "/openapi.json"] {
        assert_eq!(
            doc["paths"][open]["get"]["security"],
            serde_json::json!([{}]),
            "{open}"
        );
    }
    assert_eq!(
        doc["paths"]["/metrics"]["get"]["security"],
        serde_json::json!([{}, {"metrics_token": []}])
    );
    // optional bodies are left out, never `null`; headers carry their rules
    let redrive = &doc["paths"]["/v1/queue/dlq/redrive/{queue}"]["post"]["requestBody"];
    assert_ne!(redrive["required"], true);
    assert_eq!(
        redrive["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/Redrive"
    );
    let header = &op["parameters"][0];
    assert_eq!(
        (
            &header["name"],
            &header["in"],
            &header["schema"]["maxLength"]
        ),
        (&"Idempotency-Key".into(), &"header".into(), &255.into())
    );
    let delete = &doc["paths"]["/v1/queue/delete/{queue}"];
    assert!(delete.get("delete").is_some() && delete.get("post").is_some());
}
