//! Same number as the SQLite V16. The server's call ledger becomes the
//! shared request ledger: the table the toolkit's `PgLedger` and the Node
//! package create, made by the very same `schema.sql`, so the server runs
//! the same claim/select/complete/release/purge files as they do
//! (docs/state-machines.md, "A request-ledger entry"). V13's rows move
//! over with their meaning (`ledger_adopt.sql`), and its table goes.
//!
//! The schema is `ledger_schema_v16.sql`, the shared `schema.sql` as it was
//! when this migration shipped, frozen: refinery refuses to start on a
//! database whose applied migration's text has changed (its checksum), and
//! the shared file has changed since (its index is created only when
//! missing, without locking the table: see that file). The table and index
//! it makes are the same.

/// refinery's entry point for a Rust migration. (It pastes this file into
/// `migrate.rs`, so paths start from the crate's manifest.)
pub fn migration() -> String {
    [
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src/postgres/sql/ledger_schema_v16.sql"
        )),
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src/postgres/sql/ledger_adopt.sql"
        )),
    ]
    .join("\n")
}
