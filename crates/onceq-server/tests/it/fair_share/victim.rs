//! The victim project (beta) of `all_at_once`: an ordinary tenant with a
//! work queue it publishes to, consumes from and reads the stats of, a push
//! subscription and a webhook at receivers that answer at once, an
//! every-second cron schedule, and a dashboard tab on its overview. One
//! [`Victim::measure`] call times each of these `rounds` times, the same
//! way whether the server is quiet or a hostile project is at it.

use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};
use serde_json::json;

use super::figures::Samples;
use crate::{dashboard::Browser, harness::TestServer, push::receiver::Receiver};

/// The longest the victim waits for one delivery or run before it counts
/// it as this late (past any bound, so the check then fails with figures
/// rather than a timeout).
const GIVE_UP: Duration = Duration::from_secs(60);
/// The cron ticks a phase measures the schedule's lateness at.
const CRON_TICKS: usize = 5;

/// The victim's latencies in one phase.
#[derive(Debug, Default)]
pub struct Phase {
    pub publish: Samples,
    pub consume: Samples,
    pub stats: Samples,
    pub dashboard: Samples,
    /// From publish to the push receiver having the message.
    pub push: Samples,
    /// From a queue's create to the webhook receiver having its
    /// `queue.created` event.
    pub webhook: Samples,
    /// How late each tick was fired (by its run, or the run that covered
    /// it when it was skipped).
    pub cron: Samples,
}

pub struct Victim<'a> {
    s: &'a TestServer,
    tab: Browser<'a>,
    hooks: Receiver,
    pushed: Receiver,
    cron_id: String,
    /// Messages published to the push queue so far.
    sent: usize,
    /// Set once a delivery or event took [`GIVE_UP`]: the later ones of
    /// the phase count as that late without waiting (a run with a cap
    /// lifted ends in a minute, with figures, not in twelve).
    starved: Starved,
}

/// Which outbound path took [`GIVE_UP`] in this phase.
#[derive(Default)]
struct Starved {
    push: bool,
    webhook: bool,
}

impl<'a> Victim<'a> {
    /// Sets the victim up and sends one event and one push delivery, so the
    /// first measured ones find the listeners and connections warm.
    pub async fn start(s: &'a TestServer) -> Self {
        let key = &s.other_key;
        let hooks = Receiver::answering(204).await;
        let pushed = Receiver::answering(200).await;
        for name in ["work", "pushed", "ticks"] {
            s.post_as(key, "/v1/queue/create", json!({"name": name}))
                .await
                .ok();
        }
        s.post_as(
            key,
            "/v1/queue/push_subscribe/pushed",
            json!({"url": pushed.url("/pushed"), "secret": crate::push::SECRET}),
        )
        .await
        .ok();
        s.post_as(
            key,
            "/v1/account/webhooks/register",
            json!({"url": hooks.url("/hook"), "events": ["queue.created"], "secret": crate::push::SECRET}),
        )
        .await
        .ok();
        let job = s
            .post_as(
                key,
                "/v1/cron/create",
                json!({"queue": "ticks", "cron_expr": "* * * * * *", "payload": {"tick": true}}),
            )
            .await;
        job.ok();
        let mut victim = Self {
            s,
            tab: Browser::signed_in(s, key),
            hooks,
            pushed,
            cron_id: job.data()["job_id"].as_str().unwrap().to_owned(),
            sent: 0,
            starved: Starved::default(),
        };
        victim.webhook_event("z-warm-up").await;
        victim.push_delivery().await;
        victim
    }

    /// Times each operation `rounds` times, then waits for enough cron runs
    /// ticked since the phase began and takes their lateness.
    pub async fn measure(&mut self, phase: &str, rounds: usize) -> Phase {
        let from = Timestamp::now();
        self.starved = Starved::default();
        let mut p = Phase::default();
        for i in 0..rounds {
            let body = json!({"queue": "work", "payload": {"phase": phase, "i": i}});
            p.publish
                .push(self.timed_post("/v1/queue/publish", body).await);
            let body = json!({"queue": "work", "max_messages": 1, "visibility_timeout": 3600});
            p.consume
                .push(self.timed_post("/v1/queue/consume", body).await);
            p.stats.push(self.timed_stats().await);
            p.dashboard.push(self.timed_dashboard().await);
            p.push.push(self.push_delivery().await);
            p.webhook
                .push(self.webhook_event(&format!("z-{phase}-{i}")).await);
        }
        p.cron = self.cron_lateness(from).await;
        p
    }

