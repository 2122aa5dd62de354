//! Cron schedules: insert (and create's own dedupe), get, list, update,
//! pause and resume, delete with their runs, tenancy, the due scan, and the
//! advance that records one run per tick however many firings race it.

use jiff::Timestamp;
use onceq_store::{
    CronAdvance, CronInsert, CronPause, CronRecord, CronRef, CronRunOutcome, CronRunRecord,
    CronSpec, CronTarget, CronUpdate, StoreError,
};
use onceq_types::cron::{OverlapPolicy, RunOutcome};

use crate::Harness;

conformance!(
    cron_insert_get_list_delete,
    cron_insert_dedupes_by_key_per_project,
    cron_is_per_project,
    cron_update_replaces_the_spec,
    cron_pause_hides_from_due_and_resume_sets_the_tick,
    cron_due_is_earliest_first_with_the_next_tick,
    cron_due_takes_projects_in_turns,
    cron_insert_refuses_past_the_project_cap,
    cron_advance_records_one_run_per_tick,
    cron_advance_counts_and_ends,
    cron_runs_keep_the_newest_twenty,
    cron_run_outcome_sets_a_task_result,
    cron_store_refuses_a_job_with_two_whens,
);

conformance!(multi_thread cron_concurrent_advances_of_one_tick_record_one_run);

