//! The admin API's bodies, validated into what the store takes, without
//! I/O. Every failure is a 400 `INVALID_PARAMS` naming the field, with what
//! it must be. `onceq keys`/`onceq projects` on the store directly go
//! through the same checks, so the CLI and the API refuse the same things.

use jiff::{SignedDuration, Timestamp};
use onceq_store::RateLimit;
use onceq_types::{
    admin::{KeyCreate, KeyLimits, KeyRotate, ProjectLimits},
    scope::{Actions, KeyScope, QueuePatterns},
};

use crate::{ApiError, validate};

/// The longest project name.
pub const MAX_PROJECT_LEN: usize = 80;

/// The longest key label.
pub const MAX_LABEL_LEN: usize = 200;

/// The longest expiry: 100 years, in seconds.
pub const MAX_EXPIRY_SECS: i64 = 3_153_600_000;

/// The largest rate limit burst.
pub const MAX_BURST: i64 = 1_000_000;

/// The most a credit limit may be, in USD.
pub const MAX_CREDIT_USD: f64 = 1e9;

/// `keys/create`, validated.
#[derive(Debug)]
pub struct NewKeyInput {
    /// The project.
    pub project: String,
    /// The label.
    pub label: Option<String>,
    /// The scope.
    pub scope: KeyScope,
    /// When it stops working.
    pub expires_at: Option<Timestamp>,
}

/// `keys/create`.
pub fn key_create(req: KeyCreate, now: Timestamp) -> Result<NewKeyInput, ApiError> {
    let project = project("project", req.project)?;
    let label = req
        .label
        .map(|l| printable("label", l, MAX_LABEL_LEN))
        .transpose()?;
    let actions = match req.actions.as_deref() {
        None => Actions::FULL,
        Some(text) => {
            Actions::parse(text).map_err(|e| ApiError::invalid(format!("actions: {e}")))?
        }
    };
    let queues = match req.queues.as_deref() {
        None => QueuePatterns::default(),
        Some(text) => {
            QueuePatterns::parse(text).map_err(|e| ApiError::invalid(format!("queues: {e}")))?
        }
    };
    Ok(NewKeyInput {
        project,
        label,
        scope: KeyScope { actions, queues },
        expires_at: after("expires_in_seconds", req.expires_in_seconds, now)?,
    })
}

/// `keys/rotate`: the old key's id and when it stops working.
pub fn key_rotate(req: KeyRotate, now: Timestamp) -> Result<(String, Option<Timestamp>), ApiError> {
    let key_id = key_id(req.key_id)?;
    let expires = after("expire_old_in_seconds", req.expire_old_in_seconds, now)?;
    Ok((key_id, expires))
}

/// `keys/limits`: the key and its rate limit (`None`: the server default).
pub fn key_limits(req: KeyLimits) -> Result<(String, Option<RateLimit>), ApiError> {
    let key_id = key_id(req.key_id)?;
    let rate = validate::required("rate_per_sec", req.rate_per_sec)?;
    Ok((key_id, rate_limit(rate, req.rate_burst)?))
}

/// `projects/limits`, validated: `None` leaves a setting as it is.
#[derive(Debug)]
pub struct ProjectLimitsInput {
    /// The project.
    pub project: String,
    /// The credit limit in micro-USD (`Some(None)`: no limit).
    pub credit_micros: Option<Option<u64>>,
    /// The rate limit (`Some(None)`: the server default).
    pub rate: Option<Option<RateLimit>>,
}

/// `projects/limits`.
pub fn project_limits(req: ProjectLimits) -> Result<ProjectLimitsInput, ApiError> {
    let project = project("project", req.project)?;
    let credit_micros = req
        .credit_limit_usd
        .map(|c| c.map(usd_micros).transpose())
        .transpose()?;
    if req.rate_per_sec.is_none() && req.rate_burst.is_some() {
        return Err(ApiError::invalid(
            "rate_burst needs rate_per_sec: send both (rate_per_sec: 0 for unlimited)",
        ));
    }
    let rate = req
        .rate_per_sec
        .map(|r| rate_limit(r, req.rate_burst))
        .transpose()?;
    if credit_micros.is_none() && rate.is_none() {
        return Err(ApiError::invalid(
            "nothing to set: send credit_limit_usd and/or rate_per_sec (null clears either)",
        ));
    }
    Ok(ProjectLimitsInput {
        project,
        credit_micros,
        rate,
    })
}

/// A required key id.
pub fn key_id(value: Option<String>) -> Result<String, ApiError> {
    let id = validate::required("key_id", value)?;
    validate::token("key_id", &id)?;
    Ok(id)
}

