//! The endpoint catalogue: every capability's id, method, path, unit and
//! action, one constant each, and which action reads payloads
//! ([`PAYLOAD_ACTION`], [`SHOWS_PAYLOADS`]). The server's router, guard,
//! discovery answer, price table and metering use these constants; a test
//! of the server checks its router against [`CAPABILITIES`], and one of the
//! CLI checks docs/security.md's and docs/api.md's tables against them.

use serde::{Deserialize, Serialize};

use crate::scope::Action;

/// One endpoint of the API. Each has a constant here ([`PUBLISH`],
/// [`CONSUME`], …): the server routes, guards, prices and meters by these
/// values, never by an id typed again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CapabilityDef {
    /// Stable id, e.g. `queue.publish`; the key of the price table and of
    /// stored usage.
    pub id: &'static str,
    /// HTTP method.
    pub method: &'static str,
    /// Path template.
    pub path: &'static str,
    /// What one unit of its price is.
    pub unit: Unit,
    /// What a key's scope must allow for this call.
    pub action: Action,
}

/// What a capability's price is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Each message stored (publish): reserved and charged by the handler,
    /// which knows how many.
    Message,
    /// Each call: reserved and charged by the guard.
    Call,
}

impl Unit {
    /// The unit's name in discovery (`message`, `call`).
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Message => "message",
            Unit::Call => "call",
        }
    }
}

