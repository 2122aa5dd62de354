//! The admin API (`/v1/admin/...`): keys and projects of every project,
//! for a key holding the `accounts` action ([`crate::scope::Action::Accounts`]).
//! The records here are also what `onceq keys list --json` and `onceq
//! projects list --json` print, whether they read the store or the API.
//!
//! Request fields are `Option`s so that the server's refusal names a
//! missing field itself; unknown fields are ignored, as in every body.
//! A field that may be cleared (`credit_limit_usd`, `rate_per_sec`) is
//! three-way: absent leaves it as it is, `null` clears it, a value sets it.

use jiff::Timestamp;
use serde::{Deserialize, Deserializer, Serialize};

use crate::request::request;

/// A key as the admin API shows it: never its secret.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KeyInfo {
    /// The key's public id (the `<id>` of `oq_<id>_<secret>`).
    pub key_id: String,
    /// The project it acts for.
    pub project: String,
    /// A note for operators.
    pub label: Option<String>,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it was revoked; `null` while it works.
    pub revoked_at: Option<Timestamp>,
    /// What it may do: `full`, or a comma-separated list of `publish`,
    /// `consume`, `read`, `admin`, `accounts`.
    pub actions: String,
    /// The queues it may use: comma-separated names or `*` patterns.
    pub queues: String,
    /// When it stops working; `null`: never.
    pub expires_at: Option<Timestamp>,
    /// Its own rate limit in requests per second (0: unlimited); `null`:
    /// the server's per-key default.
    pub rate_per_sec: Option<f64>,
    /// The burst of its own rate limit.
    pub rate_burst: Option<u32>,
}

/// A key just created or rotated: the secret is in this answer only.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CreatedKey {
    /// The whole key, `oq_<id>_<secret>`. Shown this once: the server keeps
    /// only its SHA-256 and no call returns it again.
    pub secret: String,
    /// The key's record.
    pub key: KeyInfo,
}

/// A project with its account settings.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProjectInfo {
    /// The project's name.
    pub name: String,
    /// When its first key or queue created it.
    pub created_at: Timestamp,
    /// The most it may spend in total, in USD; `null`: no limit.
    pub credit_limit_usd: Option<f64>,
    /// What it has spent, in USD, as written by the servers so far.
    pub spent_usd: f64,
    /// Its own rate limit in requests per second (0: unlimited); `null`:
    /// the server's per-project default.
    pub rate_per_sec: Option<f64>,
    /// The burst of its own rate limit.
    pub rate_burst: Option<u32>,
}

request! {
    /// `POST /v1/admin/keys/create`.
    pub struct KeyCreate {
        /// The project the key acts for (1 to 80 printable characters); created
        /// with its first key.
        #[cfg_attr(
            feature = "openapi",
            schema(
                required = true,
                nullable = false,
                min_length = 1,
                max_length = 80,
                pattern = "^[^\\u0000-\\u001F\\u007F-\\u009F]+$"
            )
        )]
        pub project: Option<String>,
        /// A note for operators (at most 200 printable characters).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(
            feature = "openapi",
            schema(
                min_length = 1,
                max_length = 200,
                pattern = "^[^\\u0000-\\u001F\\u007F-\\u009F]+$"
            )
        )]
        pub label: Option<String>,
        /// What the key may do: `full` (the default), or a comma-separated list
        /// of `publish`, `consume`, `read`, `admin`, `accounts`.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(
            feature = "openapi",
            schema(
                pattern = "^[\\s\\u0085]*(full|all|publish|consume|read|admin|accounts)(-only)?[\\s\\u0085]*(,[\\s\\u0085]*(full|all|publish|consume|read|admin|accounts)(-only)?[\\s\\u0085]*)*$"
            )
        )]
        pub actions: Option<String>,
        /// Queues it may use: comma-separated names or `*` patterns (default
        /// `*`), at most 32.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(
            feature = "openapi",
            schema(
                pattern = "^[\\s\\u0085]*[A-Za-z0-9_.*-]{1,100}[\\s\\u0085]*(,[\\s\\u0085]*[A-Za-z0-9_.*-]{1,100}[\\s\\u0085]*){0,31}$"
            )
        )]
        pub queues: Option<String>,
        /// The key stops working this many seconds from now (default: never).
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "crate::request::whole::opt"
        )]
        #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 3_153_600_000_i64))]
        pub expires_in_seconds: Option<i64>,
    }
}

