//! The endpoint catalogue: every capability's id, method and path. The
//! server's discovery answer, its price table and its metering use these ids.

use serde::{Deserialize, Serialize};

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
}

/// Every capability, in the order discovery lists them.
pub const CAPABILITIES: &[CapabilityDef] = &[
    cap("queue.publish", "POST", "/v1/queue/publish", "message"),
    cap(
        "queue.publish_batch",
        "POST",
        "/v1/queue/publish_batch",
        "message",
    ),
    cap("queue.consume", "POST", "/v1/queue/consume", "call"),
    cap("queue.ack", "POST", "/v1/queue/ack", "call"),
    cap("queue.nack", "POST", "/v1/queue/nack", "call"),
    cap("queue.extend", "POST", "/v1/queue/extend", "call"),
    cap("queue.create", "POST", "/v1/queue/create", "call"),
    cap("queue.list", "GET", "/v1/queue/list", "call"),
    cap("queue.get", "GET", "/v1/queue/get/{queue}", "call"),
    cap("queue.delete", "DELETE", "/v1/queue/delete/{queue}", "call"),
    cap("queue.stats", "GET", "/v1/queue/stats/{queue}", "call"),
    cap("queue.purge", "POST", "/v1/queue/purge/{queue}", "call"),
    cap(
        "queue.dlq.redrive",
        "POST",
        "/v1/queue/dlq/redrive/{queue}",
        "call",
    ),
    cap(
        "queue.push_subscribe",
        "POST",
        "/v1/queue/push_subscribe/{queue}",
        "call",
    ),
    cap(
        "queue.push_subscriptions",
        "GET",
        "/v1/queue/push_subscriptions/{queue}",
        "call",
    ),
    cap(
        "queue.push_unsubscribe",
        "DELETE",
        "/v1/queue/push_unsubscribe/{queue}/{subscription_id}",
        "call",
    ),
    cap("discovery", "GET", "/v1/discovery", "call"),
];

const fn cap(
    id: &'static str,
    method: &'static str,
    path: &'static str,
    unit: &'static str,
) -> CapabilityDef {
    CapabilityDef {
        id,
        method,
        path,
        unit,
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
