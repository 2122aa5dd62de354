//! One module per capability group (push: push subscriptions). Each handler validates its input into
//! store params, calls the store once, and shapes the answer.

pub mod consume;
pub mod discovery;
pub mod health;
pub mod publish;
pub mod push;
pub mod queues;
