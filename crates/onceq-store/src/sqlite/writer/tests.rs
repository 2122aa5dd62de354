use std::sync::mpsc as std_mpsc;

use super::*;

/// A writer on a fresh database with a table `t`, and a table `child`
/// whose foreign key is checked only at COMMIT: inserting an orphan there
/// succeeds as a statement and makes the group's COMMIT fail.
fn setup(dir: &std::path::Path) -> Writer {
    setup_bounded(dir, crate::DEFAULT_OP_TIMEOUT)
}

/// [`setup`], callers waiting at most `bound`.
fn setup_bounded(dir: &std::path::Path, bound: Duration) -> Writer {
    let conn = super::super::conn::open_writer(&dir.join("t.db")).unwrap();
    conn.execute_batch(
        "CREATE TABLE t (v INTEGER NOT NULL UNIQUE);
         CREATE TABLE child (v INTEGER REFERENCES t (v) DEFERRABLE INITIALLY DEFERRED);",
    )
    .unwrap();
    Writer::spawn(conn, bound).unwrap()
}

fn count(dir: &std::path::Path) -> i64 {
    let conn = Connection::open(dir.join("t.db")).unwrap();
    conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap()
}

/// Holds the thread inside a request until `release` is sent, so the
/// requests sent meanwhile pile up in the channel and form one group.
async fn block(writer: &Writer) -> (std_mpsc::Sender<()>, tokio::task::JoinHandle<Result<()>>) {
    let (release, wait) = std_mpsc::channel::<()>();
    let (started, running) = oneshot::channel();
    let w = writer.clone();
    // A request is `Fn`; this one blocks on its first run only.
    let once = std::sync::Mutex::new(Some((started, wait)));
    let h = tokio::spawn(async move {
        w.run(move |_| {
            if let Some((started, wait)) = once.lock().unwrap().take() {
                started.send(()).unwrap();
                wait.recv().unwrap();
            }
            Ok(())
        })
        .await
    });
    running.await.unwrap();
    (release, h)
}

async fn wait_queued(writer: &Writer, n: usize) {
    while CHANNEL_CAPACITY - writer.jobs.capacity() < n {
        tokio::task::yield_now().await;
    }
}

/// Sends `insert v` requests for each `v`, all queued behind a blocker so
/// they run as one group, and returns their answers in order.
async fn group<F>(writer: &Writer, values: &[i64], f: F) -> Vec<Result<i64>>
where
    F: Fn(&Connection, i64) -> Result<i64> + Send + Sync + Copy + 'static,
{
    let (release, blocker) = block(writer).await;
    let mut handles = Vec::new();
    for &v in values {
        let w = writer.clone();
        handles.push(tokio::spawn(async move {
            w.run(move |tx| {
                tx.execute("INSERT INTO t (v) VALUES (?1)", [v])?;
                f(tx, v)
            })
            .await
        }));
    }
    wait_queued(writer, values.len()).await;
    release.send(()).unwrap();
    blocker.await.unwrap().unwrap();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_request_does_not_sink_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let writer = setup(dir.path());
    let answers = group(&writer, &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], |tx, v| {
        match v {
            // Inserted, then fails: the insert must be undone.
            3 => Err(StoreError::Invalid("no threes".into())),
            // A constraint error from SQLite itself.
            5 => {
                tx.execute("INSERT INTO t (v) VALUES (?1)", [v])?;
                Ok(v)
            }
            7 => panic!("seven"),
            _ => Ok(v),
        }
    })
    .await;
    for (v, r) in answers.into_iter().enumerate() {
        match v {
            3 => assert!(matches!(r, Err(StoreError::Invalid(_))), "{r:?}"),
            5 | 7 => assert!(matches!(r, Err(StoreError::Internal(_))), "{r:?}"),
            _ => assert_eq!(r.unwrap(), v as i64),
        }
    }
    assert_eq!(count(dir.path()), 7);
}

