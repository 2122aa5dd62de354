//! Who may read a stored payload: the one gate every answer and page that
//! shows one goes through.
//!
//! The rule is written once, in the capability table
//! ([`PAYLOAD_ACTION`]): a payload (a message's, its completed `result`, a
//! cron schedule's) is shown by a call that does not consume the message
//! only to a key allowed `peek`. [`Principal::payloads`] gives the
//! [`PayloadGate`] of a key; the API's message and cron answers and the
//! dashboard's message, queue, completed and dead-letter pages take their
//! payloads through it, and the dashboard's payload search asks it first
//! ([`PayloadGate::require`]). A key without `peek` gets the record with
//! `payload_withheld: true` (the pages say "withheld"), not a 403: state,
//! attempts and errors are what a read-only dashboard or support tool is
//! for, and they stay visible.

use onceq_types::capability::PAYLOAD_ACTION;

use crate::principal::Principal;

/// Whether one key's answers may carry payloads (cheap to copy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PayloadGate {
    shown: bool,
}

impl PayloadGate {
    /// The gate of `principal`'s key.
    pub fn of(principal: &Principal) -> Self {
        Self {
            shown: principal.allows(PAYLOAD_ACTION),
        }
    }

    /// Whether payloads are withheld from this key.
    pub fn withheld(self) -> bool {
        !self.shown
    }

    /// `value` (a payload or something holding one) if the key may read
    /// payloads, `None` otherwise.
    pub fn reveal<T>(self, value: T) -> Option<T> {
        self.shown.then_some(value)
    }

    /// Refuses what would disclose payloads other than by showing them (a
    /// search in payloads tells which hold a text): the refusal's wording.
    pub fn require(self) -> Result<(), String> {
        if self.shown {
            Ok(())
        } else {
            Err(format!(
                "this API key may not read payloads (needs \"{}\"; give the key {} to search or show them)",
                PAYLOAD_ACTION.as_str(),
                PAYLOAD_ACTION.as_str()
            ))
        }
    }
}

impl Principal {
    /// The key's [`PayloadGate`].
    pub fn payloads(&self) -> PayloadGate {
        PayloadGate::of(self)
    }
}
