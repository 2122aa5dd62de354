//! What keeps the key cache (`crate::key_cache`) exact on the embedded
//! store: a marker file that every onceq process writes after it changes a
//! key, and a polled count of changes for edits made any other way.
//!
//! Other processes write the same database file: `onceq keys revoke` from
//! the CLI while the server runs, or an operator in the sqlite3 shell.
//!
//! - **A change made through onceq** (a `SqliteStore` in any process)
//!   writes fresh random bytes into `keys-changed` in the data directory
//!   once its transaction is over. Every lookup first reads those bytes
//!   (one `pread`, no thread hop: the file is held open) and drops the
//!   cache when they differ from the last ones seen. So a key revoked by
//!   the CLI is refused by the server's next lookup after the command's
//!   call returned, as when every lookup read the database. Without the
//!   marker (it cannot be opened) nothing is cached.
//! - **A change made any other way** moves the count in `onceq_key_changes`
//!   (migration V20's triggers, in the changing transaction), which a
//!   reader polls every [`POLL_EVERY`](crate::key_cache::POLL_EVERY); the
//!   cache answers only within `HEARD_WITHIN` (1.5 s) of the start of the
//!   last poll that answered, so such a change is seen within 1.5 s at
//!   worst, and a store whose reads hang stops answering from memory.
//!
//! The marker's bytes need no fsync: a crash empties the cache anyway, and
//! every process shares the kernel's page cache.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::reader::Readers;
use crate::key_cache::{KeyCache, Watch};
use crate::{KeyRecord, Result};

/// The marker file, in the data directory beside the database.
const MARKER_FILE: &str = "keys-changed";

/// Bytes written to (and compared in) the marker.
type Token = [u8; 16];

/// Key lookups from memory, while the marker and the polled count keep
/// them exact.
#[derive(Debug)]
pub(super) struct Keys {
    cache: Arc<KeyCache>,
    _watch: Watch,
    /// None when the marker cannot be opened: then nothing is cached.
    marker: Option<Marker>,
}

#[derive(Debug)]
struct Marker {
    file: File,
    /// The bytes the last lookup read.
    seen: Mutex<Token>,
}

impl Keys {
    /// The cache of the store at `data_dir/db_file`, polled through
    /// `readers`; polling stops when it is dropped.
    pub(super) fn start(data_dir: &Path, db_file: &Path, readers: Readers) -> Keys {
        let marker = Marker::open(&data_dir.join(MARKER_FILE), db_file)
            .inspect_err(|e| {
                tracing::warn!(
                    error = %e,
                    dir = %data_dir.display(),
                    "sqlite: the key change marker cannot be opened; key lookups stay uncached"
                )
            })
            .ok();
        let (cache, _watch) = KeyCache::polled(move || {
            let readers = readers.clone();
            async move {
                readers
                    .run(|conn| {
                        Ok(conn
                            .prepare_cached(sql!("key_changes"))?
                            .query_row([], |r| r.get::<_, i64>(0))?)
                    })
                    .await
            }
        });
        Keys {
            cache,
            _watch,
            marker,
        }
    }

    /// The key with this hash, from memory or from `read`.
    pub(super) async fn lookup(
        &self,
        key_hash: &[u8],
        read: impl Future<Output = Result<Option<KeyRecord>>>,
    ) -> Result<Option<KeyRecord>> {
        match &self.marker {
            Some(marker) => {
                // Before the cache is asked, so a change that some process
                // finished before this lookup began is never answered from
                // memory.
                marker.check(&self.cache);
                self.cache.lookup(key_hash, read).await
            }
            None => read.await,
        }
    }

    /// This process changed a key (whatever the outcome: a write answered
    /// `Unavailable` may still have committed): its cache is dropped at
    /// once, and every other process's at its next lookup.
    pub(super) fn changed(&self) {
        self.cache.clear();
        if let Some(marker) = &self.marker
            && let Err(e) = marker.file.write_at(uuid::Uuid::new_v4().as_bytes(), 0)
        {
            tracing::warn!(
                error = %e,
                "sqlite: the key change marker cannot be written; another process sees the change within 1.5 s"
            );
        }
    }

    /// Whether lookups are being served from memory (for tests).
    #[cfg(test)]
    pub(super) fn is_live(&self) -> bool {
        self.cache.is_live()
    }
}