/// A required project name.
pub fn project(field: &str, value: Option<String>) -> Result<String, ApiError> {
    printable(field, validate::required(field, value)?, MAX_PROJECT_LEN)
}

fn printable(field: &str, value: String, max: usize) -> Result<String, ApiError> {
    let n = value.chars().count();
    if n == 0 || n > max || value.chars().any(char::is_control) {
        return Err(ApiError::invalid(format!(
            "{field} must be 1 to {max} printable characters (got {n} characters)"
        )));
    }
    Ok(value)
}

/// `seconds` from `now`, if given: 1 to 100 years' worth.
fn after(field: &str, seconds: Option<i64>, now: Timestamp) -> Result<Option<Timestamp>, ApiError> {
    seconds
        .map(|s| {
            let s = validate::int_in(field, Some(s), 1, MAX_EXPIRY_SECS, 1)?;
            now.checked_add(SignedDuration::from_secs(s))
                .map_err(|_| ApiError::invalid(format!("{field} is too far in the future")))
        })
        .transpose()
}

/// A rate limit: `None` (`null`) for the server's default; burst defaults
/// to one second's worth, at least 1.
fn rate_limit(per_sec: Option<f64>, burst: Option<i64>) -> Result<Option<RateLimit>, ApiError> {
    let Some(per_sec) = per_sec else {
        if burst.is_some() {
            return Err(ApiError::invalid(
                "rate_burst needs a rate_per_sec (null lifts the limit, burst and all)",
            ));
        }
        return Ok(None);
    };
    if !per_sec.is_finite() || !(0.0..=1e9).contains(&per_sec) {
        return Err(ApiError::invalid(format!(
            "rate_per_sec must be a number from 0 (unlimited) to 1000000000 (got {per_sec})"
        )));
    }
    let default = per_sec.ceil().clamp(1.0, MAX_BURST as f64) as i64;
    let burst = validate::int_in("rate_burst", burst, 1, MAX_BURST, default)?;
    Ok(Some(RateLimit {
        per_sec,
        burst: burst as u32,
    }))
}

/// USD as micro-USD: 0 to 1e9.
fn usd_micros(usd: f64) -> Result<u64, ApiError> {
    if !usd.is_finite() || !(0.0..=MAX_CREDIT_USD).contains(&usd) {
        return Err(ApiError::invalid(format!(
            "credit_limit_usd must be a number from 0 to 1000000000, or null for no limit (got {usd})"
        )));
    }
    Ok((usd * 1e6).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(e: ApiError) -> String {
        e.message().to_owned()
    }

    #[test]
    fn refusals_name_the_field() {
        let now = Timestamp::UNIX_EPOCH;
        let bad = |req: KeyCreate| message(key_create(req, now).unwrap_err());
        assert!(bad(KeyCreate::default()).contains("project is required"));
        let p = || Some("shop".to_owned());
        assert!(
            bad(KeyCreate {
                project: Some("a\nb".into()),
                ..Default::default()
            })
            .starts_with("project must be")
        );
        assert!(
            bad(KeyCreate {
                project: p(),
                actions: Some("write".into()),
                ..Default::default()
            })
            .starts_with("actions:")
        );
        assert!(
            bad(KeyCreate {
                project: p(),
                queues: Some("a b".into()),
                ..Default::default()
            })
            .starts_with("queues:")
        );
        assert!(
            bad(KeyCreate {
                project: p(),
                expires_in_seconds: Some(0),
                ..Default::default()
            })
            .starts_with("expires_in_seconds must be")
        );
        let limits = |body: &str| project_limits(serde_json::from_str(body).unwrap());
        assert!(message(limits(r#"{"project":"a"}"#).unwrap_err()).starts_with("nothing to set"));
        assert!(
            message(limits(r#"{"project":"a","credit_limit_usd":-1}"#).unwrap_err())
                .starts_with("credit_limit_usd must be")
        );
        assert!(
            message(limits(r#"{"project":"a","rate_burst":3}"#).unwrap_err())
                .starts_with("rate_burst needs")
        );
        let ok = limits(r#"{"project":"a","credit_limit_usd":null,"rate_per_sec":2.5}"#).unwrap();
        assert_eq!(ok.credit_micros, Some(None));
        assert_eq!(
            ok.rate,
            Some(Some(RateLimit {
                per_sec: 2.5,
                burst: 3
            }))
        );
        let keyed = key_limits(serde_json::from_str(r#"{"key_id":"abc"}"#).unwrap());
        assert!(message(keyed.unwrap_err()).contains("rate_per_sec is required"));
    }
}
