//! The endpoint catalogue: every capability's id, method and path. The
//! server's discovery answer, its price table and its metering use these ids.

use serde::{Deserialize, Serialize};

use crate::scope::Action;

/// One endpoint of the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CapabilityDef {
    /// Stable id, e.g. `queue.publish`; the key of the price table.
    pub id: &'static str,
    /// HTTP method.
    pub method: &'static str,
    /// Path template.
    pub path: &'static str,
    /// Priced per message stored (publish) rather than per call.
    pub unit: &'static str,
    /// What a key's scope must allow for this call.
    pub action: Action,
}

/// Every capability, in the order discovery lists them.
pub const CAPABILITIES: &[CapabilityDef] = &[
    cap(
        "queue.publish",
        "POST",
        "/v1/queue/publish",
        "message",
        Action::Publish,
    ),
    cap(
        "queue.publish_batch",
        "POST",
        "/v1/queue/publish_batch",
        "message",
        Action::Publish,
    ),
    call(
        "queue.consume",
        "POST",
        "/v1/queue/consume",
        Action::Consume,
    ),
    call("queue.ack", "POST", "/v1/queue/ack", Action::Consume),
    call("queue.nack", "POST", "/v1/queue/nack", Action::Consume),
    call("queue.extend", "POST", "/v1/queue/extend", Action::Consume),
    call("queue.create", "POST", "/v1/queue/create", Action::Admin),
    call("queue.list", "GET", "/v1/queue/list", Action::Read),
    call("queue.get", "GET", "/v1/queue/get/{queue}", Action::Read),
    call(
        "queue.delete",
        "DELETE",
        "/v1/queue/delete/{queue}",
        Action::Admin,
    ),
    call(
        "queue.stats",
        "GET",
        "/v1/queue/stats/{queue}",
        Action::Read,
    ),
    call(
        "queue.purge",
        "POST",
        "/v1/queue/purge/{queue}",
        Action::Admin,
    ),
    call(
        "queue.dlq.redrive",
        "POST",
        "/v1/queue/dlq/redrive/{queue}",
        Action::Admin,
    ),
    call(
        "account.balance",
        "GET",
        "/v1/account/balance",
        Action::Read,
    ),
    call("account.usage", "GET", "/v1/account/usage", Action::Read),
    call(
        "queue.push_subscribe",
        "POST",
        "/v1/queue/push_subscribe/{queue}",
        Action::Admin,
    ),
    call(
        "queue.push_subscriptions",
        "GET",
        "/v1/queue/push_subscriptions/{queue}",
        Action::Read,
    ),
    call(
        "queue.push_unsubscribe",
        "DELETE",
        "/v1/queue/push_unsubscribe/{queue}/{subscription_id}",
        Action::Admin,
    ),
    // Needs no key, so it is never metered nor scoped; listed for
    // completeness of the catalogue.
    call("discovery", "GET", "/v1/discovery", Action::Read),
];

const fn call(
    id: &'static str,
    method: &'static str,
    path: &'static str,
    action: Action,
) -> CapabilityDef {
    cap(id, method, path, "call", action)
}

const fn cap(
    id: &'static str,
    method: &'static str,
    path: &'static str,
    unit: &'static str,
    action: Action,
) -> CapabilityDef {
    CapabilityDef {
        id,
        method,
        path,
        unit,
        action,
    }
}

/// Looks a capability up by id.
pub fn capability(id: &str) -> Option<&'static CapabilityDef> {
    CAPABILITIES.iter().find(|c| c.id == id)
}

/// `GET /v1/discovery`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Discovery {
    /// The server's version.
    pub version: String,
    /// Every endpoint with its price.
    pub capabilities: Vec<Capability>,
}

/// One entry of the discovery answer.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Capability {
    /// Stable id.
    pub id: String,
    /// HTTP method.
    pub method: String,
    /// Path template.
    pub path: String,
    /// What a call costs.
    pub billing: Billing,
}

/// The price of a capability.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Billing {
    /// Whether calls are charged at all.
    pub is_billable: bool,
    /// Price of one unit.
    pub price_usd: f64,
    /// `message` or `call`.
    pub unit: String,
    /// Always `USD`.
    pub currency: String,
}
