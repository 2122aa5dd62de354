//! `onceq keys` and `onceq projects` through a running server's admin API
//! (`--url`), answering as they do on the store.

use serde_json::Value;

use crate::process::{ServerProcess, run, run_ok};

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn keys_and_projects_through_the_admin_api() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let server = ServerProcess::start(&["--data-dir", data], &[("ONCEQ_API_KEY", "ops-key")]);
    let url = server.url.as_str();
    let api = |args: &[&str]| {
        run_ok(
            &[args, &["--url", url]].concat(),
            &[("ONCEQ_API_KEY", "ops-key")],
        )
    };
    let on_store = |args: &[&str]| run_ok(&[args, &["--data-dir", data]].concat(), &[]);

    let secret = api(&[
        "keys",
        "create",
        "--project",
        "shop",
        "--actions",
        "publish",
        "--queues",
        "exports-*",
        "--expires-in",
        "30d",
    ]);
    let secret = secret.trim().to_owned();
    assert!(secret.starts_with("oq_"), "{secret}");
    let as_shop = [("ONCEQ_URL", url), ("ONCEQ_API_KEY", secret.as_str())];
    run_ok(&["publish", "exports-daily", "1"], &as_shop);

    // Same records either way.
    let via_api = api(&["keys", "list", "--json"]);
    assert_eq!(json(&via_api), json(&on_store(&["keys", "list", "--json"])));
    assert_eq!(api(&["keys", "list"]), on_store(&["keys", "list"]));
    assert!(!via_api.contains(&secret));
    let keys = json(&via_api);
    let shop = keys
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["project"] == "shop")
        .unwrap()
        .clone();
    assert_eq!(shop["actions"], "publish");
    let id = shop["key_id"].as_str().unwrap().to_owned();

    let rotated = api(&["keys", "rotate", &id, "--expire-old-in", "1h"]);
    let rotated = rotated.trim().to_owned();
    assert_ne!(rotated, secret);
    run_ok(
        &["publish", "exports-daily", "2"],
        &[("ONCEQ_URL", url), ("ONCEQ_API_KEY", rotated.as_str())],
    );
    let text = api(&["keys", "set-rate", &id, "--rate", "5", "--burst", "10"]);
    assert_eq!(text.trim(), format!("{id}: rate limit 5/s, burst 10"));

    let text = api(&["projects", "set-credit", "shop", "0.5"]);
    assert_eq!(text.trim(), "shop: credit limit 0.5 USD");
    api(&["projects", "set-rate", "shop", "--rate", "100"]);
    let projects = api(&["projects", "list", "--json"]);
    assert_eq!(
        json(&projects),
        json(&on_store(&["projects", "list", "--json"]))
    );
    let table = api(&["projects", "list"]);
    assert!(table.contains("shop") && table.contains("100/s"), "{table}");

    // Refusals say why, once.
    for (bad, says) in [
        (
            &["projects", "set-credit", "nope", "1"][..],
            "project \"nope\" not found",
        ),
        (
            &["projects", "set-credit", "shop", "-1"][..],
            "credit_limit_usd must be",
        ),
        (&["keys", "create", "--actions", "write"][..], "actions:"),
        (&["keys", "revoke", "nokey"][..], "no active key"),
    ] {
        let out = run(
            &[bad, &["--url", url]].concat(),
            &[("ONCEQ_API_KEY", "ops-key")],
        );
        assert!(!out.status.success(), "{bad:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{bad:?}: {err}");
    }
    // A project's key may not use the admin API: 403 with the hint.
    let out = run(
        &["keys", "list", "--url", url],
        &[("ONCEQ_API_KEY", secret.as_str())],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("FORBIDDEN") && err.contains("accounts"),
        "{err}"
    );

    let text = api(&["keys", "revoke", &id]);
    assert_eq!(text.trim(), format!("revoked {id}"));
    assert!(
        !run(&["publish", "exports-daily", "3"], &as_shop)
            .status
            .success()
    );
    let (clean, logs) = server.terminate();
    assert!(clean);
    assert!(
        logs.iter()
            .all(|l| !l.contains(&secret) && !l.contains(&rotated)),
        "a key was logged"
    );
}
