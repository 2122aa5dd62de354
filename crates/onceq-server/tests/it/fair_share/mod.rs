//! The fair-share suite: a hostile project beside a victim project, on
//! both stores; the victim's calls must be served as if alone.

mod ledger_storage;
