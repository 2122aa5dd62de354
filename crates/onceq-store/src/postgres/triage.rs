//! The dashboard's actions beyond browsing: `message_promote_now` and the
//! bounded `message_payload_search`.

use super::browse::{message_record, queue_id};
use super::db::GenericClient;
use super::errors::Error;
use super::{PgStore, sql};
use crate::{MessagePromote, PayloadMatches, PayloadSearch, PromoteOutcome};

impl PgStore {
    pub(super) async fn promote_now_once(
        &self,
        p: &MessagePromote,
    ) -> Result<PromoteOutcome, Error> {
        let client = self.client().await?;
        let queue_id = queue_id(&client, &p.queue).await?;
        let stmt = client.prepare_cached(sql::MESSAGE_PROMOTE_NOW).await?;
        if client
            .execute(&stmt, &[&queue_id, &p.message_id, &p.now])
            .await?
            == 1
        {
            return Ok(PromoteOutcome::Promoted);
        }
        let state = client.prepare_cached(sql::MESSAGE_STATE).await?;
        Ok(
            match client
                .query_opt(&state, &[&queue_id, &p.message_id])
                .await?
            {
                Some(_) => PromoteOutcome::NotDelayed,
                None => PromoteOutcome::NotFound,
            },
        )
    }

    pub(super) async fn payload_search_once(
        &self,
        p: &PayloadSearch,
    ) -> Result<PayloadMatches, Error> {
        p.check()?;
        let client = self.client().await?;
        let queue_id = queue_id(&client, &p.queue).await?;
        let (scan, limit) = (i64::from(p.scan), i64::from(p.limit));
        let stmt = client.prepare_cached(sql::MESSAGE_PAYLOAD_SEARCH).await?;
        let rows = client
            .query(&stmt, &[&queue_id, &p.now, &scan, &p.text, &limit])
            .await?;
        let messages = rows
            .iter()
            .map(message_record)
            .collect::<Result<Vec<_>, _>>()?;
        let count = client.prepare_cached(sql::MESSAGE_RECENT_COUNT).await?;
        let held: i64 = client
            .query_one(&count, &[&queue_id, &(scan + 1)])
            .await?
            .get(0);
        Ok(PayloadMatches {
            messages,
            scanned: u32::try_from(held.min(scan)).unwrap_or(p.scan),
            truncated: held > scan,
        })
    }
}
