//! Progress for long operations: a bar on a terminal, nothing in a pipe.
//!
//! Bars draw on stderr, so stdout stays the command's answer. Whether to
//! draw is decided once, from `std::io::IsTerminal` on stderr; a script
//! piping or redirecting stderr sees no control characters at all.

use std::{io::IsTerminal, time::Duration};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Whether progress is drawn: stderr is a terminal.
pub fn enabled() -> bool {
    std::io::stderr().is_terminal()
}

/// A bar of `len` steps saying `what`, hidden in a pipe.
pub fn bar(len: u64, what: &str) -> ProgressBar {
    if !enabled() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    pb.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({per_sec}, {eta} left)")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_message(what.to_owned());
    pb
}

/// A spinner saying `what`, for a step of unknown length; hidden in a pipe.
pub fn spinner(what: &str) -> ProgressBar {
    if !enabled() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    pb.set_style(
        ProgressStyle::with_template("{spinner} {msg} ({elapsed})").expect("valid template"),
    );
    pb.set_message(what.to_owned());
    pb.enable_steady_tick(Duration::from_millis(100));
    pb
}
