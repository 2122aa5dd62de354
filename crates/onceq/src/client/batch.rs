//! A batch's acks in one call: [`Client::ack_batch`], or carried by the
//! next consume ([`Client::consume_acking`], one call per batch). Each
//! answer says, ack by ack, which ended their lease
//! ([`AckBatchResult`]'s `successful`) and which did not (`failed`, code
//! `LEASE_NOT_HELD`).

use onceq_types::{
    reply::{AckBatchResult, Consumed},
    request,
};
use reqwest::Method;
use serde_json::value::RawValue;

use super::{Answer, Client, ConsumeOptions, Error};

/// One ack of a batch: the message, its lease's receipt, and optionally
/// what the work produced (as [`Client::ack_with_result`]).
#[derive(Debug, Clone)]
pub struct BatchAck {
    /// The message.
    pub message_id: String,
    /// The receipt its consume answered.
    pub receipt: String,
    /// Any JSON, at most 64 KiB compact; kept while the queue retains
    /// completed messages.
    pub result: Option<Box<RawValue>>,
}

impl BatchAck {
    fn entry(self) -> request::AckEntry {
        request::AckEntry {
            message_id: Some(self.message_id),
            receipt: Some(self.receipt),
            result: self.result,
        }
    }
}

impl Client {
    /// Acks up to 10 messages of `queue` in one call (one transaction on
    /// the server), each message once.
    pub async fn ack_batch(
        &self,
        queue: &str,
        acks: Vec<BatchAck>,
    ) -> Result<AckBatchResult, Error> {
        let body = request::AckBatch {
            queue: Some(queue.to_owned()),
            entries: Some(acks.into_iter().map(BatchAck::entry).collect()),
        };
        let answer: Answer<AckBatchResult> = self
            .call(Method::POST, "/v1/queue/ack_batch", Some(&body))
            .await?;
        Ok(answer.data)
    }

    /// [`Client::consume`] carrying `acks` (up to 10: the previous batch's),
    /// which the server applies in the claim's transaction (so committed
    /// before any long-poll wait; a call that fails acked none of them);
    /// the answer's `acks` says how each went (absent when none were
    /// sent).
    pub async fn consume_acking(
        &self,
        queue: &str,
        opts: ConsumeOptions,
        acks: Vec<BatchAck>,
    ) -> Result<Consumed, Error> {
        let body = request::Consume {
            queue: Some(queue.to_owned()),
            max_messages: Some(i64::from(opts.max_messages.max(1))),
            visibility_timeout: opts.visibility_timeout.map(i64::from),
            wait_seconds: (opts.wait_seconds > 0).then_some(i64::from(opts.wait_seconds)),
            acks: (!acks.is_empty()).then(|| acks.into_iter().map(BatchAck::entry).collect()),
        };
        let answer: Answer<Consumed> = self
            .call(Method::POST, "/v1/queue/consume", Some(&body))
            .await?;
        Ok(answer.data)
    }
}