    async fn timed_post(&self, path: &str, body: serde_json::Value) -> Duration {
        let started = Instant::now();
        let r = self.s.post_as(&self.s.other_key, path, body).await;
        let took = started.elapsed();
        r.ok();
        if path.ends_with("consume") {
            let items = r.data()["items"].as_array().unwrap();
            assert_eq!(items.len(), 1, "the victim's consume got its message");
        }
        took
    }

    async fn timed_stats(&self) -> Duration {
        let started = Instant::now();
        let r = self
            .s
            .get_as(&self.s.other_key, "/v1/queue/stats/work")
            .await;
        let took = started.elapsed();
        r.ok();
        took
    }

    async fn timed_dashboard(&self) -> Duration {
        let started = Instant::now();
        let page = self.tab.get("/dashboard").await;
        let took = started.elapsed();
        assert_eq!(page.status, reqwest::StatusCode::OK);
        assert!(
            page.body.contains(r#"id="queue-work""#),
            "the victim's overview shows its queue"
        );
        took
    }

    /// Publishes to the push queue; how long until the receiver has it.
    async fn push_delivery(&mut self) -> Duration {
        let started = Instant::now();
        let body = json!({"queue": "pushed", "payload": {"n": self.sent}});
        self.s
            .post_as(&self.s.other_key, "/v1/queue/publish", body)
            .await
            .ok();
        self.sent += 1;
        if self.starved.push || !self.pushed.arrived_within(self.sent, GIVE_UP).await {
            self.starved.push = true;
            return GIVE_UP;
        }
        started.elapsed()
    }

    /// Creates queue `name` (after `work` by name, so the overview's first
    /// page keeps showing `work`; dead-lettering into `work`, so the
    /// victim's overview stays one page whatever it measured); how long
    /// until its event reached the webhook ([`GIVE_UP`] if it never did:
    /// a late event of an earlier sample is not taken for this one).
    async fn webhook_event(&mut self, name: &str) -> Duration {
        let started = Instant::now();
        let mut waiting_for = self.hooks.seen().len() + 1;
        self.s
            .post_as(
                &self.s.other_key,
                "/v1/queue/create",
                json!({"name": name, "dead_letter_queue": "work"}),
            )
            .await
            .ok();
        let deadline = started + GIVE_UP;
        loop {
            let seen = self.hooks.seen();
            if seen.iter().any(|s| s.json()["data"]["queue"] == name) {
                return started.elapsed();
            }
            waiting_for = waiting_for.max(seen.len() + 1);
            let left = deadline.saturating_duration_since(Instant::now());
            if self.starved.webhook || !self.hooks.arrived_within(waiting_for, left).await {
                self.starved.webhook = true;
                return GIVE_UP;
            }
        }
    }

    /// The lateness of each tick of the schedule at or after `from`, once
    /// [`CRON_TICKS`] have passed: how long after the tick the run that
    /// covers it fired (a tick skipped because the run before it fired
    /// over a second late is covered by the next run, and counts as late
    /// as that one). A tick no run covers within [`GIVE_UP`] counts as
    /// that late.
    async fn cron_lateness(&self, from: Timestamp) -> Samples {
        let first = Timestamp::from_second(from.as_second() + 1).unwrap();
        let ticks: Vec<Timestamp> = (0..CRON_TICKS as i64)
            .map(|n| first + SignedDuration::from_secs(n))
            .collect();
        let last = *ticks.last().unwrap();
        let deadline = Instant::now() + GIVE_UP;
        let runs = loop {
            let runs = self.runs().await;
            if runs.iter().any(|(at, _)| *at >= last) || Instant::now() > deadline {
                break runs;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        let mut lateness = Samples::default();
        for tick in &ticks {
            // The earliest run scheduled at or after the tick covers it.
            let covering = runs.iter().filter(|(at, _)| at >= tick).min();
            let late = match covering {
                Some((_, fired)) => {
                    let late = fired.duration_since(*tick).max(SignedDuration::ZERO);
                    Duration::try_from(late).unwrap()
                }
                None => GIVE_UP,
            };
            lateness.push(late);
        }
        lateness
    }

    /// The schedule's recent runs (its 20 newest): tick and firing time.
    async fn runs(&self) -> Vec<(Timestamp, Timestamp)> {
        let path = format!("/v1/cron/get/{}", self.cron_id);
        let job = self.s.get_as(&self.s.other_key, &path).await;
        job.ok();
        job.data()["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let at = r["scheduled_at"].as_str().unwrap().parse().unwrap();
                let fired = r["fired_at"].as_str().unwrap().parse().unwrap();
                (at, fired)
            })
            .collect()
    }
}