request! {
    /// `POST /v1/admin/keys/revoke`.
    pub struct KeyRevoke {
        /// The key's public id.
        #[required_token]
        pub key_id: Option<String>,
    }
}

request! {
    /// `POST /v1/admin/keys/rotate`: a new key with the old one's project,
    /// scope, expiry and rate limit. Both work until the old one is revoked or
    /// expires.
    pub struct KeyRotate {
        /// The key to replace (its public id).
        #[required_token]
        pub key_id: Option<String>,
        /// The old key stops working this many seconds from now (default: when
        /// it is revoked or its own expiry comes).
        #[whole(minimum = 1, maximum = 3_153_600_000_i64)]
        pub expire_old_in_seconds: Option<i64>,
    }
}

request! {
    /// `POST /v1/admin/keys/limits`: a key's own rate limit.
    pub struct KeyLimits {
        /// The key's public id.
        #[required_token]
        pub key_id: Option<String>,
        /// Requests per second (0: unlimited); `null`: back to the server's
        /// default. Required.
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "present"
        )]
        #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>, required = true, minimum = 0))]
        pub rate_per_sec: Option<Option<f64>>,
        /// Requests at once after an idle spell (default: one second's worth).
        #[whole(minimum = 1, maximum = 1_000_000)]
        pub rate_burst: Option<i64>,
    }
}

request! {
    /// `POST /v1/admin/projects/limits`: a project's credit limit and rate
    /// limit; what the body leaves out stays as it is.
    pub struct ProjectLimits {
        /// The project.
        #[cfg_attr(
            feature = "openapi",
            schema(
                required = true,
                nullable = false,
                min_length = 1,
                max_length = 80,
                pattern = "^[^\\u0000-\\u001F\\u007F-\\u009F]+$"
            )
        )]
        pub project: Option<String>,
        /// The most it may spend in total, in USD (0 to 1e9); `null`: no limit.
        /// Past it, billable calls answer 402 `INSUFFICIENT_CREDIT`.
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "present"
        )]
        #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>, minimum = 0, maximum = 1e9))]
        pub credit_limit_usd: Option<Option<f64>>,
        /// Requests per second (0: unlimited); `null`: back to the server's
        /// per-project default.
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "present"
        )]
        #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>, minimum = 0))]
        pub rate_per_sec: Option<Option<f64>>,
        /// Requests at once after an idle spell (default: one second's worth);
        /// only with `rate_per_sec`.
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "crate::request::whole::opt"
        )]
        #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 1_000_000))]
        pub rate_burst: Option<i64>,
    }
}

/// A field that is there, `null` or not: `Some(None)` for `null` (serde
/// maps a missing field to the `default`, `None`).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_null_and_set_are_three_things() {
        let p: ProjectLimits = serde_json::from_str(r#"{"project":"a"}"#).unwrap();
        assert_eq!(p.credit_limit_usd, None);
        let p: ProjectLimits =
            serde_json::from_str(r#"{"project":"a","credit_limit_usd":null}"#).unwrap();
        assert_eq!(p.credit_limit_usd, Some(None));
        let p: ProjectLimits =
            serde_json::from_str(r#"{"project":"a","credit_limit_usd":2.5}"#).unwrap();
        assert_eq!(p.credit_limit_usd, Some(Some(2.5)));
        let back = serde_json::to_value(&p).unwrap();
        assert_eq!(
            back,
            serde_json::json!({"project":"a","credit_limit_usd":2.5})
        );
        let cleared = ProjectLimits {
            credit_limit_usd: Some(None),
            ..p
        };
        let back = serde_json::to_value(&cleared).unwrap();
        assert_eq!(
            back,
            serde_json::json!({"project":"a","credit_limit_usd":null})
        );
    }
}