impl Marker {
    /// Opens (creating if needed) the marker at `path`, as open to others
    /// as the database file is: a process that may change the keys must be
    /// able to write it.
    fn open(path: &Path, db_file: &Path) -> std::io::Result<Marker> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        let db_mode = std::fs::metadata(db_file)?.permissions();
        // Only a file this process owns can be re-permissioned; one made by
        // another user keeps the mode that user gave it.
        let _ = file.set_permissions(db_mode);
        Ok(Marker {
            file,
            seen: Mutex::default(),
        })
    }

    /// Clears `cache` if the marker's bytes changed since the last look (or
    /// cannot be read). Under the lock of `seen`: a lookup that finds them
    /// unchanged waits for the one that saw them change to have cleared.
    fn check(&self, cache: &KeyCache) {
        let mut now = Token::default();
        let read = self.file.read_at(&mut now, 0);
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if read.is_err() || *seen != now {
            cache.clear();
            *seen = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::super::{DB_FILE, SqliteStore};
    use crate::key_cache::HEARD_WITHIN;
    use crate::test_support::{eventually, key};
    use crate::{RateLimit, Store};

    const ONE: [u8; 32] = [1; 32];

    /// A store on `dir` whose cache answers (its first poll has vouched).
    async fn serving(dir: &std::path::Path) -> SqliteStore {
        let store = SqliteStore::open(dir).await.unwrap();
        eventually("the change count is polled", async || store.keys.is_live()).await;
        store
    }

    /// A plain connection to the store's file, for changes behind onceq's
    /// back (as an operator's sqlite3 shell would make them).
    fn raw(dir: &std::path::Path) -> rusqlite::Connection {
        let conn = rusqlite::Connection::open(dir.join(DB_FILE)).unwrap();
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .unwrap();
        conn
    }

    /// Revokes key "one" behind onceq's back and without moving the change
    /// count (its trigger dropped): a store that still finds the key
    /// afterwards answered from memory.
    fn revoke_unseen(dir: &std::path::Path) {
        raw(dir)
            .execute_batch(
                "DROP TRIGGER onceq_keys_updated;
                 UPDATE onceq_api_keys SET revoked_at = 1 WHERE key_id = 'one';",
            )
            .unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_change_made_by_another_process_is_seen_at_once() {
        let dir = tempfile::tempdir().unwrap();
        // The CLI and the server: two stores, each with its cache and its
        // connections, on one file.
        let cli = SqliteStore::open(dir.path()).await.unwrap();
        cli.key_insert(key("one", 1)).await.unwrap();
        let server = serving(dir.path()).await;
        assert!(server.key_lookup(&ONE).await.unwrap().is_some());

        let rate = RateLimit {
            per_sec: 5.0,
            burst: 10,
        };
        assert!(cli.key_set_rate("one", Some(rate)).await.unwrap());
        let found = server.key_lookup(&ONE).await.unwrap().unwrap();
        assert_eq!(found.rate, Some(rate), "a new rate was missed");

        assert!(cli.key_revoke("one", key("one", 1).now).await.unwrap());
        assert!(
            server.key_lookup(&ONE).await.unwrap().is_none(),
            "a key revoked by another process was still accepted"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn found_keys_are_answered_from_memory() {
        let dir = tempfile::tempdir().unwrap();
        let server = serving(dir.path()).await;
        server.key_insert(key("one", 1)).await.unwrap();
        assert!(server.key_lookup(&ONE).await.unwrap().is_some());
        revoke_unseen(dir.path());
        assert!(
            server.key_lookup(&ONE).await.unwrap().is_some(),
            "the second lookup read the database"
        );
        // Its own change drops what this process cached.
        assert!(!server.key_revoke("one", key("one", 1).now).await.unwrap());
        assert!(server.key_lookup(&ONE).await.unwrap().is_none());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_change_made_outside_onceq_is_seen_within_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let server = serving(dir.path()).await;
        server.key_insert(key("one", 1)).await.unwrap();
        assert!(server.key_lookup(&ONE).await.unwrap().is_some());
        // No marker written: only the change count moves.
        raw(dir.path())
            .execute(
                "UPDATE onceq_api_keys SET revoked_at = 1 WHERE key_id = 'one'",
                [],
            )
            .unwrap();
        let since = Instant::now();
        tokio::time::sleep_until((since + HEARD_WITHIN).into()).await;
        assert!(
            server.key_lookup(&ONE).await.unwrap().is_none(),
            "a key revoked in the sqlite3 shell still worked {HEARD_WITHIN:?} later"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn without_a_marker_nothing_is_cached() {
        let dir = tempfile::tempdir().unwrap();
        // A directory where the marker should be: it cannot be opened.
        std::fs::create_dir(dir.path().join(super::MARKER_FILE)).unwrap();
        let server = SqliteStore::open(dir.path()).await.unwrap();
        server.key_insert(key("one", 1)).await.unwrap();
        eventually("the change count is polled", async || server.keys.is_live()).await;
        assert!(server.key_lookup(&ONE).await.unwrap().is_some());
        revoke_unseen(dir.path());
        assert!(server.key_lookup(&ONE).await.unwrap().is_none());
    }
}
