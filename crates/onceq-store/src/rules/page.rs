//! `message_list`'s paging: a page is read from the cursor on with one row
//! more than asked, which says whether a next page exists (never an
//! OFFSET, never a count).

use crate::{MessageList, MessagePage, MessageRecord};

/// Where the page starts (rows after this `seq`) and how many rows to read.
pub(crate) fn window(list: &MessageList) -> (i64, i64) {
    (
        list.after_seq.unwrap_or(i64::MIN),
        i64::from(list.limit) + 1,
    )
}

/// The page of `fetched`, the rows read for [`window`] of a list of
/// `limit`: the first `limit`, and the next page's cursor when there was
/// one more.
pub(crate) fn page(mut fetched: Vec<MessageRecord>, limit: u32) -> MessagePage {
    let next_after_seq = if fetched.len() > limit as usize {
        fetched.truncate(limit as usize);
        fetched.last().map(|m| m.seq)
    } else {
        None
    };
    MessagePage {
        messages: fetched,
        next_after_seq,
    }
}

#[cfg(test)]
mod tests {
    use jiff::Timestamp;
    use onceq_types::MessageStatus;

    use super::*;
    use crate::QueueRef;

    fn record(seq: i64) -> MessageRecord {
        MessageRecord {
            seq,
            message_id: format!("m{seq}"),
            payload: "{}".into(),
            status: MessageStatus::Available,
            priority: 0,
            group_id: None,
            idempotency_key: None,
            headers: None,
            delivery_count: 0,
            created_at: Timestamp::UNIX_EPOCH,
            visible_at: Timestamp::UNIX_EPOCH,
            lease_expires_at: None,
            last_error: None,
            attempts: Vec::new(),
        }
    }

    #[test]
    fn one_row_more_says_a_next_page_exists() {
        let list = |after_seq, limit| MessageList {
            queue: QueueRef::new("p", "q"),
            after_seq,
            limit,
            state: None,
            search: None,
            group_id: None,
            now: Timestamp::UNIX_EPOCH,
        };
        assert_eq!(window(&list(None, 2)), (i64::MIN, 3));
        assert_eq!(window(&list(Some(7), 10)), (7, 11));

        let full = page((1..=3).map(record).collect(), 2);
        assert_eq!(full.messages.len(), 2);
        assert_eq!(full.next_after_seq, Some(2));
        for fetched in [0, 1, 2] {
            let last = page((1..=fetched).map(record).collect(), 2);
            assert_eq!(last.messages.len(), fetched as usize);
            assert_eq!(last.next_after_seq, None);
        }
    }
}