/// `POST /v1/queue/publish`.
pub const PUBLISH: CapabilityDef = CapabilityDef {
    id: "queue.publish",
    method: "POST",
    path: "/v1/queue/publish",
    unit: Unit::Message,
    action: Action::Publish,
};
/// `POST /v1/queue/publish_batch`.
pub const PUBLISH_BATCH: CapabilityDef = CapabilityDef {
    id: "queue.publish_batch",
    method: "POST",
    path: "/v1/queue/publish_batch",
    unit: Unit::Message,
    action: Action::Publish,
};
/// `POST /v1/queue/consume`.
pub const CONSUME: CapabilityDef = CapabilityDef {
    id: "queue.consume",
    method: "POST",
    path: "/v1/queue/consume",
    unit: Unit::Call,
    action: Action::Consume,
};
/// `POST /v1/queue/ack`.
pub const ACK: CapabilityDef = CapabilityDef {
    id: "queue.ack",
    method: "POST",
    path: "/v1/queue/ack",
    unit: Unit::Call,
    action: Action::Consume,
};
/// `POST /v1/queue/ack_batch`: the acks of a batch, one call.
pub const ACK_BATCH: CapabilityDef = CapabilityDef {
    id: "queue.ack_batch",
    method: "POST",
    path: "/v1/queue/ack_batch",
    unit: Unit::Call,
    action: Action::Consume,
};
/// `POST /v1/queue/nack`.
pub const NACK: CapabilityDef = CapabilityDef {
    id: "queue.nack",
    method: "POST",
    path: "/v1/queue/nack",
    unit: Unit::Call,
    action: Action::Consume,
};
/// `POST /v1/queue/extend`.
pub const EXTEND: CapabilityDef = CapabilityDef {
    id: "queue.extend",
    method: "POST",
    path: "/v1/queue/extend",
    unit: Unit::Call,
    action: Action::Consume,
};
/// `POST /v1/queue/create`.
pub const CREATE: CapabilityDef = CapabilityDef {
    id: "queue.create",
    method: "POST",
    path: "/v1/queue/create",
    unit: Unit::Call,
    action: Action::Admin,
};
/// `POST /v1/queue/update`.
pub const QUEUE_UPDATE: CapabilityDef = CapabilityDef {
    id: "queue.update",
    method: "POST",
    path: "/v1/queue/update",
    unit: Unit::Call,
    action: Action::Admin,
};
/// `POST /v1/queue/pause/{queue}`.
pub const QUEUE_PAUSE: CapabilityDef = CapabilityDef {
    id: "queue.pause",
    method: "POST",
    path: "/v1/queue/pause/{queue}",
    unit: Unit::Call,
    action: Action::Admin,
};
/// `POST /v1/queue/resume/{queue}`.
pub const QUEUE_RESUME: CapabilityDef = CapabilityDef {
    id: "queue.resume",
    method: "POST",
    path: "/v1/queue/resume/{queue}",
    unit: Unit::Call,
    action: Action::Admin,
};
/// `GET /v1/queue/message/{queue}/{message_id}`.
pub const MESSAGE_GET: CapabilityDef = CapabilityDef {
    id: "queue.message.get",
    method: "GET",
    path: "/v1/queue/message/{queue}/{message_id}",
    unit: Unit::Call,
    action: Action::Read,
};
/// `POST /v1/queue/cancel`.
pub const CANCEL: CapabilityDef = CapabilityDef {
    id: "queue.cancel",
    method: "POST",
    path: "/v1/queue/cancel",
    unit: Unit::Call,
    action: Action::Admin,
};
/// `GET /v1/queue/list`.
pub const LIST: CapabilityDef = CapabilityDef {
    id: "queue.list",
    method: "GET",
    path: "/v1/queue/list",
    unit: Unit::Call,
    action: Action::Read,
};
/// `GET /v1/queue/get/{queue}`.
pub const GET: CapabilityDef = CapabilityDef {
    id: "queue.get",
    method: "GET",
    path: "/v1/queue/get/{queue}",
    unit: Unit::Call,
    action: Action::Read,
};
/// `DELETE /v1/queue/delete/{queue}`.
pub const DELETE: CapabilityDef = CapabilityDef {
    id: "queue.delete",
    method: "DELETE",
    path: "/v1/queue/delete/{queue}",
    unit: Unit::Call,
    action: Action::Admin,
};
/// `GET /v1/queue/stats/{queue}`.
pub const STATS: CapabilityDef = CapabilityDef {
    id: "queue.stats",
    method: "GET",
    path: "/v1/queue/stats/{queue}",
    unit: Unit::Call,
    action: Action::Read,
};
/// `POST /v1/queue/purge/{queue}`.
pub const PURGE: CapabilityDef = CapabilityDef {
    id: "queue.purge",
    method: "POST",
    path: "/v1/queue/purge/{queue}",
    unit: Unit::Call,
    action: Action::Admin,
};
/// `POST /v1/queue/dlq/redrive/{queue}`.
pub const REDRIVE: CapabilityDef = CapabilityDef {
    id: "queue.dlq.redrive",
    method: "POST",
    path: "/v1/queue/dlq/redrive/{queue}",
    unit: Unit::Call,
    action: Action::Admin,
};
/// `GET /v1/account/balance`.
pub const BALANCE: CapabilityDef = CapabilityDef {
    id: "account.balance",
    method: "GET",
    path: "/v1/account/balance",
    unit: Unit::Call,
    action: Action::Read,
};
/// `GET /v1/account/usage`.
pub const USAGE: CapabilityDef = CapabilityDef {
    id: "account.usage",
    method: "GET",
    path: "/v1/account/usage",
    unit: Unit::Call,
    action: Action::Read,
};
/// `POST /v1/queue/push_subscribe/{queue}`.
pub const PUSH_SUBSCRIBE: CapabilityDef = CapabilityDef {
    id: "queue.push_subscribe",
    method: "POST",
    path: "/v1/queue/push_subscribe/{queue}",
    unit: Unit::Call,
    action: Action::Admin,
};
/// `GET /v1/queue/push_subscriptions/{queue}`.
pub const PUSH_SUBSCRIPTIONS: CapabilityDef = CapabilityDef {
    id: "queue.push_subscriptions",
    method: "GET",
    path: "/v1/queue/push_subscriptions/{queue}",
    unit: Unit::Call,
    action: Action::Read,
};
/// `DELETE /v1/queue/push_unsubscribe/{queue}/{subscription_id}`.
pub const PUSH_UNSUBSCRIBE: CapabilityDef = CapabilityDef {
    id: "queue.push_unsubscribe",
    method: "DELETE",
    path: "/v1/queue/push_unsubscribe/{queue}/{subscription_id}",
    unit: Unit::Call,
    action: Action::Admin,
};
/// `POST /v1/cron/create`.
pub const CRON_CREATE: CapabilityDef = CapabilityDef {
    id: "cron.create",
    method: "POST",
    path: "/v1/cron/create",
    unit: Unit::Call,
    action: Action::Admin,
};
/// `GET /v1/cron/list`.
pub const CRON_LIST: CapabilityDef = CapabilityDef {
    id: "cron.list",
    method: "GET",
    path: "/v1/cron/list",
    unit: Unit::Call,
    action: Action::Read,
};
/// `GET /v1/cron/get/{job_id}`.
pub const CRON_GET: CapabilityDef = CapabilityDef {
    id: "cron.get",
    method: "GET",
    path: "/v1/cron/get/{job_id}",
    unit: Unit::Call,
    action: Action::Read,
};
/// `POST /v1/cron/update`.
pub const CRON_UPDATE: CapabilityDef = CapabilityDef {
    id: "cron.update",
    method: "POST",
    path: "/v1/cron/update",
    unit: Unit::Call,
    action: Action::Admin,
};
/// `POST /v1/cron/pause/{job_id}`.
pub const CRON_PAUSE: CapabilityDef = CapabilityDef {
    id: "cron.pause",
    method: "POST",
    path: "/v1/cron/pause/{job_id}",
    unit: Unit::Call,
    action: Action::Admin,
};
/// `POST /v1/cron/resume/{job_id}`.
pub const CRON_RESUME: CapabilityDef = CapabilityDef {
    id: "cron.resume",
    method: "POST",
    path: "/v1/cron/resume/{job_id}",
    unit: Unit::Call,
    action: Action::Admin,
};
/// `DELETE /v1/cron/delete/{job_id}`.
pub const CRON_DELETE: CapabilityDef = CapabilityDef {
    id: "cron.delete",
    method: "DELETE",
    path: "/v1/cron/delete/{job_id}",
    unit: Unit::Call,
    action: Action::Admin,
};
/// `POST /v1/account/webhooks/register`.
pub const WEBHOOK_REGISTER: CapabilityDef = CapabilityDef {
    id: "account.webhooks.register",
    method: "POST",
    path: "/v1/account/webhooks/register",
    unit: Unit::Call,
    action: Action::Admin,
};
/// `GET /v1/account/webhooks/list`.
pub const WEBHOOK_LIST: CapabilityDef = CapabilityDef {
    id: "account.webhooks.list",
    method: "GET",
    path: "/v1/account/webhooks/list",
    unit: Unit::Call,
    action: Action::Read,
};
/// `GET /v1/account/webhooks/deliveries/{id}`.
pub const WEBHOOK_DELIVERIES: CapabilityDef = CapabilityDef {
    id: "account.webhooks.deliveries",
    method: "GET",
    path: "/v1/account/webhooks/deliveries/{id}",
    unit: Unit::Call,
    action: Action::Read,
};
/// `POST /v1/account/webhooks/test/{id}`.
pub const WEBHOOK_TEST: CapabilityDef = CapabilityDef {
    id: "account.webhooks.test",
    method: "POST",
    path: "/v1/account/webhooks/test/{id}",
    unit: Unit::Call,
    action: Action::Admin,
};
/// `DELETE /v1/account/webhooks/delete/{id}` (POST as well).
pub const WEBHOOK_DELETE: CapabilityDef = CapabilityDef {
    id: "account.webhooks.delete",
    method: "DELETE",
    path: "/v1/account/webhooks/delete/{id}",
    unit: Unit::Call,
    action: Action::Admin,
};
/// `GET /v1/admin/keys` (admin API: needs the `accounts` action).
pub const ADMIN_KEYS: CapabilityDef = CapabilityDef {
    id: "admin.keys.list",
    method: "GET",
    path: "/v1/admin/keys",
    unit: Unit::Call,
    action: Action::Accounts,
};
/// `POST /v1/admin/keys/create` (admin API: needs the `accounts` action).
pub const ADMIN_KEYS_CREATE: CapabilityDef = CapabilityDef {
    id: "admin.keys.create",
    method: "POST",
    path: "/v1/admin/keys/create",
    unit: Unit::Call,
    action: Action::Accounts,
};
/// `POST /v1/admin/keys/revoke` (admin API: needs the `accounts` action).
pub const ADMIN_KEYS_REVOKE: CapabilityDef = CapabilityDef {
    id: "admin.keys.revoke",
    method: "POST",
    path: "/v1/admin/keys/revoke",
    unit: Unit::Call,
    action: Action::Accounts,
};
/// `POST /v1/admin/keys/rotate` (admin API: needs the `accounts` action).
pub const ADMIN_KEYS_ROTATE: CapabilityDef = CapabilityDef {
    id: "admin.keys.rotate",
    method: "POST",
    path: "/v1/admin/keys/rotate",
    unit: Unit::Call,
    action: Action::Accounts,
};
/// `POST /v1/admin/keys/limits` (admin API: needs the `accounts` action).
pub const ADMIN_KEYS_LIMITS: CapabilityDef = CapabilityDef {
    id: "admin.keys.limits",
    method: "POST",
    path: "/v1/admin/keys/limits",
    unit: Unit::Call,
    action: Action::Accounts,
};
/// `GET /v1/admin/projects` (admin API: needs the `accounts` action).
pub const ADMIN_PROJECTS: CapabilityDef = CapabilityDef {
    id: "admin.projects.list",
    method: "GET",
    path: "/v1/admin/projects",
    unit: Unit::Call,
    action: Action::Accounts,
};
/// `POST /v1/admin/projects/limits` (admin API: needs the `accounts` action).
pub const ADMIN_PROJECTS_LIMITS: CapabilityDef = CapabilityDef {
    id: "admin.projects.limits",
    method: "POST",
    path: "/v1/admin/projects/limits",
    unit: Unit::Call,
    action: Action::Accounts,
};
/// `GET /v1/discovery`. Needs no key, so it is never metered nor scoped;
/// listed for completeness of the catalogue.
pub const DISCOVERY: CapabilityDef = CapabilityDef {
    id: "discovery",
    method: "GET",
    path: "/v1/discovery",
    unit: Unit::Call,
    action: Action::Read,
};

