//! One module per capability group (admin: keys and projects of every
//! project; push: push subscriptions; lease: ack, nack and extend, what a
//! consumer does with the lease `consume` gave it; ack_batch: a batch's
//! acks in one call; message: one message looked up by id; pause: pausing
//! and resuming a queue's hand-outs). Each handler validates its input
//! ([`crate::input`]) into store params, calls the store once (messages
//! only through [`crate::messages`]), and shapes the answer.
//! Every keyed route runs behind [`crate::guard`] and answers through its
//! [`Caller`](crate::caller::Caller).

pub mod account;
pub mod ack_batch;
pub mod admin;
pub mod consume;
pub mod cron;
pub mod discovery;
pub mod health;
pub mod lease;
pub mod message;
pub mod pause;
pub mod publish;
pub mod push;
pub mod queues;
pub mod webhooks;
