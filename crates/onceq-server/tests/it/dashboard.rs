//! The dashboard over HTTP: sign-in and its cookie, re-authentication on
//! every request, the same-origin rule for changes, every page and
//! fragment, the DLQ actions and the purge confirmation, the key's scope,
//! and the assets.
//! The browser itself is driven by the CLI crate's `dashboard` test.
//!
//! Over 400 lines: every page's test drives it through the `Browser` and `Page`
//! helpers below; a page that grows a file of its own takes its tests along.

use reqwest::{StatusCode, header};
use serde_json::json;

use crate::both;
use crate::harness::{Backend, TestServer};

both!(signin_sets_a_strict_httponly_cookie);
both!(changes_must_come_from_the_dashboard);
both!(revoked_key_is_signed_out_at_once);
both!(overview_shows_depths_dead_letters_and_throughput);
both!(queue_page_pages_filters_and_searches);
both!(message_page_escapes_and_tells_its_history);
both!(dlq_redrive_one_delete_one_and_all);
both!(purge_needs_the_queue_name);
both!(assets_are_typed_and_cached);
both!(a_scoped_key_sees_its_queues_and_changes_need_admin);
both!(dead_letter_changes_need_the_dlq_in_the_key_patterns);
both!(queue_page_lists_push_subscriptions_without_secrets);
both!(the_dashboard_keeps_the_keys_rate_limit);

/// `application/x-www-form-urlencoded` bodies, as a browser sends them.
pub(crate) trait FormPairs {
    fn form_pairs(self, pairs: &[(&str, &str)]) -> Self;
}

impl FormPairs for reqwest::RequestBuilder {
    fn form_pairs(self, pairs: &[(&str, &str)]) -> Self {
        let enc = |s: &str| -> String {
            s.bytes()
                .map(|b| match b {
                    b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                        (b as char).to_string()
                    }
                    _ => format!("%{b:02X}"),
                })
                .collect()
        };
        let body = pairs
            .iter()
            .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
            .collect::<Vec<_>>()
            .join("&");
        self.header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body)
    }
}

/// An HTML answer.
pub(crate) struct Page {
    pub(crate) status: StatusCode,
    pub(crate) headers: header::HeaderMap,
    pub(crate) body: String,
}

impl Page {
    pub(crate) fn location(&self) -> &str {
        self.headers
            .get(header::LOCATION)
            .map(|v| v.to_str().unwrap())
            .unwrap_or("")
    }

    pub(crate) fn set_cookie(&self) -> &str {
        self.headers
            .get(header::SET_COOKIE)
            .map(|v| v.to_str().unwrap())
            .unwrap_or("")
    }

    #[track_caller]
    pub(crate) fn has(&self, text: &str) -> &Self {
        assert!(
            self.body.contains(text),
            "expected {text:?} in the page (status {}):\n{}",
            self.status,
            self.body
        );
        self
    }

    #[track_caller]
    pub(crate) fn lacks(&self, text: &str) -> &Self {
        assert!(
            !self.body.contains(text),
            "did not expect {text:?} in:\n{}",
            self.body
        );
        self
    }
}

/// A browser of the dashboard: no redirects followed, the key's cookie
/// sent when signed in, and the headers a same-origin page sends.
pub(crate) struct Browser<'a> {
    server: &'a TestServer,
    pub(crate) http: reqwest::Client,
    cookie: Option<String>,
}

impl<'a> Browser<'a> {
    fn new(server: &'a TestServer) -> Self {
        Self {
            server,
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            cookie: None,
        }
    }

    /// Signed in with `key` (the cookie the sign-in sets, see below).
    pub(crate) fn signed_in(server: &'a TestServer, key: &str) -> Self {
        let mut b = Self::new(server);
        b.cookie = Some(format!("onceq_key={}", hex::encode(key)));
        b
    }

    pub(crate) fn origin(&self) -> String {
        format!("http://{}", self.server.addr)
    }

    pub(crate) async fn send(&self, req: reqwest::RequestBuilder) -> Page {
        let req = match &self.cookie {
            Some(c) => req.header(header::COOKIE, c),
            None => req,
        };
        let res = req.send().await.unwrap();
        Page {
            status: res.status(),
            headers: res.headers().clone(),
            body: res.text().await.unwrap(),
        }
    }