/// `GET /v1/discovery/{capability_id}`: one capability's record (no key).
pub const DISCOVERY_GET: CapabilityDef = CapabilityDef {
    id: "discovery.get",
    method: "GET",
    path: "/v1/discovery/{capability_id}",
    unit: Unit::Call,
    action: Action::Read,
};

/// The capabilities served without a key (discovery): routed bare, never
/// behind a guard.
pub const UNKEYED: &[CapabilityDef] = &[DISCOVERY, DISCOVERY_GET];

/// Routes served as well as a capability's own method and path, by that
/// same capability (`docs/api.md`): POST forms of deletes, for clients that
/// cannot send DELETE. Discovery lists only the capability's own.
pub const ALIASES: &[(&str, &str)] = &[
    ("POST", "/v1/queue/delete/{queue}"),
    ("POST", "/v1/queue/delete"),
    (
        "POST",
        "/v1/queue/push_unsubscribe/{queue}/{subscription_id}",
    ),
    ("POST", "/v1/cron/delete/{job_id}"),
    ("POST", "/v1/account/webhooks/delete/{id}"),
];

/// The action a key needs to read a stored payload (a message's payload,
/// its completed `result`, a cron schedule's payload) in an answer that does
/// not hand the message out: the one rule for payloads, written once. The
/// capabilities whose answers carry one are [`SHOWS_PAYLOADS`]; the
/// dashboard's message, queue, completed and dead-letter pages and its
/// payload search follow the same rule. Without it a key gets the record
/// with `payload_withheld: true` and no payload nor result (a payload search
/// is refused). `consume` needs no `peek`: handing a message out is what
/// consuming is, and it moves the message.
pub const PAYLOAD_ACTION: Action = Action::Peek;

