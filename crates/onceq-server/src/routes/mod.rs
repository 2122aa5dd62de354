//! One module per capability group (push: push subscriptions). Each handler
//! validates its input ([`crate::input`]) into store params, calls the store
//! once, and shapes the answer. Every keyed route runs behind
//! [`crate::guard`].

pub mod account;
pub mod consume;
pub mod discovery;
pub mod health;
pub mod publish;
pub mod push;
pub mod queues;