    pub(crate) async fn get(&self, path: &str) -> Page {
        self.send(self.http.get(self.server.url(path))).await
    }

    /// A fragment request, as htmx makes it.
    pub(crate) async fn get_htmx(&self, path: &str) -> Page {
        self.send(
            self.http
                .get(self.server.url(path))
                .header("hx-request", "true"),
        )
        .await
    }

    /// A plain form POST from a dashboard page.
    pub(crate) async fn post_form(&self, path: &str, form: &[(&str, &str)]) -> Page {
        self.send(
            self.http
                .post(self.server.url(path))
                .header(header::ORIGIN, self.origin())
                .header("sec-fetch-site", "same-origin")
                .form_pairs(form),
        )
        .await
    }

    /// A form's POST through htmx (with the values htmx adds, such as
    /// `hx-vals`).
    pub(crate) async fn post_htmx_form(&self, path: &str, form: &[(&str, &str)]) -> Page {
        self.send(
            self.http
                .post(self.server.url(path))
                .header(header::ORIGIN, self.origin())
                .header("hx-request", "true")
                .form_pairs(form),
        )
        .await
    }

    /// A button's POST through htmx.
    pub(crate) async fn post_htmx(&self, path: &str) -> Page {
        self.send(
            self.http
                .post(self.server.url(path))
                .header(header::ORIGIN, self.origin())
                .header("hx-request", "true"),
        )
        .await
    }
}

/// Publishes, claims and nacks without requeue: a dead letter of `queue`.
pub(crate) async fn dead_letter(s: &TestServer, queue: &str, payload: serde_json::Value) -> String {
    let id = s.publish(queue, payload).await;
    let r = s
        .post(
            "/v1/queue/consume",
            json!({"queue": queue, "max_messages": 1}),
        )
        .await;
    r.ok();
    assert_eq!(r.data()["items"][0]["message_id"], id.as_str());
    let r = s
        .post(
            "/v1/queue/nack",
            json!({"queue": queue, "message_id": id, "requeue": false}),
        )
        .await;
    assert_eq!(r.ok().data()["dead_lettered"], true);
    id
}

