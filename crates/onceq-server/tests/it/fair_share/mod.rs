//! The fair-share suite: a hostile project beside a victim project whose
//! calls and runs must stay within a stated bound (docs/security.md, "Fair
//! share" and "Outbound deliveries"), on both stores. One file per
//! surface, and `all_at_once` with every surface together against the
//! victim's own unloaded figures (its two sides in `hostile` and
//! `victim`, its bounds in `figures`).

mod all_at_once;
mod cron;
mod figures;
mod hostile;
mod ledger_storage;
mod long_polls;
mod tarpit_receivers;
mod victim;
