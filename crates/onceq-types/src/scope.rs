//! What an API key may do: which actions, on which queues.
//!
//! Every capability belongs to one [`Action`] (publish, consume, read,
//! admin, accounts); one more, `peek`, belongs to no capability but to what
//! an answer may carry: a message's payload and result, shown by a call
//! that does not consume it ([`crate::capability::PAYLOAD_ACTION`]). A key
//! holds a set of actions ([`Actions`], `full` = all but `accounts`) and
//! a list of queue-name patterns ([`QueuePatterns`], `*` = any queue). A
//! call is allowed when its capability's action is in the set and, for a
//! call that names a queue, the name matches one of the patterns.
//!
//! Patterns are queue-name characters plus `*`, which matches any run of
//! characters (none included): `exports-*` matches `exports-daily` and
//! `exports-daily-dlq`, not `exports`. Matching is case-sensitive, like
//! queue names. Both sets have a text form (`publish,consume`,
//! `exports-*,billing`) used by the CLI and stored in the database.

use std::fmt;

/// One class of calls a key may be allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// `publish`, `publish_batch`.
    Publish,
    /// `consume`, `ack`, `nack`, `extend`.
    Consume,
    /// `list`, `get`, `stats`, and the account endpoints.
    Read,
    /// Payloads (and completed results) in the answers of calls that do
    /// not consume: `queue.message.get`, the cron calls, the dashboard's
    /// pages and its payload search. Alone it allows no call: it adds
    /// payloads to what `read` (or `admin`, for cron changes) answers.
    /// A key without it gets those answers with the payload withheld.
    Peek,
    /// `create`, `update`, `delete`, `purge`, `cancel`, `dlq/redrive`.
    Admin,
    /// The admin API (`/v1/admin/...`): keys and limits of every project.
    /// Not part of `full`: a project's keys act within their project, and
    /// a tenant's `full` key must not mint keys for other projects nor
    /// raise its own credit limit. Only the operator's keys hold it
    /// ([`Actions::OPERATOR`]) unless a key is created with it.
    Accounts,
}

impl Action {
    /// Every action, in display order.
    pub const ALL: [Action; 6] = [
        Action::Publish,
        Action::Consume,
        Action::Read,
        Action::Peek,
        Action::Admin,
        Action::Accounts,
    ];

    /// The action's name in the text form.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Publish => "publish",
            Action::Consume => "consume",
            Action::Read => "read",
            Action::Peek => "peek",
            Action::Admin => "admin",
            Action::Accounts => "accounts",
        }
    }

    fn bit(self) -> u8 {
        match self {
            Action::Publish => 1,
            Action::Consume => 2,
            Action::Read => 4,
            Action::Admin => 8,
            Action::Accounts => 16,
            Action::Peek => 32,
        }
    }
}

/// A set of actions. `Default` is `full`: every action of a project
/// (publish, consume, read, peek, admin), not `accounts`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Actions(u8);

impl Actions {
    /// Every action within a project (`full`). Keys stored as `full`
    /// before `peek` existed read payloads as they did, so `full` holds it.
    pub const FULL: Actions = Actions(47);

    /// `full` and `accounts`: the operator's keys (`ONCEQ_API_KEY`, the
    /// key made on first start).
    pub const OPERATOR: Actions = Actions(63);

    /// Whether `action` is in the set.
    pub fn allows(self, action: Action) -> bool {
        self.0 & action.bit() != 0
    }

    /// Parses `full` or a comma-separated list of `publish`, `consume`,
    /// `read`, `peek`, `admin`, `accounts`, `full` (also `publish-only`,
    /// `consume-only`, `read-only`).
    pub fn parse(text: &str) -> Result<Actions, String> {
        let mut bits = 0u8;
        for word in text.split(',').map(str::trim) {
            let word = word.strip_suffix("-only").unwrap_or(word);
            bits |= match word {
                "full" | "all" => Actions::FULL.0,
                "publish" => Action::Publish.bit(),
                "consume" => Action::Consume.bit(),
                "read" => Action::Read.bit(),
                "peek" => Action::Peek.bit(),
                "admin" => Action::Admin.bit(),
                "accounts" => Action::Accounts.bit(),
                other => {
                    return Err(format!(
                        "unknown action {:?}: use publish, consume, read, peek, admin, accounts or full",
                        truncate(other)
                    ));
                }
            };
        }
        Ok(Actions(bits))
    }
}

impl Default for Actions {
    fn default() -> Self {
        Actions::FULL
    }
}

impl fmt::Display for Actions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Actions::FULL {
            return f.write_str("full");
        }
        if *self == Actions::OPERATOR {
            return f.write_str("full,accounts");
        }
        let names: Vec<&str> = Action::ALL
            .into_iter()
            .filter(|a| self.allows(*a))
            .map(Action::as_str)
            .collect();
        f.write_str(&names.join(","))
    }
}

impl fmt::Debug for Actions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Actions({self})")
    }
}

/// The longest queue pattern: an addressable queue name (84) plus room for
/// a few `*`.
pub const MAX_PATTERN_LEN: usize = 100;

/// The most patterns one key may hold.
pub const MAX_PATTERNS: usize = 32;