async fn signin_sets_a_strict_httponly_cookie(b: Backend) {
    let s = TestServer::start(b).await;
    let anon = Browser::new(&s);
    let root = anon.get("/").await;
    assert_eq!(
        (root.status, root.location()),
        (StatusCode::SEE_OTHER, "/dashboard")
    );
    let dash = anon.get("/dashboard").await;
    assert_eq!(dash.status, StatusCode::SEE_OTHER);
    assert_eq!(dash.location(), "/dashboard/signin");
    anon.get("/dashboard/signin")
        .await
        .has(r#"<label for="api_key">API key</label>"#)
        .has(r#"type="password""#)
        .has(r##"href="#main""##);

    let wrong = anon
        .post_form("/dashboard/signin", &[("api_key", "oq_nope_nope")])
        .await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    wrong
        .has("unknown or revoked")
        .has(r#"aria-invalid="true""#);
    assert_eq!(wrong.set_cookie(), "");
    let empty = anon
        .post_form("/dashboard/signin", &[("api_key", " ")])
        .await;
    assert_eq!(empty.status, StatusCode::BAD_REQUEST);
    empty.has("api_key is empty");

    let ok = anon
        .post_form("/dashboard/signin", &[("api_key", &s.key)])
        .await;
    assert_eq!(
        (ok.status, ok.location()),
        (StatusCode::SEE_OTHER, "/dashboard")
    );
    assert_eq!(
        ok.set_cookie(),
        format!(
            "onceq_key={}; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=43200",
            hex::encode(&s.key)
        )
    );
    // Behind a TLS-terminating proxy the cookie is Secure.
    let https = anon
        .send(
            anon.http
                .post(s.url("/dashboard/signin"))
                .header(header::ORIGIN, anon.origin())
                .header("x-forwarded-proto", "https")
                .form_pairs(&[("api_key", &s.key)]),
        )
        .await;
    assert!(
        https.set_cookie().ends_with("; Secure"),
        "{}",
        https.set_cookie()
    );

    let me = Browser::signed_in(&s, &s.key);
    me.get("/dashboard")
        .await
        .has("Project <strong>alpha</strong>");
    let out = me.post_form("/dashboard/signout", &[]).await;
    assert_eq!(out.location(), "/dashboard/signin");
    assert!(out.set_cookie().starts_with("onceq_key=; "));
    assert!(out.set_cookie().contains("Max-Age=0"));
}

async fn changes_must_come_from_the_dashboard(b: Backend) {
    let s = TestServer::start(b).await;
    dead_letter(&s, "jobs", json!({"n": 1})).await;
    let me = Browser::signed_in(&s, &s.key);
    let path = "/dashboard/queues/jobs/dlq/redrive";

    let evil = me
        .send(
            me.http
                .post(s.url(path))
                .header(header::ORIGIN, "http://evil.example")
                .header("hx-request", "true"),
        )
        .await;
    assert_eq!(evil.status, StatusCode::FORBIDDEN);
    let bare = me.send(me.http.post(s.url(path))).await;
    assert_eq!(bare.status, StatusCode::FORBIDDEN);
    let cross = me
        .send(
            me.http
                .post(s.url(path))
                .header(header::ORIGIN, me.origin())
                .header("sec-fetch-site", "cross-site"),
        )
        .await;
    assert_eq!(cross.status, StatusCode::FORBIDDEN);
    let signin = me
        .send(
            me.http
                .post(s.url("/dashboard/signin"))
                .header(header::ORIGIN, "http://evil.example")
                .form_pairs(&[("api_key", &s.key)]),
        )
        .await;
    assert_eq!(signin.status, StatusCode::FORBIDDEN);
    assert_eq!(signin.set_cookie(), "");
    // Nothing moved.
    assert_eq!(s.stats("jobs").await["dead_lettered"], 1);

    let ok = me.post_form(path, &[("confirm", "yes")]).await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER);
    assert_eq!(s.stats("jobs").await["dead_lettered"], 0);
}

async fn revoked_key_is_signed_out_at_once(b: Backend) {
    let s = TestServer::start(b).await;
    let now = s.clock.now();
    let (key, record) =
        onceq_server::auth::create_key(s.state.store().as_ref(), "alpha", None, now)
            .await
            .unwrap();
    let me = Browser::signed_in(&s, &key.secret);
    assert_eq!(me.get("/dashboard").await.status, StatusCode::OK);
    assert!(
        s.state
            .store()
            .key_revoke(&record.key_id, now)
            .await
            .unwrap()
    );

    let page = me.get("/dashboard").await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    assert_eq!(page.location(), "/dashboard/signin?expired=1");
    assert!(
        page.set_cookie().contains("Max-Age=0"),
        "the cookie is cleared"
    );
    // A live fragment polled by htmx sends the whole page to sign-in.
    let live = me.get_htmx("/dashboard/live/queues").await;
    assert_eq!(live.status, StatusCode::UNAUTHORIZED);
    assert_eq!(live.headers["hx-redirect"], "/dashboard/signin?expired=1");
    // Changes too.
    assert_eq!(
        me.post_htmx("/dashboard/queues/jobs/dlq/redrive")
            .await
            .status,
        StatusCode::UNAUTHORIZED
    );
    me.get("/dashboard/signin?expired=1")
        .await
        .has("no longer accepted");
}

async fn overview_shows_depths_dead_letters_and_throughput(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    me.get("/dashboard").await.has("No queues yet.");

    dead_letter(&s, "jobs", json!({"n": 9})).await;
    for n in 0..3 {
        s.publish("jobs", json!({ "n": n })).await;
    }
    let r = s
        .post(
            "/v1/queue/consume",
            json!({"queue": "jobs", "max_messages": 1}),
        )
        .await;
    let m = &r.ok().data()["items"][0];
    let acked = s
        .post(
            "/v1/queue/ack",
            json!({"queue": "jobs", "message_id": m["message_id"], "receipt": m["receipt"]}),
        )
        .await;
    assert_eq!(acked.ok().data()["acked"], true);
    s.clock.advance(jiff::SignedDuration::from_secs(75));
    // Another project's queue never shows.
    s.send(
        reqwest::Method::POST,
        "/v1/queue/publish",
        Some(json!({"queue": "their-secret", "payload": {}})),
        Some(&s.other_key),
    )
    .await
    .ok();

    let live = me.get_htmx("/dashboard/live/queues").await;
    assert_eq!(live.status, StatusCode::OK);
    live.has(r#"id="queue-jobs" href="/dashboard/queues/jobs""#)
        .has(r#"<td class="num" data-label="Available">2</td>"#)
        .has(r#"<td class="num" data-label="In flight">0</td>"#)
        .has(r#"href="/dashboard/queues/jobs/dlq">1</a>"#)
        .has(r#"<td class="num" data-label="Oldest">1 m 15 s</td>"#)
        .has("DLQ of jobs")
        .has("<svg")
        .lacks("their-secret")
        .lacks("<html");
    // The chart's buckets: 4 published and 1 acked 75 s ago, none since.
    let series = s.state.throughput.series("alpha", "jobs", s.clock.now());
    assert_eq!(series.published.iter().sum::<u64>(), 4);
    assert_eq!(series.acked.iter().sum::<u64>(), 1);
    assert_eq!(series.recent(6), (0, 0));
    s.publish("jobs", json!({"n": 10})).await;
    me.get_htmx("/dashboard/live/queues")
        .await
        .has(r#"<span class="rate-pub">1&#8239;/min in</span>"#);
    // The full page holds the same live region, polled.
    me.get("/dashboard")
        .await
        .has(r#"hx-get="/dashboard/live/queues" hx-trigger="every 3s""#)
        .has("<html");
}

async fn queue_page_pages_filters_and_searches(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    let mut ids = Vec::new();
    for n in 0..55 {
        let r = s
            .post(
                "/v1/queue/publish",
                json!({"queue": "jobs", "payload": {"n": n}, "idempotency_key": format!("order-{n}")}),
            )
            .await;
        ids.push(r.ok().data()["message_id"].as_str().unwrap().to_owned());
    }
    let first = me.get("/dashboard/queues/jobs").await;
    assert_eq!(first.status, StatusCode::OK);
    first
        .has(&ids[0])
        .has(&ids[49])
        .lacks(&ids[50])
        .has("Next page");
    let next = first
        .body
        .split("href=\"/dashboard/queues/jobs?after=")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a next-page link")
        .to_owned();
    let second = me
        .get(&format!("/dashboard/queues/jobs?after={next}"))
        .await;
    second
        .has(&ids[50])
        .has(&ids[54])
        .lacks(&ids[49])
        .has("First page")
        .lacks("Next page");
    // The live region polls the same page.
    second.has(&format!(
        r#"hx-get="/dashboard/queues/jobs/live?after={next}""#
    ));
    me.get_htmx(&format!("/dashboard/queues/jobs/live?after={next}"))
        .await
        .has(&ids[54])
        .lacks(&ids[0]);

    let found = me.get("/dashboard/queues/jobs?q=order-7").await;
    found.has(&ids[7]).lacks(&ids[8]).lacks(&ids[17]);
    me.get(&format!("/dashboard/queues/jobs?q={}", ids[3]))
        .await
        .has(&ids[3])
        .lacks(&ids[4]);
    me.get("/dashboard/queues/jobs?q=nothing-like-it")
        .await
        .has("No message with id or idempotency key");

    let r = s
        .post(
            "/v1/queue/consume",
            json!({"queue": "jobs", "max_messages": 2}),
        )
        .await;
    r.ok();
    let in_flight = me.get("/dashboard/queues/jobs?state=in_flight").await;
    in_flight
        .has(&ids[0])
        .has(&ids[1])
        .lacks(&ids[2])
        .has("in flight");
    me.get("/dashboard/queues/jobs")
        .await
        .has(r#"id="stat-in-flight">2<"#);

    let bad = me.get("/dashboard/queues/jobs?state=gone").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    bad.has("state must be");
    let bad = me.get("/dashboard/queues/jobs?after=x").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    bad.has("after must be a whole number");
    let missing = me.get("/dashboard/queues/nowhere").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    missing.has("not found");
    // An error in a fragment comes back as a fragment.
    let err = me.get_htmx("/dashboard/queues/nowhere/live").await;
    assert_eq!(err.status, StatusCode::NOT_FOUND);
    err.has(r#"role="alert""#).lacks("<html");
    let invalid = me.get("/dashboard/queues/bad%20name").await;
    assert_eq!(invalid.status, StatusCode::BAD_REQUEST);
}

async fn message_page_escapes_and_tells_its_history(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    let r = s
        .post(
            "/v1/queue/publish",
            json!({"queue": "jobs", "payload": {"html": "<script>alert(1)</script>", "big": 9007199254740993u64},
                   "idempotency_key": "k-1", "delay_seconds": 30,
                   "headers": {"X-Tenant": "<b>acme</b>", "traceparent": "00-abc-01"}}),
        )
        .await;
    let id = r.ok().data()["message_id"].as_str().unwrap().to_owned();
    let path = format!("/dashboard/queues/jobs/messages/{id}");
    let page = me.get(&path).await;
    assert_eq!(page.status, StatusCode::OK);
    page.has("&lt;script&gt;alert(1)&lt;/script&gt;")
        .lacks("<script>alert")
        .has("9007199254740993")
        .has("Delayed until then.")
        .has("Not handed out yet")
        .has("k-1")
        .has("delayed")
        .has("Headers <span class=\"muted\">(2)</span>")
        .has("x-tenant")
        .has("&lt;b&gt;acme&lt;/b&gt;")
        .has("00-abc-01");

    s.clock.advance(jiff::SignedDuration::from_secs(30));
    let r = s
        .post(
            "/v1/queue/consume",
            json!({"queue": "jobs", "max_messages": 1}),
        )
        .await;
    assert_eq!(r.ok().data()["items"][0]["message_id"], id.as_str());
    me.get_htmx(&format!("{path}/live"))
        .await
        .has("Handed out <strong>1</strong> time")
        .has("In flight: the current lease ends then")
        .has(r#"id="message-deliveries">1<"#);
    let r = s
        .post("/v1/queue/ack", json!({"queue": "jobs", "message_id": id}))
        .await;
    assert_eq!(r.ok().data()["acked"], true);
    me.get_htmx(&format!("{path}/live"))
        .await
        .has("no longer in jobs");
    // Another project's message is not found through its queue name either.
    let theirs = Browser::signed_in(&s, &s.other_key);
    assert_eq!(theirs.get(&path).await.status, StatusCode::NOT_FOUND);
}

async fn dlq_redrive_one_delete_one_and_all(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    let a = dead_letter(&s, "jobs", json!({"n": 1})).await;
    let b2 = dead_letter(&s, "jobs", json!({"n": 2})).await;
    let c = dead_letter(&s, "jobs", json!({"n": 3})).await;
    let d = dead_letter(&s, "jobs", json!({"n": 4})).await;

    let page = me.get("/dashboard/queues/jobs/dlq").await;
    page.has(&a)
        .has(&d)
        .has(r#"id="dlq-count">4<"#)
        .has("Redrive all 4 messages to jobs");
    page.has(&format!(r#"id="redrive-{a}""#));

    // Redrive one, through htmx: the list comes back with the flash.
    let one = me
        .post_htmx(&format!("/dashboard/queues/jobs/dlq/{a}/redrive"))
        .await;
    assert_eq!(one.status, StatusCode::OK);
    one.has(&format!("Redrove {a} to jobs."))
        .has(r#"hx-swap-oob="true""#)
        .has(r#"id="dlq-count">3<"#)
        .lacks(&format!(r#"id="redrive-{a}""#));
    let stats = s.stats("jobs").await;
    assert_eq!(
        (stats["available"].as_i64(), stats["dead_lettered"].as_i64()),
        (Some(1), Some(3))
    );
    // Again: it is gone from the DLQ.
    me.post_htmx(&format!("/dashboard/queues/jobs/dlq/{a}/redrive"))
        .await
        .has("is no longer in the dead-letter queue");

    // Delete one, without JavaScript: first a confirmation step that
    // changes nothing, then a redirect to the page and its flash.
    let ask = me
        .post_form(&format!("/dashboard/queues/jobs/dlq/{b2}/delete"), &[])
        .await;
    assert_eq!(ask.status, StatusCode::OK);
    ask.has(&format!("delete dead letter {b2} from jobs-dlq for good"))
        .has(r#"name="confirm" value="yes""#);
    assert_eq!(s.stats("jobs").await["dead_lettered"], 3);
    let del = me
        .post_form(
            &format!("/dashboard/queues/jobs/dlq/{b2}/delete"),
            &[("confirm", "yes")],
        )
        .await;
    assert_eq!(del.status, StatusCode::SEE_OTHER);
    assert!(
        del.location()
            .starts_with("/dashboard/queues/jobs/dlq?done=deleted")
    );
    me.get(del.location())
        .await
        .has(&format!("Deleted {b2}."))
        .lacks(&format!(r#"id="row-{b2}""#));
    assert_eq!(s.stats("jobs").await["dead_lettered"], 2);

    // One held by a consumer of the DLQ stays.
    let r = s
        .post(
            "/v1/queue/consume",
            json!({"queue": "jobs-dlq", "max_messages": 1}),
        )
        .await;
    assert_eq!(r.ok().data()["items"][0]["message_id"], c.as_str());
    // Through htmx, the browser's dialog confirmed (`hx-vals`).
    page.has(r#"hx-vals="{&quot;confirm&quot;:&quot;yes&quot;}""#);
    me.post_htmx_form(
        &format!("/dashboard/queues/jobs/dlq/{c}/delete"),
        &[("confirm", "yes")],
    )
    .await
    .has("is in flight");

    // Redrive all asks first (without and with htmx: the button is a plain
    // form), then moves what is not in flight.
    for ask in [
        me.post_form("/dashboard/queues/jobs/dlq/redrive", &[])
            .await,
        me.post_htmx("/dashboard/queues/jobs/dlq/redrive").await,
    ] {
        assert_eq!(ask.status, StatusCode::OK);
        ask.has("redrive all 2 dead letters back to jobs")
            .has(r#"id="confirm-button""#);
    }
    assert_eq!(s.stats("jobs").await["dead_lettered"], 2);
    let all = me
        .post_form("/dashboard/queues/jobs/dlq/redrive", &[("confirm", "yes")])
        .await;
    assert_eq!(
        all.location(),
        "/dashboard/queues/jobs/dlq?done=redrove&n=1"
    );
    me.get(all.location())
        .await
        .has("Redrove 1 message to jobs.");
    let stats = s.stats("jobs").await;
    assert_eq!(
        (stats["available"].as_i64(), stats["dead_lettered"].as_i64()),
        (Some(2), Some(1))
    );
    let _ = d;

    // A queue without a dead-letter queue has nothing to redrive.
    s.post("/v1/queue/create", json!({"name": "plain-dlq-target"}))
        .await
        .ok();
    let bad = me.post_htmx("/dashboard/queues/jobs-dlq/dlq/redrive").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    bad.has("has no dead-letter queue");
    me.get("/dashboard/queues/jobs-dlq/dlq")
        .await
        .has("has no dead-letter queue");
}

async fn purge_needs_the_queue_name(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    for n in 0..3 {
        s.publish("jobs", json!({ "n": n })).await;
    }
    me.get("/dashboard/queues/jobs/purge")
        .await
        .has("all 3 messages")
        .has(r#"<label for="confirm">"#);
    let wrong = me
        .post_form("/dashboard/queues/jobs/purge", &[("confirm", "job")])
        .await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST);
    wrong
        .has("confirm must be the queue's name")
        .has(r#"aria-invalid="true""#);
    let none = me.post_form("/dashboard/queues/jobs/purge", &[]).await;
    assert_eq!(none.status, StatusCode::BAD_REQUEST);
    assert_eq!(s.stats("jobs").await["message_count"], 3);

    let ok = me
        .post_form("/dashboard/queues/jobs/purge", &[("confirm", "jobs")])
        .await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER);
    assert_eq!(ok.location(), "/dashboard/queues/jobs?purged=3");
    assert_eq!(s.stats("jobs").await["message_count"], 0);
    me.get(ok.location())
        .await
        .has("Purged jobs: 3 messages deleted.");
}

async fn assets_are_typed_and_cached(b: Backend) {
    let s = TestServer::start(b).await;
    let me = Browser::signed_in(&s, &s.key);
    let page = me.get("/dashboard").await;
    assert_eq!(page.headers[header::CACHE_CONTROL], "no-store");
    let csp = page.headers[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap();
    assert!(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"));
    assert!(
        page.headers[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let attr = |prefix: &str| -> String {
        let start = page.body.find(prefix).expect(prefix) + prefix.len();
        page.body[start..].split('"').next().unwrap().to_owned()
    };
    let htmx = attr(r#"<script src=""#);
    let css = attr(r#"<link rel="stylesheet" href=""#);
    assert_eq!(htmx, "/dashboard/assets/htmx-2.0.11.min.js");
    assert!(css.starts_with("/dashboard/assets/dashboard-") && css.ends_with(".css"));

    let anon = Browser::new(&s);
    for (path, kind, marker) in [
        (htmx.as_str(), "text/javascript", "htmx"),
        (css.as_str(), "text/css", "prefers-color-scheme"),
    ] {
        let a = anon.get(path).await;
        assert_eq!(a.status, StatusCode::OK, "{path}");
        assert!(
            a.headers[header::CONTENT_TYPE]
                .to_str()
                .unwrap()
                .starts_with(kind)
        );
        assert_eq!(
            a.headers[header::CACHE_CONTROL],
            "public, max-age=31536000, immutable"
        );
        assert!(a.body.contains(marker));
        let etag = a.headers[header::ETAG].clone();
        let again = anon
            .send(
                anon.http
                    .get(s.url(path))
                    .header(header::IF_NONE_MATCH, etag),
            )
            .await;
        assert_eq!(again.status, StatusCode::NOT_MODIFIED);
    }
    let missing = anon.get("/dashboard/assets/evil.js").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
}

/// The key's scope holds on the dashboard as on the API: no `read`, no
/// sign-in; only the queues its patterns match are shown (another one is
/// not found); a change needs `admin`.
async fn a_scoped_key_sees_its_queues_and_changes_need_admin(b: Backend) {
    let s = TestServer::start(b).await;
    s.publish("exports-daily", json!(1)).await;
    s.publish("billing", json!(2)).await;

    let publisher = s.scoped_key("alpha", "publish", "*").await;
    let refused = Browser::new(&s)
        .post_form("/dashboard/signin", &[("api_key", &publisher)])
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert_eq!(refused.set_cookie(), "", "no cookie for a key without read");
    refused.has("may not read");
    let page = Browser::signed_in(&s, &publisher).get("/dashboard").await;
    assert_eq!(page.status, StatusCode::FORBIDDEN);

    let reader = s.scoped_key("alpha", "read", "exports-*").await;
    let me = Browser::signed_in(&s, &reader);
    let overview = me.get("/dashboard").await;
    assert_eq!(overview.status, StatusCode::OK);
    overview.has("exports-daily").lacks("billing");
    me.get_htmx("/dashboard/live/queues")
        .await
        .has("exports-daily")
        .lacks("billing");
    assert_eq!(
        me.get("/dashboard/queues/billing").await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        me.get("/dashboard/queues/exports-daily").await.status,
        StatusCode::OK
    );
    let purge = me
        .post_form(
            "/dashboard/queues/exports-daily/purge",
            &[("confirm", "exports-daily")],
        )
        .await;
    assert_eq!(purge.status, StatusCode::FORBIDDEN);
    purge.has("admin");
    assert_eq!(
        me.post_htmx("/dashboard/queues/exports-daily/dlq/redrive")
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(s.stats("exports-daily").await["message_count"], 1);

    let admin = s.scoped_key("alpha", "admin,read", "exports-*").await;
    let ok = Browser::signed_in(&s, &admin)
        .post_form(
            "/dashboard/queues/exports-daily/purge",
            &[("confirm", "exports-daily")],
        )
        .await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER);
    assert_eq!(s.stats("exports-daily").await["message_count"], 0);
    let billing_purge = Browser::signed_in(&s, &admin)
        .post_form("/dashboard/queues/billing/purge", &[("confirm", "billing")])
        .await;
    assert_eq!(billing_purge.status, StatusCode::NOT_FOUND);
    assert_eq!(s.stats("billing").await["message_count"], 1);
}

/// A change to dead letters reads the DLQ, so, as on the API, the key's
/// patterns must match the DLQ too: an admin key for `jobs` alone may
/// neither redrive nor delete what sits in `jobs-dlq`.
async fn dead_letter_changes_need_the_dlq_in_the_key_patterns(b: Backend) {
    let s = TestServer::start(b).await;
    let dead = dead_letter(&s, "jobs", json!({"n": 1})).await;
    let narrow = s.scoped_key("alpha", "admin,read", "jobs").await;
    let me = Browser::signed_in(&s, &narrow);
    for path in [
        "/dashboard/queues/jobs/dlq/redrive".to_owned(),
        format!("/dashboard/queues/jobs/dlq/{dead}/redrive"),
        format!("/dashboard/queues/jobs/dlq/{dead}/delete"),
    ] {
        let refused = me.post_htmx(&path).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{path}");
        refused.has("jobs-dlq");
    }
    assert_eq!(s.stats("jobs").await["dead_lettered"], 1);

    let wide = s.scoped_key("alpha", "admin,read", "jobs*").await;
    let ok = Browser::signed_in(&s, &wide)
        .post_htmx(&format!("/dashboard/queues/jobs/dlq/{dead}/redrive"))
        .await;
    assert_eq!(ok.status, StatusCode::OK);
    assert_eq!(s.stats("jobs").await["dead_lettered"], 0);
}

/// Push subscriptions show on their queue's page, without their secret.
async fn queue_page_lists_push_subscriptions_without_secrets(b: Backend) {
    let s = TestServer::start(b).await;
    s.post("/v1/queue/create", json!({"name": "jobs"}))
        .await
        .ok();
    let me = Browser::signed_in(&s, &s.key);
    me.get("/dashboard/queues/jobs")
        .await
        .lacks("Push subscriptions");
    let r = s
        .post(
            "/v1/queue/push_subscribe/jobs",
            json!({"url": "https://hooks.example.com/jobs", "secret": "whsec_do_not_show", "max_in_flight": 3}),
        )
        .await;
    r.ok();
    let id = r.data()["subscription_id"].as_str().unwrap().to_owned();
    me.get("/dashboard/queues/jobs")
        .await
        .has("Push subscriptions")
        .has(&id)
        .has("https://hooks.example.com/jobs")
        .lacks("whsec_do_not_show");
}

/// A key's rate limit holds on its dashboard pages as on its API calls:
/// past the burst, 429 with Retry-After, until the clock gives tokens back.
async fn the_dashboard_keeps_the_keys_rate_limit(b: Backend) {
    let config = TestServer::manual_sync(onceq_server::ServerConfig {
        key_rate: Some(onceq_store::RateLimit {
            per_sec: 1.0,
            burst: 2,
        }),
        ..onceq_server::ServerConfig::default()
    });
    let s = TestServer::start_with(b, config).await;
    let browser = Browser::signed_in(&s, &s.key);
    for _ in 0..2 {
        assert_eq!(browser.get("/dashboard").await.status, StatusCode::OK);
    }
    let refused = browser.get("/dashboard").await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(refused.headers["retry-after"], "1");
    refused.has("Too many requests.");
    // The API and the dashboard draw on one bucket.
    s.get("/v1/queue/list").await.err(429, "RATE_LIMITED");
    s.clock.advance(jiff::SignedDuration::from_secs(1));
    assert_eq!(browser.get("/dashboard").await.status, StatusCode::OK);
}
