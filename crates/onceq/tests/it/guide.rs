//! `docs/guide.md`'s dependency block names every crate its Rust blocks
//! use, so a reader who copies it gets a build. (The blocks themselves are
//! compiled by `cargo test --doc`, through `GuideDoctests` in `lib.rs`.)

use std::collections::BTreeSet;

const GUIDE: &str = include_str!("../../../../docs/guide.md");

/// The bodies of the fenced blocks whose info string starts with `lang`.
fn blocks(lang: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in GUIDE.lines() {
        match (&mut current, line.strip_prefix("```")) {
            (None, Some(info)) if info.split(',').next() == Some(lang) => {
                current = Some(String::new())
            }
            (Some(body), Some(_)) => {
                out.push(std::mem::take(body));
                current = None;
            }
            (Some(body), None) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, _) => {}
        }
    }
    out
}

/// Crate names a Rust block uses as a path root (`name::...`), as the
/// manifest spells them (`_` as `-`).
fn crates_used(code: &str) -> BTreeSet<String> {
    const NOT_CRATES: [&str; 5] = ["std", "core", "alloc", "crate", "self"];
    let mut used = BTreeSet::new();
    // A `use` names its crate first; the paths in its braces are inside
    // that crate (`use std::{sync::Arc, ..}`): take the first and drop the
    // statement.
    let mut rest = String::new();
    let mut code = code;
    while let Some(at) = code.find("use ") {
        let starts_item = code[..at]
            .chars()
            .next_back()
            .is_none_or(|c| c.is_whitespace());
        let Some(end) = code[at..].find(';').filter(|_| starts_item) else {
            rest.push_str(&code[..at + 4]);
            code = &code[at + 4..];
            continue;
        };
        rest.push_str(&code[..at]);
        let root = code[at + 4..].split("::").next().unwrap_or_default().trim();
        if !NOT_CRATES.contains(&root) {
            used.insert(root.replace('_', "-"));
        }
        code = &code[at + end + 1..];
    }
    rest.push_str(code);
    let code = rest.as_str();
    let bytes = code.as_bytes();
    for (i, _) in code.match_indices("::") {
        let start = code[..i]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(0, |p| p + 1);
        let name = &code[start..i];
        // A path root: not after another segment (`a::b::`), a lowercase
        // identifier (types and variants are capitalised).
        let after_segment = start >= 2 && &bytes[start - 2..start] == b"::";
        if !after_segment
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && !NOT_CRATES.contains(&name)
        {
            used.insert(name.replace('_', "-"));
        }
    }
    used
}

#[test]
fn the_dependency_block_names_every_crate_the_code_uses() {
    let tomls = blocks("toml");
    let deps = tomls
        .iter()
        .find(|b| b.starts_with("[dependencies]"))
        .expect("the guide has a [dependencies] block");
    let declared: BTreeSet<String> = deps
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once('=').map(|(name, _)| name.trim().to_owned()))
        .collect();
    let rust = blocks("rust");
    assert!(rust.len() >= 4, "the guide's Rust blocks: {}", rust.len());
    let used: BTreeSet<String> = rust.iter().flat_map(|b| crates_used(b)).collect();
    for name in ["onceq", "axum", "async-trait", "tokio-util", "serde-json"] {
        assert!(used.contains(name), "{name} not seen in {used:?}");
    }
    let missing: Vec<&String> = used
        .iter()
        .filter(|u| !declared.contains(*u) && !declared.contains(&u.replace('-', "_")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/guide.md uses {missing:?} but its [dependencies] block does not name them"
    );
}
