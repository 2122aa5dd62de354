//! `Store::ping` is the server's readiness (`/readyz`): ready means the
//! store can write, not only answer a read. A store whose every write fails
//! must say not-ready, and ready again once it can write.
//!
//! SQLite's case for real: its data directory on a small tmpfs of its own,
//! filled up by a file beside the database, so that every write fails with
//! SQLITE_FULL while reads still answer (the probe of old, a read, said
//! ready). Mounting needs root; without it the test says so and passes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use jiff::{SignedDuration, Timestamp};
use onceq_store::sqlite::SqliteStore;
use onceq_store::{MessagePublish, NewMessage, QueueRef, Store, StoreError};

/// The tmpfs: a few MiB, well above what a fresh store needs.
const SIZE: &str = "size=8m";

/// A tmpfs mounted on a temporary directory, unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    /// `None` when it cannot be mounted (not root, no tmpfs).
    fn mount() -> Option<SmallDisk> {
        let dir = tempfile::tempdir().expect("tempdir");
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", SIZE, "onceq-full-disk-test"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        mounted.then_some(SmallDisk { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills the filesystem with one file, down to the last byte it takes.
    fn fill(&self) -> PathBuf {
        let path = self.path().join("filler");
        let mut file = std::fs::File::create(&path).expect("create the filler");
        for chunk in [1 << 20, 4096, 1] {
            let bytes = vec![0_u8; chunk];
            while file.write_all(&bytes).is_ok() {}
        }
        // What did fit is on the filesystem already (tmpfs has no cache
        // to flush); a failed sync would say nothing new.
        let _ = file.sync_all();
        path
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        // Lazy: a store still open in a failed test must not keep the
        // mount (and the tempdir under it) around.
        let _ = Command::new("umount").arg("-l").arg(self.path()).status();
    }
}

fn now() -> Timestamp {
    Timestamp::from_second(1_900_000_000).unwrap()
}

fn publish(payload: &str) -> MessagePublish {
    MessagePublish {
        queue: QueueRef::new("p", "jobs"),
        messages: vec![NewMessage {
            payload: payload.into(),
            delay: SignedDuration::ZERO,
            priority: 0,
            idempotency_key: None,
            group_id: None,
            headers: None,
            hand_out: None,
        }],
        dedupe_window: SignedDuration::from_hours(24),
        new_queue_completed_retention: 0,
        now: now(),
    }
}

#[tokio::test]
async fn sqlite_that_cannot_write_is_not_ready_until_it_can() {
    let Some(disk) = SmallDisk::mount() else {
        eprintln!("skipped: cannot mount a tmpfs (needs root)");
        return;
    };
    let store = SqliteStore::open(disk.path()).await.expect("open");
    store.message_publish(publish("{}")).await.expect("publish");
    store.ping().await.expect("ready while the disk has room");

    let filler = disk.fill();
    // The premise: the disk is full for this store, every write fails. A
    // publish of a few pages cannot fit.
    let big = format!("\"{}\"", "x".repeat(64 * 1024));
    let stored = store.message_publish(publish(&big)).await;
    assert!(
        matches!(stored, Err(StoreError::Unavailable(_))),
        "a publish on a full disk: {stored:?}"
    );
    // Reads still answer: a read is no readiness probe.
    store.queue_list("p").await.expect("reads on a full disk");
    for _ in 0..3 {
        let pinged = store.ping().await;
        assert!(
            matches!(pinged, Err(StoreError::Unavailable(_))),
            "ready on a full disk: {pinged:?}"
        );
    }

    std::fs::remove_file(filler).expect("remove the filler");
    store
        .ping()
        .await
        .expect("ready again once the disk has room");
    store
        .message_publish(publish(&big))
        .await
        .expect("publish once the disk has room");
    drop(store);
}
