//! A message's life in hand (queue-api-2.md §5): ack with the work's
//! result, cancel, and redrive of chosen dead letters. The message record
//! with its attempts, `last_error` and `result` is
//! [`Client::get_message`].

use onceq_types::{
    reply::{Acked, Cancelled, Redriven},
    request,
};
use reqwest::Method;
use serde_json::value::RawValue;

use super::{Answer, Client, Error, segment};

impl Client {
    /// Acks a message held under a lease, handing the server what the work
    /// produced (`result`: any JSON, at most 64 KiB), which it keeps while
    /// the queue retains completed messages (`completed_retention_seconds`);
    /// false if the lease was lost.
    pub async fn ack_with_result(
        &self,
        queue: &str,
        message_id: &str,
        receipt: Option<&str>,
        result: Option<Box<RawValue>>,
    ) -> Result<bool, Error> {
        let body = request::Ack {
            queue: Some(queue.to_owned()),
            message_id: Some(message_id.to_owned()),
            receipt: receipt.map(str::to_owned),
            result,
        };
        let answer: Answer<Acked> = self
            .call(Method::POST, "/v1/queue/ack", Some(&body))
            .await?;
        Ok(answer.data.acked)
    }

    /// Removes a waiting, delayed or in-flight message (an in-flight one's
    /// lease ends); false when the queue does not hold it.
    pub async fn cancel(&self, queue: &str, message_id: &str) -> Result<bool, Error> {
        let body = request::Cancel {
            queue: Some(queue.to_owned()),
            message_id: Some(message_id.to_owned()),
        };
        let answer: Answer<Cancelled> = self
            .call(Method::POST, "/v1/queue/cancel", Some(&body))
            .await?;
        Ok(answer.data.cancelled)
    }

    /// Moves the named dead letters (1 to 100) back into `queue`; the answer
    /// lists those not found and those held by a consumer of the DLQ.
    pub async fn redrive_ids(&self, queue: &str, message_ids: &[&str]) -> Result<Redriven, Error> {
        let path = format!("/v1/queue/dlq/redrive/{}", segment(queue)?);
        let body = request::Redrive {
            max_messages: None,
            message_ids: Some(message_ids.iter().map(|id| (*id).to_owned()).collect()),
        };
        Ok(self.call(Method::POST, &path, Some(&body)).await?.data)
    }
}
