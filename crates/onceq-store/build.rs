//! The statements' `.sql` files, as the backends run them: the same files
//! without their comment lines, written under `OUT_DIR` with the layout they
//! have here (`onceq-store/src/postgres/sql/…`, `onceq/sql/ledger/…`), so
//! the `include_str!` paths between them stay the same.
//!
//! Why: the files explain themselves at length (the claim is 7.5 KB, most of
//! it comments), and the text is paid for on every execution: the
//! statement caches (deadpool's, rusqlite's) hash it to find the prepared
//! statement, 3 % of the server's instructions per job; behind a pooler
//! every execution sends it and PostgreSQL parses it again. Only whole
//! comment lines go: a `--` after code could be inside a string.

use std::{env, fs, path::Path};

/// The folders of statements, relative to `crates/`.
const DIRS: &[&str] = &[
    "onceq-store/src/postgres/sql",
    "onceq-store/src/sqlite/sql",
    "onceq/sql/ledger/postgres",
    "onceq/sql/ledger/sqlite",
];

fn main() {
    let crates = Path::new(&env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"))
        .parent()
        .expect("the crate is in crates/")
        .to_path_buf();
    let out = Path::new(&env::var("OUT_DIR").expect("cargo sets it")).to_path_buf();
    for dir in DIRS {
        let from = crates.join(dir);
        let to = out.join(dir);
        fs::create_dir_all(&to).expect("OUT_DIR is writable");
        println!("cargo:rerun-if-changed={}", from.display());
        for entry in fs::read_dir(&from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
            let path = entry.expect("readable folder").path();
            if path.extension().is_none_or(|e| e != "sql") {
                continue;
            }
            let text =
                fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let name = path.file_name().expect("a file");
            fs::write(to.join(name), without_comment_lines(&text)).expect("OUT_DIR is writable");
        }
    }
}

/// `sql` without its blank lines and the lines that are only a comment.
fn without_comment_lines(sql: &str) -> String {
    let mut kept = String::with_capacity(sql.len());
    for line in sql.lines() {
        let code = line.trim_start();
        if code.is_empty() || code.starts_with("--") {
            continue;
        }
        kept.push_str(line.trim_end());
        kept.push('\n');
    }
    kept
}
