//! Schema migrations (refinery, `migrations/V*.sql`), run as the store
//! opens its file; and, for [`OpenMode::Existing`], the check that the file
//! is a onceq store before anything is written to it.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use crate::{OpenMode, Result, StoreError};

/// The migrations under `src/sqlite/migrations`, applied by [`run`].
/// A module of its own so refinery's generated `migrations` module does not
/// meet the PostgreSQL backend's.
mod embedded {
    refinery::embed_migrations!("src/sqlite/migrations");
}

/// Applies pending migrations. Two processes opening a fresh file at once
/// (the server and the CLI) can race to apply the same migration; the loser
/// fails on "table already exists", so it tries once more and then finds the
/// migration applied.
pub(super) fn run(conn: &mut Connection, mode: OpenMode) -> Result<()> {
    let runner = embedded::migrations::runner();
    let report = match runner.run(conn) {
        Ok(report) => report,
        Err(first) => {
            tracing::debug!(error = %first, "SQLite migration failed, retrying once");
            runner
                .run(conn)
                .map_err(|e| StoreError::internal(format!("migrating the SQLite schema: {e}")))?
        }
    };
    for m in report.applied_migrations() {
        // The server says what it changed; an admin command stays quiet.
        match mode {
            OpenMode::Create => {
                tracing::info!(
                    version = m.version(),
                    name = m.name(),
                    "sqlite: applied migration"
                )
            }
            OpenMode::Existing => {
                tracing::debug!(
                    version = m.version(),
                    name = m.name(),
                    "sqlite: applied migration"
                )
            }
        }
    }
    Ok(())
}

/// `dir` holds a onceq store: the directory, its `onceq.db`, and in it the
/// migration history and the keys table (what the first migration makes).
/// Read-only, so a file that is not onceq's is left as it was.
pub(super) fn check_existing(dir: &Path, path: &Path) -> Result<()> {
    let refuse = |why: String| {
        Err(StoreError::NotAStore(format!(
            "no onceq store in {}: {why}",
            dir.display()
        )))
    };
    if !dir.is_dir() {
        return refuse("the directory does not exist".into());
    }
    if !path.is_file() {
        return refuse(format!("it has no {}", super::DB_FILE));
    }
    let tables =
        Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).and_then(|conn| {
            conn.query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' \
                 AND name IN ('refinery_schema_history', 'onceq_api_keys')",
                [],
                |r| r.get::<_, i64>(0),
            )
        });
    match tables {
        Ok(2) => Ok(()),
        Ok(_) => refuse(format!("{} has no onceq schema", super::DB_FILE)),
        Err(e) => refuse(format!("{} is not a onceq database ({e})", super::DB_FILE)),
    }
}

#[cfg(test)]
mod tests {
    //! Migration V16: V13's call-ledger rows keep their meaning in the
    //! shared request ledger (the PostgreSQL twin is
    //! `postgres/tests/ledger_v16.rs`).

