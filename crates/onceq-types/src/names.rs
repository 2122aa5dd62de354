//! Queue names: `^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$`.

/// The longest queue name.
pub const MAX_QUEUE_NAME_LEN: usize = 80;

/// The suffix of a queue's default dead-letter queue.
pub const DLQ_SUFFIX: &str = "-dlq";

/// Whether `name` is a valid queue name.
pub fn is_valid_queue_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    match bytes.first() {
        Some(first) if first.is_ascii_alphanumeric() => {}
        _ => return false,
    }
    bytes.len() <= MAX_QUEUE_NAME_LEN
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Whether `name` can name an existing queue: a valid name, or a valid
/// name plus `-dlq` (the default DLQ of a queue whose name is 77 to 80
/// characters long is longer than a name a caller may choose).
pub fn is_addressable_queue_name(name: &str) -> bool {
    is_valid_queue_name(name)
        || name
            .strip_suffix(DLQ_SUFFIX)
            .is_some_and(is_valid_queue_name)
}

/// The default dead-letter queue name of `queue`: `<queue>-dlq`.
pub fn default_dlq_name(queue: &str) -> String {
    format!("{queue}{DLQ_SUFFIX}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_and_rejects() {
        assert!(is_valid_queue_name("api-enqueue-jobs"));
        assert!(is_valid_queue_name("a"));
        assert!(is_valid_queue_name("A.b_c-9"));
        assert!(is_valid_queue_name(&"x".repeat(80)));
        assert!(!is_valid_queue_name(&"x".repeat(81)));
        assert!(!is_valid_queue_name(""));
        assert!(!is_valid_queue_name("-a"));
        assert!(!is_valid_queue_name("_a"));
        assert!(!is_valid_queue_name("a b"));
        assert!(!is_valid_queue_name("a/b"));
        assert!(!is_valid_queue_name("é"));
        assert!(!is_valid_queue_name("a\0"));
        let long = format!("{}-dlq", "x".repeat(80));
        assert!(!is_valid_queue_name(&long));
        assert!(is_addressable_queue_name(&long));
        assert!(!is_addressable_queue_name("-dlq"));
    }
}
