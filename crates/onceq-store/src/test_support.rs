//! Helpers shared by the backends' unit tests.

use jiff::Timestamp;

/// A key of project `p` with hash `[hash; 32]`.
pub(crate) fn key(id: &str, hash: u8) -> crate::KeyInsert {
    crate::KeyInsert {
        project: "p".into(),
        key_id: id.into(),
        key_hash: vec![hash; 32],
        label: None,
        scope: Default::default(),
        expires_at: None,
        now: Timestamp::from_second(1_900_000_000).unwrap(),
    }
}

/// Waits (up to 5 s) until `check` holds.
pub(crate) async fn eventually(what: &str, mut check: impl AsyncFnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
    while !check().await {
        assert!(tokio::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}