    #[tokio::test]
    async fn v16_keeps_the_call_ledgers_rows() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = rusqlite::Connection::open(dir.path().join(super::super::DB_FILE)).unwrap();
        super::embedded::migrations::runner()
            .set_target(refinery::Target::Version(15))
            .run(&mut conn)
            .unwrap();
        let s = 1_000_000i64;
        conn.execute_batch(&format!(
            "INSERT INTO onceq_call_ledger (project, capability, key, fingerprint, token,
                 status, body, locked_until, created_at, completed_at, expires_at)
             VALUES ('a b', 'queue.create', 'done', x'{one}', 't1',
                     200, CAST('{{\"ok\":true}}' AS BLOB), NULL, {c}, {d}, {e}),
                    ('p', 'queue.nack', 'busy', x'{two}', 't2',
                     NULL, NULL, {l}, {c}, NULL, {e})",
            one = "01".repeat(32),
            two = "02".repeat(32),
            c = 1000 * s,
            d = 1001 * s,
            l = 1030 * s,
            e = 90_000 * s,
        ))
        .unwrap();
        drop(conn);
        let store = crate::sqlite::SqliteStore::open(dir.path()).await.unwrap();
        crate::rules::ledger::check_v16_rows(&store).await;
    }

    /// Migration V19 counts the entries already kept (`check_v19_counts`;
    /// the PostgreSQL twin is in `postgres/tests/ledger_v16.rs`).
    #[tokio::test]
    async fn v19_counts_the_entries_already_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = rusqlite::Connection::open(dir.path().join(super::super::DB_FILE)).unwrap();
        super::embedded::migrations::runner()
            .set_target(refinery::Target::Version(17))
            .run(&mut conn)
            .unwrap();
        let s = 1_000_000i64;
        let row = |scope: &str, key: &str, fp: &str, body: Option<&str>| {
            let (status, headers, body, lock, done) = match body {
                Some(b) => (
                    "200",
                    "'[]'",
                    format!("CAST('{b}' AS BLOB)"),
                    "NULL".to_owned(),
                    (1001 * s).to_string(),
                ),
                None => (
                    "NULL",
                    "NULL",
                    "NULL".to_owned(),
                    (1030 * s).to_string(),
                    "NULL".to_owned(),
                ),
            };
            format!(
                "('{scope}', '{key}', x'{fp}', 't', {status}, {headers}, {body}, {lock}, {c}, {done}, {e})",
                fp = fp.repeat(32),
                c = 1000 * s,
                e = 90_000 * s,
            )
        };
        conn.execute_batch(&format!(
            "INSERT INTO onceq_request_ledger (scope, key, fingerprint, token, status, headers,
                 body, locked_until, created_at, completed_at, expires_at)
             VALUES {}, {}, {}, {}",
            row("server:3:a b queue.ack", "k1", "01", Some("{\"ok\":true}")),
            row("server:3:a b queue.nack", "k2", "02", None),
            row("server:1:p queue.ack", "k1", "03", Some("xyz")),
            row("1:toolkit GET /x", "k", "04", Some("zzzz")),
        ))
        .unwrap();
        drop(conn);
        let store = crate::sqlite::SqliteStore::open(dir.path()).await.unwrap();
        crate::rules::ledger::check_v19_counts(&store).await;
    }

    use onceq_types::scope::{Action, Actions};

    use super::embedded;
    use super::run;
    use crate::OpenMode;

    /// V17 gives `peek` to the keys that could read payloads through
    /// `read` and take them with `consume`, and to no other (docs/security.md,
    /// "What changes for an existing key"). The same statement runs on
    /// PostgreSQL.
    #[test]
    fn v17_gives_peek_to_read_and_consume_keys_only() {
        let mut conn = rusqlite::Connection::open_in_memory().unwrap();
        embedded::migrations::runner()
            .set_target(refinery::Target::Version(16))
            .run(&mut conn)
            .unwrap();
        conn.execute(
            "INSERT INTO onceq_projects (name, created_at) VALUES ('p', 0)",
            [],
        )
        .unwrap();
        let before = [
            ("k1", "full"),
            ("k2", "full,accounts"),
            ("k3", "consume,read"),
            ("k4", "publish,consume,read,admin"),
            ("k5", "read"),
            ("k6", "read,admin"),
            ("k7", "consume"),
        ];
        for (i, (id, actions)) in before.iter().enumerate() {
            conn.execute(
                "INSERT INTO onceq_api_keys (key_id, project, key_hash, created_at, actions) VALUES (?1, 'p', ?2, 0, ?3)",
                rusqlite::params![id, vec![i as u8; 32], actions],
            )
            .unwrap();
        }
        embedded::migrations::runner().run(&mut conn).unwrap();
        let peek = |id: &str| -> bool {
            let text: String = conn
                .query_row(
                    "SELECT actions FROM onceq_api_keys WHERE key_id = ?1",
                    [id],
                    |r| r.get(0),
                )
                .unwrap();
            Actions::parse(&text).unwrap().allows(Action::Peek)
        };
        for id in ["k1", "k2", "k3", "k4"] {
            assert!(peek(id), "{id} keeps reading payloads");
        }
        for id in ["k5", "k6", "k7"] {
            assert!(!peek(id), "{id} gets no peek");
        }
    }

    /// The statements that write a message's state, as EXPLAINed on a
    /// migrated file: none builds a temporary index (`OpenEphemeral` with
    /// a key, as SQLite codes an IN list of more than two constants). The
    /// state's CHECK built one for every row before V21. (A keyless
    /// temporary table, for RETURNING or a two-pass UPDATE, is another
    /// thing.)
    #[test]
    fn writing_a_state_builds_no_temporary_index() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = super::super::conn::open_writer(&dir.path().join("t.db")).unwrap();
        run(&mut conn, OpenMode::Create).unwrap();
        let statements = [
            ("message_insert", sql!("message_insert")),
            ("message_insert_handed", sql!("message_insert_handed")),
            ("message_hand_back", sql!("message_hand_back")),
            ("message_lease", sql!("message_lease")),
            ("message_promote", sql!("message_promote")),
            ("message_requeue", sql!("message_requeue")),
            ("message_extend", sql!("message_extend")),
        ];
        for (name, text) in statements {
            let mut stmt = conn.prepare(&format!("EXPLAIN {text}")).unwrap();
            let count = stmt.parameter_count();
            let ops: Vec<(String, Option<String>)> = stmt
                .query_map(rusqlite::params_from_iter(vec![None::<i64>; count]), |r| {
                    // P4 is text for a key, a number or NULL otherwise.
                    let p4 = match r.get::<_, rusqlite::types::Value>(5)? {
                        rusqlite::types::Value::Text(t) => Some(t),
                        _ => None,
                    };
                    Ok((r.get(1)?, p4))
                })
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let indexes: Vec<_> = ops
                .iter()
                .filter(|(op, p4)| {
                    op == "OpenEphemeral" && p4.as_deref().is_some_and(|k| k.starts_with("k("))
                })
                .collect();
            assert!(
                indexes.is_empty(),
                "{name} builds a temporary index: {ops:?}"
            );
        }
    }

    /// V21 rewrites the state's CHECK in place: the rows stay, the schema
    /// is reloaded by every connection (one opened before the migration
    /// too), and a state outside the three is still refused.
    #[test]
    fn v21_keeps_the_rows_and_still_refuses_a_bad_state() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let mut conn = super::super::conn::open_writer(&path).unwrap();
        embedded::migrations::runner()
            .set_target(refinery::Target::Version(20))
            .run(&mut conn)
            .unwrap();
        conn.execute_batch(
            "INSERT INTO onceq_projects (name, created_at) VALUES ('p', 0);
             INSERT INTO onceq_queues (project, name, queue_type, max_retries,
                 message_retention_days, visibility_timeout_default, enable_priority, created_at)
             VALUES ('p', 'q', 'standard', 3, 4, 30, 0, 0);
             INSERT INTO onceq_messages (id, queue_id, state, payload, visible_at, created_at)
             VALUES ('m1', 1, 'available', '{}', 0, 0);",
        )
        .unwrap();
        let other = super::super::conn::open_reader(&path).unwrap();
        let before: String = other
            .query_row(
                "SELECT sql FROM sqlite_schema WHERE name = 'onceq_messages'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(before.contains("state IN ("), "{before}");

        embedded::migrations::runner().run(&mut conn).unwrap();
        let after: String = other
            .query_row(
                "SELECT sql FROM sqlite_schema WHERE name = 'onceq_messages'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(!after.contains("state IN ("), "{after}");
        let n: i64 = conn
            .query_row("SELECT count(*) FROM onceq_messages", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1);
        for state in ["available", "delayed"] {
            conn.execute("UPDATE onceq_messages SET state = ?1", [state])
                .unwrap();
        }
        let refused = conn
            .execute("UPDATE onceq_messages SET state = 'gone'", [])
            .unwrap_err();
        assert!(refused.to_string().contains("CHECK"), "{refused}");
        let ok: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok");
    }
}
