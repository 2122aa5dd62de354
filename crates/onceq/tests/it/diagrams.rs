//! The crate's drawn diagrams (`src/**/*.mmd`, drawn into the `.svg`
//! beside each by `scripts/diagrams` and embedded in rustdoc) show what
//! their sources say: every state and every transition label of the
//! source is text of the drawing, and the drawing is one line (an HTML
//! block in rustdoc's Markdown ends at a blank line).

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "mmd") {
            out.push(path);
        }
    }
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
    let mut found = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut found,
    );
    assert!(!found.is_empty(), "no .mmd under src/");
    for mmd in found {
        let svg_path = mmd.with_extension("svg");
        let svg = std::fs::read_to_string(&svg_path)
            .unwrap_or_else(|e| panic!("{}: {e}; run scripts/diagrams", svg_path.display()));
        assert!(
            svg.starts_with("<svg") && !svg.trim_end().contains('\n'),
            "{}: not a one-line SVG; run scripts/diagrams",
            svg_path.display()
        );
        let drawn = drawn_text(&svg);
        let source = std::fs::read_to_string(&mmd).unwrap();
        let expected = texts(&source);
        assert!(expected.len() >= 3, "{}: {expected:?}", mmd.display());
        for text in expected {
            let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(
                drawn.contains(&words),
                "{} lacks {words:?} of {}: run scripts/diagrams",
                svg_path.display(),
                mmd.display()
            );
        }
    }
}