/// The capabilities whose answers carry a stored payload only for keys
/// allowed [`PAYLOAD_ACTION`] (withheld otherwise). `queue.publish` echoes
/// the caller's own payload and `queue.consume` hands the message out: not
/// listed.
pub const SHOWS_PAYLOADS: &[CapabilityDef] = &[
    MESSAGE_GET,
    CRON_CREATE,
    CRON_LIST,
    CRON_GET,
    CRON_UPDATE,
    CRON_PAUSE,
    CRON_RESUME,
];

/// Every capability, in the order discovery lists them.
pub const CAPABILITIES: &[CapabilityDef] = &[
    PUBLISH,
    PUBLISH_BATCH,
    CONSUME,
    ACK,
    ACK_BATCH,
    NACK,
    EXTEND,
    CREATE,
    QUEUE_UPDATE,
    QUEUE_PAUSE,
    QUEUE_RESUME,
    LIST,
    GET,
    DELETE,
    STATS,
    MESSAGE_GET,
    CANCEL,
    PURGE,
    REDRIVE,
    BALANCE,
    USAGE,
    PUSH_SUBSCRIBE,
    PUSH_SUBSCRIPTIONS,
    PUSH_UNSUBSCRIBE,
    CRON_CREATE,
    CRON_LIST,
    CRON_GET,
    CRON_UPDATE,
    CRON_PAUSE,
    CRON_RESUME,
    CRON_DELETE,
    WEBHOOK_REGISTER,
    WEBHOOK_LIST,
    WEBHOOK_DELIVERIES,
    WEBHOOK_TEST,
    WEBHOOK_DELETE,
    ADMIN_KEYS,
    ADMIN_KEYS_CREATE,
    ADMIN_KEYS_REVOKE,
    ADMIN_KEYS_ROTATE,
    ADMIN_KEYS_LIMITS,
    ADMIN_PROJECTS,
    ADMIN_PROJECTS_LIMITS,
    DISCOVERY,
    DISCOVERY_GET,
];

/// Looks a capability up by id (price tables and stored usage name them).
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