static PLAIN_RUNS: std::sync::Mutex<Vec<i64>> = std::sync::Mutex::new(Vec::new());

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_where_every_request_succeeds_runs_each_once() {
    let dir = tempfile::tempdir().unwrap();
    let writer = setup(dir.path());
    let answers = group(&writer, &[0, 1, 2, 3], |_, v| {
        PLAIN_RUNS.lock().unwrap().push(v);
        Ok(v)
    })
    .await;
    assert_eq!(
        answers.into_iter().map(Result::unwrap).collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    let mut runs = PLAIN_RUNS.lock().unwrap().clone();
    runs.sort();
    assert_eq!(runs, [0, 1, 2, 3], "each request ran once");
    assert_eq!(count(dir.path()), 4);
}

static RUN_ORDER: std::sync::Mutex<Vec<i64>> = std::sync::Mutex::new(Vec::new());

/// The group runs first without savepoints, up to the failure of request
/// 2 (after its insert); that rolls it all back, and it runs again whole,
/// in the same order, with one savepoint per request. Only the second
/// run's effects commit, each once, 2's not at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_request_makes_its_group_run_again_with_savepoints() {
    let dir = tempfile::tempdir().unwrap();
    let writer = setup(dir.path());
    let answers = group(&writer, &[0, 1, 2, 3], |_, v| {
        RUN_ORDER.lock().unwrap().push(v);
        if v == 2 {
            return Err(StoreError::Invalid("no twos".into()));
        }
        Ok(v)
    })
    .await;
    assert!(
        matches!(answers[2], Err(StoreError::Invalid(_))),
        "{answers:?}"
    );
    for v in [0, 1, 3] {
        assert_eq!(*answers[v].as_ref().unwrap(), v as i64);
    }
    // The order the requests joined the group in is the channel's.
    let order = RUN_ORDER.lock().unwrap().clone();
    let first = order.iter().position(|&v| v == 2).unwrap() + 1;
    let (plain, careful) = order.split_at(first);
    let mut all = careful.to_vec();
    all.sort();
    assert_eq!(
        all,
        [0, 1, 2, 3],
        "{order:?}: the second run runs every request"
    );
    assert_eq!(&careful[..first], plain, "{order:?}: in the same order");
    let conn = Connection::open(dir.path().join("t.db")).unwrap();
    let kept: Vec<i64> = conn
        .prepare("SELECT v FROM t ORDER BY v")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|v| v.unwrap())
        .collect();
    assert_eq!(kept, [0, 1, 3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_commit_fails_the_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let writer = setup(dir.path());
    let answers = group(&writer, &[1, 2, 3], |tx, v| {
        if v == 2 {
            // Passes now, fails the COMMIT.
            tx.execute("INSERT INTO child (v) VALUES (42)", [])?;
        }
        Ok(v)
    })
    .await;
    for r in answers {
        assert!(matches!(r, Err(StoreError::Internal(_))), "{r:?}");
    }
    assert_eq!(count(dir.path()), 0);
    // The thread goes on: the next group commits.
    let r = writer
        .run(|tx| Ok(tx.execute("INSERT INTO t (v) VALUES (1)", [])?))
        .await;
    assert_eq!(r.unwrap(), 1);
    assert_eq!(count(dir.path()), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_come_after_commit() {
    let dir = tempfile::tempdir().unwrap();
    let writer = setup(dir.path());
    let mut handles = Vec::new();
    for v in 0..50_i64 {
        let w = writer.clone();
        let path = dir.path().join("t.db");
        handles.push(tokio::spawn(async move {
            w.run(move |tx| Ok(tx.execute("INSERT INTO t (v) VALUES (?1)", [v])?))
                .await
                .unwrap();
            // Another connection sees the row as soon as we are answered.
            let conn = Connection::open(path).unwrap();
            let n: i64 = conn
                .query_row("SELECT count(*) FROM t WHERE v = ?1", [v], |r| r.get(0))
                .unwrap();
            assert_eq!(n, 1);
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    assert_eq!(count(dir.path()), 50);
}

/// A caller that waited out the store timeout behind a stuck group is
/// answered `Unavailable`, and its write is not done afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_that_gave_up_is_answered_and_its_write_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let bound = Duration::from_millis(200);
    let writer = setup_bounded(dir.path(), bound);
    let (release, blocker) = block(&writer).await;
    let started = std::time::Instant::now();
    let r = writer
        .run(|tx| Ok(tx.execute("INSERT INTO t (v) VALUES (1)", [])?))
        .await;
    assert!(matches!(r, Err(StoreError::Unavailable(_))), "{r:?}");
    assert!(started.elapsed() < bound * 5, "{:?}", started.elapsed());
    release.send(()).unwrap();
    // The blocker's own caller may have given up too (it waited as
    // long); its request writes nothing either way.
    let _ = blocker.await.unwrap();
    // The thread goes on, and the abandoned insert never ran.
    let r = writer
        .run(|tx| Ok(tx.execute("INSERT INTO t (v) VALUES (2)", [])?))
        .await;
    assert_eq!(r.unwrap(), 1);
    assert_eq!(count(dir.path()), 1);
}

#[tokio::test]
async fn a_stopped_writer_is_unavailable() {
    // A writer whose thread is gone: its receiving end is dropped.
    let (jobs, rx) = mpsc::channel::<Box<dyn Job>>(1);
    drop(rx);
    let dead = Writer {
        jobs,
        bound: crate::DEFAULT_OP_TIMEOUT,
    };
    let r = dead.run(|_| Ok(())).await;
    assert!(matches!(r, Err(StoreError::Unavailable(_))), "{r:?}");
}