fn spec(queue: &str) -> CronSpec {
    CronSpec {
        name: Some("nightly".into()),
        cron_expr: Some("0 3 * * *".into()),
        run_at: None,
        timezone: "Europe/Paris".into(),
        target: CronTarget::Queue(queue.into()),
        payload: r#"{"report":"daily"}"#.into(),
        headers: Some(r#"{"x-kind":"cron"}"#.into()),
        max_runs: None,
        overlap_policy: OverlapPolicy::Allow,
    }
}

fn run(at: Timestamp, fired: Timestamp, message: Option<&str>) -> CronRunRecord {
    CronRunRecord {
        scheduled_at: at,
        fired_at: fired,
        message_id: message.map(str::to_owned),
        outcome: if message.is_some() {
            RunOutcome::Published
        } else {
            RunOutcome::Skipped
        },
        error: None,
    }
}

impl Harness {
    fn cron_insert(&self, spec: CronSpec, next: Option<Timestamp>) -> CronInsert {
        CronInsert {
            project: self.project.clone(),
            spec,
            next_run_at: next,
            idempotency_key: None,
            max_per_project: None,
            now: self.now,
        }
    }

    async fn schedule(&self, spec: CronSpec, next: Option<Timestamp>) -> CronRecord {
        let inserted = self
            .store
            .cron_insert(self.cron_insert(spec, next))
            .await
            .expect("cron_insert");
        assert!(inserted.created);
        inserted.job
    }

    fn job(&self, id: &str) -> CronRef {
        CronRef {
            project: self.project.clone(),
            job_id: id.to_owned(),
        }
    }

    async fn cron(&self, id: &str) -> Option<CronRecord> {
        self.store.cron_get(&self.job(id)).await.expect("cron_get")
    }

    async fn due_ids(&self) -> (Vec<String>, Option<Timestamp>) {
        let due = self
            .store
            .cron_due(self.now, 100, 100)
            .await
            .expect("cron_due");
        (
            due.due.into_iter().map(|j| j.job.job_id).collect(),
            due.next_at,
        )
    }

    async fn advance_job(
        &self,
        id: &str,
        scheduled: Timestamp,
        next: Option<Timestamp>,
        message: Option<&str>,
    ) -> bool {
        self.store
            .cron_advance(CronAdvance {
                job_id: id.to_owned(),
                scheduled_at: scheduled,
                next_run_at: next,
                counted: message.is_some(),
                run: run(scheduled, self.now, message),
            })
            .await
            .expect("cron_advance")
    }
}

async fn cron_insert_get_list_delete(h: Harness) {
    let a = h.schedule(spec("reports"), Some(h.t(3600))).await;
    assert!(a.job.job_id.starts_with("cron_"), "{a:?}");
    assert_eq!(a.job.job_id.len(), 5 + 32);
    assert_eq!(a.job.project, h.project);
    assert_eq!(a.spec, spec("reports"));
    assert_eq!(a.next_run_at, Some(h.t(3600)));
    assert_eq!((a.run_count, a.paused), (0, false));
    assert_eq!(a.created_at, h.now);
    assert_eq!(a.last_message_id, None);
    assert!(a.runs.is_empty());

    let mut once = spec("reports");
    once.cron_expr = None;
    once.run_at = Some(h.t(60));
    once.target = CronTarget::Task("https://hooks.example.com/run".into());
    once.name = None;
    once.headers = None;
    once.max_runs = Some(1);
    once.overlap_policy = OverlapPolicy::Skip;
    let b = h.schedule(once.clone(), Some(h.t(60))).await;
    assert_eq!(b.spec, once);

    assert_eq!(h.cron(&a.job.job_id).await.as_ref(), Some(&a));
    let listed: Vec<_> = h.store.cron_list(&h.project).await.unwrap();
    assert_eq!(listed, vec![a.clone(), b.clone()], "oldest first");

    assert!(h.store.cron_delete(&h.job(&a.job.job_id)).await.unwrap());
    assert!(!h.store.cron_delete(&h.job(&a.job.job_id)).await.unwrap());
    assert_eq!(h.cron(&a.job.job_id).await, None);
    assert_eq!(h.store.cron_list(&h.project).await.unwrap(), vec![b]);
}

async fn cron_insert_dedupes_by_key_per_project(h: Harness) {
    let mut p = h.cron_insert(spec("reports"), Some(h.t(60)));
    p.idempotency_key = Some("create-1".into());
    let first = h.store.cron_insert(p.clone()).await.unwrap();
    assert!(first.created);
    // The same key again, even with another spec: the first schedule.
    let mut again = p.clone();
    again.spec.payload = "[1]".into();
    let second = h.store.cron_insert(again).await.unwrap();
    assert!(!second.created);
    assert_eq!(second.job, first.job);
    assert_eq!(h.store.cron_list(&h.project).await.unwrap().len(), 1);
    // Another project's key space is its own.
    let other = h.as_project("proj-b").await;
    let mut theirs = p;
    theirs.project = other.project.clone();
    let third = other.store.cron_insert(theirs).await.unwrap();
    assert!(third.created);
    assert_ne!(third.job.job.job_id, first.job.job.job_id);
}

async fn cron_is_per_project(h: Harness) {
    let a = h.schedule(spec("reports"), Some(h.t(60))).await;
    let other = h.as_project("proj-b").await;
    assert_eq!(other.cron(&a.job.job_id).await, None);
    assert!(
        other
            .store
            .cron_list(&other.project)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        !other
            .store
            .cron_delete(&other.job(&a.job.job_id))
            .await
            .unwrap()
    );
    let pause = CronPause {
        job: other.job(&a.job.job_id),
        paused: true,
        next_run_at: None,
        now: h.now,
    };
    assert_eq!(other.store.cron_pause(pause).await.unwrap(), None);
    let update = CronUpdate {
        job: other.job(&a.job.job_id),
        spec: spec("theirs"),
        next_run_at: None,
        now: h.now,
    };
    assert_eq!(other.store.cron_update(update).await.unwrap(), None);
    assert_eq!(h.cron(&a.job.job_id).await, Some(a));
}

async fn cron_update_replaces_the_spec(mut h: Harness) {
    let a = h.schedule(spec("reports"), Some(h.t(60))).await;
    h.advance(10);
    let mut new = spec("other");
    new.cron_expr = Some("*/5 * * * *".into());
    new.max_runs = Some(3);
    let updated = h
        .store
        .cron_update(CronUpdate {
            job: h.job(&a.job.job_id),
            spec: new.clone(),
            next_run_at: Some(h.t(300)),
            now: h.now,
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(updated.spec, new);
    assert_eq!(updated.next_run_at, Some(h.t(300)));
    assert_eq!(updated.created_at, a.created_at);
    assert_eq!(h.cron(&a.job.job_id).await, Some(updated));
}

async fn cron_pause_hides_from_due_and_resume_sets_the_tick(mut h: Harness) {
    let a = h.schedule(spec("reports"), Some(h.t(60))).await;
    let paused = h
        .store
        .cron_pause(CronPause {
            job: h.job(&a.job.job_id),
            paused: true,
            next_run_at: Some(h.t(999_999)),
            now: h.now,
        })
        .await
        .unwrap()
        .unwrap();
    assert!(paused.paused);
    assert_eq!(paused.next_run_at, Some(h.t(60)), "pause keeps the tick");
    h.advance(120);
    assert_eq!(
        h.due_ids().await,
        (vec![], None),
        "paused: not due, no next"
    );
    let resumed = h
        .store
        .cron_pause(CronPause {
            job: h.job(&a.job.job_id),
            paused: false,
            next_run_at: Some(h.t(180)),
            now: h.now,
        })
        .await
        .unwrap()
        .unwrap();
    assert!(!resumed.paused);
    assert_eq!(resumed.next_run_at, Some(h.t(180)));
    assert_eq!(h.due_ids().await, (vec![], Some(h.t(180))));
}

async fn cron_due_is_earliest_first_with_the_next_tick(mut h: Harness) {
    let late = h.schedule(spec("reports"), Some(h.t(30))).await;
    let early = h.schedule(spec("reports"), Some(h.t(20))).await;
    let future = h.schedule(spec("reports"), Some(h.t(500))).await;
    let _ended = h.schedule(spec("reports"), None).await;
    let other = h.as_project("proj-b").await;
    let theirs = other.schedule(spec("reports"), Some(h.t(25))).await;
    assert_eq!(h.due_ids().await, (vec![], Some(h.t(20))));
    h.advance(30);
    // Due at exactly now counts; every project's schedules are scanned.
    let (due, next) = h.due_ids().await;
    assert_eq!(
        due,
        vec![early.job.job_id, theirs.job.job_id, late.job.job_id]
    );
    assert_eq!(next, future.next_run_at);
    let limited = h.store.cron_due(h.now, 1, 100).await.unwrap();
    assert_eq!(limited.due.len(), 1);
}

async fn cron_advance_records_one_run_per_tick(mut h: Harness) {
    let a = h.schedule(spec("reports"), Some(h.t(60))).await;
    let id = a.job.job_id.clone();
    h.advance(61);
    assert!(
        h.advance_job(&id, h.t(60), Some(h.t(120)), Some("qmsg_1"))
            .await
    );
    // A second firing of the same tick (another server; this one after a
    // crash) changes nothing.
    assert!(
        !h.advance_job(&id, h.t(60), Some(h.t(180)), Some("qmsg_2"))
            .await
    );
    let job = h.cron(&id).await.unwrap();
    assert_eq!(job.next_run_at, Some(h.t(120)));
    assert_eq!(job.run_count, 1);
    assert_eq!(job.last_message_id.as_deref(), Some("qmsg_1"));
    assert_eq!(job.runs, vec![run(h.t(60), h.now, Some("qmsg_1"))]);
    // A skipped run is recorded but neither counted nor remembered as the
    // last message.
    h.advance(60);
    assert!(h.advance_job(&id, h.t(120), Some(h.t(180)), None).await);
    let job = h.cron(&id).await.unwrap();
    assert_eq!(job.run_count, 1);
    assert_eq!(job.last_message_id.as_deref(), Some("qmsg_1"));
    assert_eq!(job.runs[0], run(h.t(120), h.now, None), "newest first");
    assert_eq!(job.runs.len(), 2);
}

async fn cron_advance_counts_and_ends(mut h: Harness) {
    let mut s = spec("reports");
    s.max_runs = Some(2);
    let a = h.schedule(s, Some(h.t(60))).await;
    let id = a.job.job_id;
    h.advance(60);
    assert!(
        h.advance_job(&id, h.t(60), Some(h.t(120)), Some("m1"))
            .await
    );
    h.advance(60);
    assert!(h.advance_job(&id, h.t(120), None, Some("m2")).await);
    let job = h.cron(&id).await.unwrap();
    assert_eq!((job.run_count, job.next_run_at), (2, None));
    h.advance(3600);
    assert_eq!(
        h.due_ids().await,
        (vec![], None),
        "an ended schedule is never due"
    );
}

async fn cron_runs_keep_the_newest_twenty(mut h: Harness) {
    let a = h.schedule(spec("reports"), Some(h.t(1))).await;
    let id = a.job.job_id;
    for i in 1..=25 {
        h.advance(1);
        let m = format!("m{i}");
        assert!(h.advance_job(&id, h.t(i), Some(h.t(i + 1)), Some(&m)).await);
    }
    let job = h.cron(&id).await.unwrap();
    assert_eq!(job.run_count, 25);
    let ticks: Vec<_> = job.runs.iter().map(|r| r.scheduled_at).collect();
    let want: Vec<_> = (6..=25).rev().map(|i| h.t(i)).collect();
    assert_eq!(ticks, want);
}

async fn cron_run_outcome_sets_a_task_result(mut h: Harness) {
    let a = h.schedule(spec("reports"), Some(h.t(60))).await;
    let id = a.job.job_id;
    h.advance(60);
    let set = |h: &Harness, scheduled_at, outcome, error: Option<&str>| CronRunOutcome {
        job_id: id.clone(),
        scheduled_at,
        message_id: "m1".into(),
        now: h.now,
        outcome,
        error: error.map(str::to_owned),
    };
    // After the advance: the recorded run gets the outcome.
    assert!(
        h.advance_job(&id, h.t(60), Some(h.t(120)), Some("m1"))
            .await
    );
    assert!(
        h.store
            .cron_run_outcome(set(&h, h.t(60), RunOutcome::Failed, Some("HTTP 500")))
            .await
            .unwrap()
    );
    let job = h.cron(&id).await.unwrap();
    assert_eq!(job.runs[0].outcome, RunOutcome::Failed);
    assert_eq!(job.runs[0].error.as_deref(), Some("HTTP 500"));
    assert_eq!(job.runs[0].fired_at, h.t(60));
    // Before the advance (the delivery was quicker than the firing server):
    // the run is recorded with the outcome, and the advance fills in its
    // firing and keeps the outcome.
    h.advance(60);
    let delivered_at = h.now;
    assert!(
        h.store
            .cron_run_outcome(set(&h, h.t(120), RunOutcome::Delivered, None))
            .await
            .unwrap()
    );
    h.advance(1);
    assert!(
        h.advance_job(&id, h.t(120), Some(h.t(180)), Some("m2"))
            .await
    );
    let job = h.cron(&id).await.unwrap();
    assert_eq!(job.runs[0].scheduled_at, h.t(120));
    assert_eq!(job.runs[0].outcome, RunOutcome::Delivered);
    assert_eq!(job.runs[0].message_id.as_deref(), Some("m2"));
    assert_eq!(job.runs[0].fired_at, h.now);
    assert_ne!(job.runs[0].fired_at, delivered_at);
    assert_eq!(job.run_count, 2);
    // A schedule that is gone records nothing.
    assert!(h.store.cron_delete(&h.job(&id)).await.unwrap());
    assert!(
        !h.store
            .cron_run_outcome(set(&h, h.t(180), RunOutcome::Delivered, None))
            .await
            .unwrap()
    );
}

async fn cron_store_refuses_a_job_with_two_whens(h: Harness) {
    // The caller checks this; the CHECK constraint holds it too.
    let mut both = spec("reports");
    both.run_at = Some(h.t(60));
    let e = h
        .store
        .cron_insert(h.cron_insert(both, Some(h.t(60))))
        .await
        .unwrap_err();
    assert!(!matches!(e, StoreError::QueueNotFound), "{e:?}");
    assert!(h.store.cron_list(&h.project).await.unwrap().is_empty());
}

async fn cron_concurrent_advances_of_one_tick_record_one_run(mut h: Harness) {
    let a = h.schedule(spec("reports"), Some(h.t(60))).await;
    let id = a.job.job_id;
    h.advance(60);
    // Several firings of one tick at once, on PostgreSQL each through its
    // own store (its own pool), as separate servers would.
    let url = h.postgres_url().map(str::to_owned);
    let mut tasks = Vec::new();
    for i in 0..8 {
        let store = match &url {
            Some(url) if i % 2 == 1 => {
                std::sync::Arc::new(onceq_store::postgres::PgStore::connect(url).await.unwrap())
                    as std::sync::Arc<dyn onceq_store::Store>
            }
            _ => h.store.clone(),
        };
        let p = CronAdvance {
            job_id: id.clone(),
            scheduled_at: h.t(60),
            next_run_at: Some(h.t(120)),
            counted: true,
            run: run(h.t(60), h.now, Some(&format!("m{i}"))),
        };
        tasks.push(tokio::spawn(
            async move { store.cron_advance(p).await.unwrap() },
        ));
    }
    let mut won = 0;
    for t in tasks {
        won += usize::from(t.await.unwrap());
    }
    assert_eq!(won, 1, "exactly one firing advances the tick");
    let job = h.cron(&id).await.unwrap();
    assert_eq!(job.run_count, 1);
    assert_eq!(job.runs.len(), 1);
    assert_eq!(job.runs[0].message_id, job.last_message_id);
}

async fn cron_due_takes_projects_in_turns(mut h: Harness) {
    // The hostile project's five are all older than the victim's one.
    let mut hostile = Vec::new();
    for i in 0..5 {
        hostile.push(
            h.schedule(spec("reports"), Some(h.t(10 + i)))
                .await
                .job
                .job_id,
        );
    }
    let other = h.as_project("proj-b").await;
    let victim = other
        .schedule(spec("reports"), Some(h.t(30)))
        .await
        .job
        .job_id;
    h.advance(60);
    let ids = |due: onceq_store::CronDue| -> Vec<String> {
        due.due.into_iter().map(|j| j.job.job_id).collect()
    };
    // Turn 1: each project's earliest (earliest first); then the rest.
    let due = ids(h.store.cron_due(h.now, 100, 100).await.unwrap());
    let expected: Vec<_> = [hostile[0].clone(), victim.clone()]
        .into_iter()
        .chain(hostile[1..].iter().cloned())
        .collect();
    assert_eq!(due, expected);
    // A scan of two: the victim is in it, not behind the backlog.
    let due = ids(h.store.cron_due(h.now, 2, 100).await.unwrap());
    assert_eq!(due, vec![hostile[0].clone(), victim.clone()]);
    // At most per_project of one project.
    let due = ids(h.store.cron_due(h.now, 100, 2).await.unwrap());
    assert_eq!(due, vec![hostile[0].clone(), victim, hostile[1].clone()]);
}

async fn cron_insert_refuses_past_the_project_cap(h: Harness) {
    let capped = |key: Option<&str>| {
        let mut p = h.cron_insert(spec("reports"), Some(h.t(60)));
        p.max_per_project = Some(2);
        p.idempotency_key = key.map(str::to_owned);
        p
    };
    let first = h.store.cron_insert(capped(Some("k1"))).await.unwrap();
    h.store.cron_insert(capped(None)).await.unwrap();
    let refused = h.store.cron_insert(capped(None)).await.unwrap_err();
    assert!(
        matches!(&refused, StoreError::Invalid(m) if *m == onceq_store::cron_cap_message(&h.project, 2)),
        "{refused:?}"
    );
    assert_eq!(
        h.store.cron_list(&h.project).await.unwrap().len(),
        2,
        "nothing stored"
    );
    // A key naming a schedule is answered with it, even at the cap.
    let again = h.store.cron_insert(capped(Some("k1"))).await.unwrap();
    assert!(!again.created);
    assert_eq!(again.job.job, first.job.job);
    // Another project's cap is its own.
    let other = h.as_project("proj-b").await;
    let mut theirs = capped(None);
    theirs.project = other.project.clone();
    assert!(other.store.cron_insert(theirs).await.unwrap().created);
}
