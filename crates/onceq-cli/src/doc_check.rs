//! docs/configuration.md and docs/cli.md checked against the clap
//! definitions (issue 28): a flag or environment variable added to a
//! command without its line in the docs fails here. The expected lines
//! come from walking [`Cli::command()`](crate::commands::Cli), never from a
//! list copied into this test.
//!
//! - `serve`: every flag has its row in configuration.md's flag table
//!   (`` | `--flag` | `ENV` | … ``), with its environment variable.
//! - every other command (`queue create`, `webhooks register`, …): each of
//!   its flags is named (`--flag`) in a table row for that command in
//!   configuration.md or cli.md, or in the prose of the cli.md section
//!   holding its row; its environment variables appear in
//!   configuration.md.
//! - the commands that talk to a server (they take `--url`, `--api-key`,
//!   `--json`) are all in configuration.md's list of them.

use clap::{Arg, Command, CommandFactory};

use crate::commands::Cli;

fn doc(name: &str) -> String {
    let path = format!("{}/../../docs/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every leaf command with its path (`["queue", "create"]`).
fn leaves(cmd: &Command, path: Vec<String>, out: &mut Vec<(Vec<String>, Command)>) {
    let subs: Vec<&Command> = cmd
        .get_subcommands()
        .filter(|c| c.get_name() != "help")
        .collect();
    if subs.is_empty() {
        out.push((path, cmd.clone()));
        return;
    }
    for sub in subs {
        let mut p = path.clone();
        p.push(sub.get_name().to_owned());
        leaves(sub, p, out);
    }
}

fn all_leaves() -> Vec<(Vec<String>, Command)> {
    let mut cli = Cli::command();
    cli.build();
    let mut out = Vec::new();
    leaves(&cli, Vec::new(), &mut out);
    out
}

/// The flags a user types: long names, with help and version left out.
fn flags(cmd: &Command) -> Vec<&Arg> {
    cmd.get_arguments()
        .filter(|a| a.get_long().is_some())
        .filter(|a| !matches!(a.get_long(), Some("help" | "version")))
        .collect()
}

fn env_of(a: &Arg) -> Option<String> {
    a.get_env().map(|e| e.to_string_lossy().into_owned())
}

/// Whether `text` names `--flag` (not a longer flag it is a prefix of).
fn names_flag(text: &str, flag: &str) -> bool {
    let needle = format!("--{flag}");
    text.match_indices(&needle).any(|(at, _)| {
        let next = text[at + needle.len()..].chars().next();
        !matches!(next, Some(c) if c.is_ascii_alphanumeric() || c == '-' || c == '_')
    })
}

/// Table rows of `text` as (first cell, whole line, the line's index).
fn rows(text: &str) -> Vec<(String, String, usize)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with('|') && !l.starts_with("|---"))
        .map(|(i, l)| {
            let first = l.trim_matches('|').split(" | ").next().unwrap_or("").trim();
            (first.to_owned(), l.to_owned(), i)
        })
        .collect()
}

/// Whether a row's first cell names command `path` (`` `queue create NAME` ``,
/// `` `queue pause NAME` / `queue resume NAME` ``).
fn names_command(first: &str, path: &str) -> bool {
    first
        .split('`')
        .skip(1)
        .step_by(2)
        .any(|t| t == path || t.starts_with(&format!("{path} ")))
}

/// The lines of the `##` section of `text` that holds line `at`.
fn section_around(text: &str, at: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let heading = |l: &&str| l.starts_with("## ");
    let start = lines[..=at].iter().rposition(heading).unwrap_or(0);
    let end = lines[at..]
        .iter()
        .position(heading)
        .map(|p| at + p)
        .unwrap_or(lines.len());
    lines[start..end].join("\n")
}

#[test]
fn configuration_md_lists_every_serve_flag_with_its_variable() {
    let config = doc("configuration.md");
    let table = rows(&config);
    let (_, serve) = all_leaves()
        .into_iter()
        .find(|(p, _)| p == &["serve"])
        .expect("serve");
    let mut missing = Vec::new();
    for a in flags(&serve) {
        let long = a.get_long().unwrap();
        let row = table
            .iter()
            .find(|(first, _, _)| *first == format!("`--{long}`"));
        match (row, env_of(a)) {
            (None, _) => missing.push(format!("--{long}: no row")),
            (Some((_, line, _)), Some(env)) if !line.contains(&format!("`{env}`")) => {
                missing.push(format!("--{long}: its row lacks `{env}`"))
            }
            _ => {}
        }
    }
    assert!(
        missing.is_empty(),
        "docs/configuration.md's serve table: {missing:?}"
    );
}

#[test]
fn every_command_flag_is_documented() {
    let config = doc("configuration.md");
    let cli = doc("cli.md");
    // Documented once for every client command (configuration.md's list
    // of them, checked below) and as a global flag.
    let server_flags = ["url", "api-key", "json", "log-format"];
    let leaves = all_leaves();
    // The store's flags (`keys`, `projects`) are `serve`'s, with their
    // rows in its table (checked above).
    let serve: Vec<(String, Option<String>)> = leaves
        .iter()
        .find(|(p, _)| p == &["serve"])
        .map(|(_, c)| {
            flags(c)
                .into_iter()
                .map(|a| (a.get_long().unwrap().to_owned(), env_of(a)))
                .collect()
        })
        .expect("serve");
    let mut missing = Vec::new();
    for (path, cmd) in leaves {
        if path == ["serve"] {
            continue;
        }
        let path = path.join(" ");
        // The rows naming the command, and the cli.md sections holding them.
        let mut text = String::new();
        for (doc_text, is_cli) in [(&config, false), (&cli, true)] {
            for (first, line, at) in rows(doc_text) {
                if names_command(&first, &path) {
                    text.push_str(&line);
                    text.push('\n');
                    if is_cli {
                        text.push_str(&section_around(doc_text, at));
                    }
                }
            }
        }
        if text.is_empty() {
            missing.push(format!("`{path}`: no row in configuration.md or cli.md"));
            continue;
        }
        for a in flags(&cmd) {
            let long = a.get_long().unwrap();
            let of_serve = serve.contains(&(long.to_owned(), env_of(a)));
            if server_flags.contains(&long) || of_serve {
                continue;
            }
            if !names_flag(&text, long) {
                missing.push(format!("`{path}` --{long}"));
            }
            if let Some(env) = env_of(a)
                && !config.contains(&format!("`{env}`"))
            {
                missing.push(format!(
                    "`{path}` --{long}: `{env}` not in configuration.md"
                ));
            }
        }
    }
    assert!(missing.is_empty(), "undocumented: {missing:#?}");
}

#[test]
fn configuration_md_names_every_client_command() {
    let config = doc("configuration.md");
    let list = config
        .lines()
        .filter_map(|l| l.strip_prefix("`onceq ").and_then(|l| l.split('`').next()))
        .find(|l| l.contains('|') && !l.contains(' '))
        .expect("the list of client commands (`onceq publish|consume|…`)");
    let named: Vec<&str> = list.split('|').collect();
    let mut missing = std::collections::BTreeSet::new();
    for (path, cmd) in all_leaves() {
        let takes = |long: &str| flags(&cmd).iter().any(|a| a.get_long() == Some(long));
        if takes("url") && takes("api-key") && takes("json") && !named.contains(&path[0].as_str()) {
            missing.insert(path[0].clone());
        }
    }
    assert!(
        missing.is_empty(),
        "docs/configuration.md's `onceq {list}` lacks: {missing:?}"
    );
}
