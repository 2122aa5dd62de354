//! The crate's drawn diagrams show what their sources say. Each is drawn
//! once, as a Mermaid block in docs/state-machines.md marked
//! `<!-- drawn: <svg path> (scripts/diagrams) -->`; `scripts/diagrams`
//! renders it into that `.svg`, which rustdoc embeds. Every state and
//! every transition label of the block is text of the drawing, and the
//! drawing is one line (an HTML block in rustdoc's Markdown ends at a
//! blank line).

use std::path::{Path, PathBuf};

/// The marked blocks of docs/state-machines.md: (drawing, Mermaid source).
fn sources(root: &Path) -> Vec<(PathBuf, String)> {
    let doc = std::fs::read_to_string(root.join("docs/state-machines.md")).unwrap();
    let mut found = Vec::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        let Some(rest) = line.strip_prefix("<!-- drawn: ") else {
            continue;
        };
        let svg = rest.split_whitespace().next().unwrap();
        assert_eq!(
            lines.next(),
            Some("```mermaid"),
            "{svg}: no block after its mark"
        );
        let block: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
        found.push((root.join(svg), block.join("\n")));
    }
    found
}

/// The states and labels of a `stateDiagram-v2`: `a --> b: label` lines.
fn texts(mmd: &str) -> Vec<String> {
    let mut texts = Vec::new();
    for line in mmd.lines().map(str::trim) {
        let Some((from, rest)) = line.split_once("-->") else {
            continue;
        };
        let (to, label) = rest.split_once(':').unwrap_or((rest, ""));
        for t in [from, to, label] {
            let t = t.trim();
            if !t.is_empty() && t != "[*]" {
                texts.push(t.to_owned());
            }
        }
    }
    texts
}

/// The drawing's text, tags dropped and entities decoded, words joined
/// by single spaces (the renderer wraps long labels over several lines).
fn drawn_text(svg: &str) -> String {
    let mut text = String::new();
    let mut in_tag = false;
    for c in svg.chars() {
        match c {
            '<' => {
                in_tag = true;
                text.push(' ');
            }
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn drawings_match_their_sources() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let found = sources(&root);
    assert!(
        !found.is_empty(),
        "no marked block in docs/state-machines.md"
    );
    for (svg_path, source) in found {
        let svg = std::fs::read_to_string(&svg_path)
            .unwrap_or_else(|e| panic!("{}: {e}; run scripts/diagrams", svg_path.display()));
        assert!(
            svg.starts_with("<svg") && !svg.trim_end().contains('\n'),
            "{}: not a one-line SVG; run scripts/diagrams",
            svg_path.display()
        );
        let drawn = drawn_text(&svg);
        let expected = texts(&source);
        assert!(expected.len() >= 3, "{}: {expected:?}", svg_path.display());
        for text in expected {
            let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(
                drawn.contains(&words),
                "{} lacks {words:?} of its block in docs/state-machines.md: run scripts/diagrams",
                svg_path.display(),
            );
        }
    }
}
