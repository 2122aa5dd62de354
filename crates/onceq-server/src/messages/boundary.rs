//! The service boundary, checked: outside `messages/`, no module of the
//! server calls a message operation of the store. The store is private to
//! [`crate::AppState`] (`store()` is its one door), so reading the sources
//! for `store()` followed by a message operation finds every such call,
//! however the chain is wrapped across lines.

use std::path::{Path, PathBuf};

/// The store's operations on messages: their hand-outs, lease endings,
/// removals, moves and reads.
const MESSAGE_OPERATIONS: &[&str] = &[
    "store().message_",
    "store().dlq_",
    "store().finished_",
    "store().queue_purge",
    "store().lease_expire",
];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The message operations `path` calls on the store, by name.
fn calls(path: &Path) -> Vec<String> {
    let text: String = std::fs::read_to_string(path)
        .expect("read source")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    MESSAGE_OPERATIONS
        .iter()
        .flat_map(|op| text.match_indices(op).map(|(at, _)| at))
        .map(|at| {
            let call = &text[at + "store().".len()..];
            call.split(|c: char| !c.is_alphanumeric() && c != '_')
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

#[test]
fn no_route_reaches_messages_but_through_the_service() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let service = src.join("messages");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut outside = Vec::new();
    let mut inside = Vec::new();
    for file in &files {
        for call in calls(file) {
            match file.starts_with(&service) {
                true => inside.push(call),
                false => outside.push(format!("{}: {call}", file.display())),
            }
        }
    }
    assert!(
        outside.is_empty(),
        "message operations called outside crate::messages (go through state.messages()): {outside:#?}"
    );
    // The scan sees calls where they are: the service's own.
    for op in [
        "message_ack_many",
        "message_claim",
        "dlq_redrive_many",
        "lease_expire",
    ] {
        assert!(
            inside.iter().any(|c| c == op),
            "{op} not seen in {inside:?}"
        );
    }
}
