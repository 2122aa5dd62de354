//! End-to-end tests of the `onceq` binary: the real process, real stores,
//! real HTTP. `process` starts servers; `cli` drives the subcommands;
//! `accounts` the key scopes, rotation and project limits;
//! `compat` runs the seed's Node.js route and worker unchanged against it.

mod accounts;
mod cli;
mod compat;
mod process;
