//! The fair-share suite: a hostile project beside a victim project whose
//! calls and runs must stay within a stated bound (docs/security.md, "Fair
//! share"), on both stores. One file per surface.

mod cron;
mod ledger_storage;
mod long_polls;