/// Queue-name patterns. `Default` is `*` (every queue).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct QueuePatterns(Vec<String>);

impl QueuePatterns {
    /// Parses a comma-separated list of patterns.
    pub fn parse(text: &str) -> Result<QueuePatterns, String> {
        let patterns: Vec<String> = text.split(',').map(|p| p.trim().to_owned()).collect();
        if patterns.len() > MAX_PATTERNS {
            return Err(format!("at most {MAX_PATTERNS} queue patterns"));
        }
        for p in &patterns {
            let valid = !p.is_empty()
                && p.len() <= MAX_PATTERN_LEN
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'*'));
            if !valid {
                return Err(format!(
                    "queue pattern {:?} must be 1 to {MAX_PATTERN_LEN} of A-Z a-z 0-9 _ . - and *",
                    truncate(p)
                ));
            }
        }
        Ok(QueuePatterns(patterns))
    }

    /// Whether every queue matches (a `*` pattern).
    pub fn is_any(&self) -> bool {
        self.0.iter().any(|p| p == "*")
    }

    /// Whether `queue` matches one of the patterns.
    pub fn matches(&self, queue: &str) -> bool {
        self.0.iter().any(|p| glob(p.as_bytes(), queue.as_bytes()))
    }
}

impl Default for QueuePatterns {
    fn default() -> Self {
        QueuePatterns(vec!["*".to_owned()])
    }
}

impl fmt::Display for QueuePatterns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join(","))
    }
}

impl fmt::Debug for QueuePatterns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "QueuePatterns({self})")
    }
}

/// What a key may do. `Default` is everything on every queue.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct KeyScope {
    /// Allowed actions.
    pub actions: Actions,
    /// Allowed queues.
    pub queues: QueuePatterns,
}

impl KeyScope {
    /// Whether the key may do anything on any queue.
    pub fn is_full(&self) -> bool {
        self.actions == Actions::FULL && self.queues.is_any()
    }
}

/// `*`-only glob, linear in practice: on a mismatch after a `*`, retry one
/// character further from the last `*` (the classic two-pointer match; no
/// recursion, so hostile patterns cannot blow the stack).
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((sp, st)) = star {
            p = sp + 1;
            t = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&b| b == b'*')
}

fn truncate(s: &str) -> String {
    s.chars().take(100).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_parse_and_print() {
        assert_eq!(Actions::parse("full").unwrap(), Actions::FULL);
        let a = Actions::parse("publish-only").unwrap();
        assert!(a.allows(Action::Publish) && !a.allows(Action::Read));
        let a = Actions::parse("consume, read").unwrap();
        assert_eq!(a.to_string(), "consume,read");
        assert_eq!(Actions::parse(&a.to_string()).unwrap(), a);
        assert_eq!(
            Actions::parse("publish,consume,read,peek,admin").unwrap(),
            Actions::FULL
        );
        // A set without peek is not full: it prints as its list.
        let no_peek = Actions::parse("publish,consume,read,admin").unwrap();
        assert_ne!(no_peek, Actions::FULL);
        assert_eq!(no_peek.to_string(), "publish,consume,read,admin");
        assert!(Actions::FULL.allows(Action::Peek));
        let a = Actions::parse("read,peek").unwrap();
        assert!(a.allows(Action::Peek) && !a.allows(Action::Consume));
        assert_eq!(Actions::parse(&a.to_string()).unwrap(), a);
        assert!(!Actions::FULL.allows(Action::Accounts));
        let op = Actions::parse("full,accounts").unwrap();
        assert_eq!(op, Actions::OPERATOR);
        assert_eq!(op.to_string(), "full,accounts");
        assert!(op.allows(Action::Accounts) && op.allows(Action::Publish));
        let a = Actions::parse("read,accounts").unwrap();
        assert_eq!(Actions::parse(&a.to_string()).unwrap(), a);
        assert!(Actions::parse("write").is_err());
        assert!(Actions::parse("").is_err());
    }

    #[test]
    fn patterns_match() {
        let p = QueuePatterns::parse("exports-*,billing").unwrap();
        assert!(p.matches("exports-daily"));
        assert!(p.matches("exports-daily-dlq"));
        assert!(p.matches("exports-"));
        assert!(!p.matches("exports"));
        assert!(p.matches("billing"));
        assert!(!p.matches("billing-dlq"));
        assert!(!p.matches("Exports-x"));
        let any = QueuePatterns::default();
        assert!(any.is_any() && any.matches("whatever"));
        let mid = QueuePatterns::parse("a*b*c").unwrap();
        assert!(mid.matches("abc") && mid.matches("axxbyyc") && !mid.matches("axxbyy"));
        assert!(QueuePatterns::parse("a b").is_err());
        assert!(QueuePatterns::parse("").is_err());
        assert!(QueuePatterns::parse("a,,b").is_err());
        assert_eq!(p.to_string(), "exports-*,billing");
    }

    #[test]
    fn hostile_pattern_is_fast() {
        let p = QueuePatterns::parse(&"*a".repeat(40)).unwrap();
        assert!(!p.matches(&"a".repeat(39)));
        assert!(p.matches(&"a".repeat(84)));
    }
}
