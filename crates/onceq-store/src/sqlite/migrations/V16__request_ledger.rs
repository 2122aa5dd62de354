//! Same number as the PostgreSQL V16. The server's call ledger becomes the
//! shared request ledger: the table the toolkit's `SqliteLedger` and the Node
//! package create, made by the very same `schema.sql`, so the server runs
//! the same claim/select/complete/release/purge files as they do
//! (docs/state-machines.md, "A request-ledger entry"). V13's rows move
//! over with their meaning (`ledger_adopt.sql`), and its table goes.

/// refinery's entry point for a Rust migration. (It pastes this file into
/// `migrate.rs`, so paths start from the crate's manifest.)
pub fn migration() -> String {
    [
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../onceq/sql/ledger/sqlite/schema.sql"
        )),
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src/sqlite/sql/ledger_adopt.sql"
        )),
    ]
    .join("\n")
}
