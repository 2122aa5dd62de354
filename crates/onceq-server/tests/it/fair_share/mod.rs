//! The fair-share suite: a hostile project beside a victim project whose
//! calls and runs must stay within a stated bound (docs/security.md, "Fair
//! share"). One file per surface.

mod cron;
mod long_polls;
