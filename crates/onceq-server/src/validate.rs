//! Checks of request fields. Each failure is a 400 `INVALID_PARAMS` whose
//! message names the field and what it must be.

use onceq_types::attempt::MAX_ACK_RESULT_BYTES;
use onceq_types::{ErrorCode, MAX_PAYLOAD_BYTES, names};
use std::fmt::Display;

use serde_json::value::RawValue;

use crate::ApiError;

/// A field's name as an error names it, formatted only if one does: what
/// the checks below take (a `&str` is one; a message's fields are
/// `input::Named`, since formatting `messages[3].payload` and its siblings
/// up front was eight strings per message of a publish_batch).
pub trait Field: Display + Copy {}
impl<T: Display + Copy> Field for T {}

/// The longest idempotency key, message group id, message id or receipt.
pub const MAX_TOKEN_BYTES: usize = 255;

/// A required field.
pub fn required<T>(field: impl Field, value: Option<T>) -> Result<T, ApiError> {
    value.ok_or_else(|| ApiError::invalid(format!("{field} is required")))
}

/// The name of a queue that may exist: a valid name, or the default DLQ
/// name (`<name>-dlq`) of one.
pub fn queue_name(field: &str, name: &str) -> Result<(), ApiError> {
    if names::is_addressable_queue_name(name) {
        Ok(())
    } else {
        new_queue_name(field, name)
    }
}

/// A name for a queue being created.
pub fn new_queue_name(field: &str, name: &str) -> Result<(), ApiError> {
    if names::is_valid_queue_name(name) {
        Ok(())
    } else {
        Err(ApiError::invalid(format!(
            "{field} must match ^[A-Za-z0-9][A-Za-z0-9_.-]{{0,79}}$ (got {:?})",
            truncate(name)
        )))
    }
}

/// A required queue name.
pub fn required_queue(field: &str, name: Option<String>) -> Result<String, ApiError> {
    let name = required(field, name)?;
    queue_name(field, &name)?;
    Ok(name)
}

/// An optional integer in `min..=max`, `default` when absent.
pub fn int_in(
    field: impl Field,
    value: Option<i64>,
    min: i64,
    max: i64,
    default: i64,
) -> Result<i64, ApiError> {
    match value {
        None => Ok(default),
        Some(v) if (min..=max).contains(&v) => Ok(v),
        Some(v) => Err(ApiError::invalid(format!(
            "{field} must be between {min} and {max} (got {v})"
        ))),
    }
}

/// An opaque token (idempotency key, group id, message id, receipt):
/// 1..=255 bytes of printable text.
pub fn token(field: impl Field, value: &str) -> Result<(), ApiError> {
    if value.is_empty() || value.len() > MAX_TOKEN_BYTES {
        return Err(ApiError::invalid(format!(
            "{field} must be 1 to {MAX_TOKEN_BYTES} bytes long (got {})",
            value.len()
        )));
    }
    if value.chars().any(char::is_control) {
        return Err(ApiError::invalid(format!(
            "{field} must not contain control characters"
        )));
    }
    Ok(())
}

/// An optional token.
pub fn opt_token(field: impl Field, value: Option<String>) -> Result<Option<String>, ApiError> {
    if let Some(v) = &value {
        token(field, v)?;
    }
    Ok(value)
}

/// A required token.
pub fn required_token(field: impl Field, value: Option<String>) -> Result<String, ApiError> {
    let v = required(field, value)?;
    token(field, &v)?;
    Ok(v)
}

/// An ack's `result`: any JSON (`null` or left out: none), kept in compact
/// form, at most [`MAX_ACK_RESULT_BYTES`] (the one rule; 413 beyond).
pub fn ack_result(field: &str, raw: Option<Box<RawValue>>) -> Result<Option<String>, ApiError> {
    let Some(raw) = raw else { return Ok(None) };
    let mut value =
        strict_json(raw.get()).map_err(|e| ApiError::invalid(format!("{field}: {e}")))?;
    value.sort_all_objects();
    let compact =
        serde_json::to_string(&value).map_err(|e| ApiError::invalid(format!("{field}: {e}")))?;
    if compact.len() > MAX_ACK_RESULT_BYTES {
        return Err(ApiError::new(
            ErrorCode::QueueMessageTooLarge,
            format!(
                "{field} is {} bytes as compact JSON; the limit is {MAX_ACK_RESULT_BYTES} bytes",
                compact.len()
            ),
        )
        .with_hint("keep the output in your own storage and put its id in result"));
    }
    Ok(Some(compact))
}

/// A payload: any JSON value but `null`, returned in canonical compact form
/// (object keys sorted), whose byte length is its size. Two payloads that
/// differ only in key order or whitespace are the same payload for dedupe.
pub fn payload(field: impl Field, raw: Option<Box<RawValue>>) -> Result<String, ApiError> {
    let raw =
        raw.ok_or_else(|| ApiError::invalid(format!("{field} is required and must not be null")))?;
    let mut value =
        strict_json(raw.get()).map_err(|e| ApiError::invalid(format!("{field}: {e}")))?;
    // Explicit, so canonical form survives a dependency turning on
    // serde_json's `preserve_order`.
    value.sort_all_objects();
    let canonical =
        serde_json::to_string(&value).map_err(|e| ApiError::invalid(format!("{field}: {e}")))?;
    if canonical.len() > MAX_PAYLOAD_BYTES {
        return Err(ApiError::new(
            ErrorCode::QueueMessageTooLarge,
            format!(
                "{field} is {} bytes as compact JSON; the limit is {MAX_PAYLOAD_BYTES} bytes",
                canonical.len()
            ),
        ));
    }
    Ok(canonical)
}

/// Parses JSON like `serde_json::from_str`, but refuses an object with a
/// duplicate key: which of the two values a consumer would see is up to its
/// parser, so a payload holding both is ambiguous. Nesting is bounded by
/// serde_json's recursion limit (128).
pub fn strict_json(text: &str) -> Result<serde_json::Value, serde_json::Error> {
    use serde::de::DeserializeSeed;
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Strict.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// A `serde_json::Value` seed that errors on duplicate object keys.
struct Strict;

impl<'de> serde::de::DeserializeSeed<'de> for Strict {
    type Value = serde_json::Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Strict {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
        serde_json::Number::from_f64(v)
            .map(serde_json::Value::Number)
            .ok_or_else(|| E::custom("number out of range"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element_seed(Strict)? {
            items.push(v);
        }
        Ok(serde_json::Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(serde::de::Error::custom(format!(
                    "duplicate key {:?} in an object",
                    truncate(&key)
                )));
            }
            let value = map.next_value_seed(Strict)?;
            object.insert(key, value);
        }
        Ok(serde_json::Value::Object(object))
    }
}

fn truncate(s: &str) -> String {
    s.chars().take(100).collect()
}

/// An RFC 3339 time in `field` (`example` shows one). Two refusals, each
/// saying which it is: not RFC 3339 at all, or RFC 3339 but outside the
/// times the server can hold (`9999-12-31T23:59:59Z` is a valid RFC 3339
/// time the server cannot store: it says so and gives the range).
pub fn timestamp(field: &str, value: &str, example: &str) -> Result<jiff::Timestamp, ApiError> {
    use jiff::{Timestamp, fmt::temporal::Pieces};
    if let Ok(ts) = value.parse::<Timestamp>() {
        return Ok(ts);
    }
    // A whole date, time and offset that still did not make a timestamp
    // is only out of range.
    let complete = Pieces::parse(value).is_ok_and(|p| p.time().is_some() && p.offset().is_some());
    if complete {
        Err(ApiError::invalid(format!(
            "{field}: {value:?} is out of range: times from {} to {} are accepted",
            Timestamp::MIN,
            Timestamp::MAX
        ))
        .with_hint(format!("send a time within that range, such as {example}")))
    } else {
        Err(
            ApiError::invalid(format!("{field}: {value:?} is not an RFC 3339 time")).with_hint(
                format!(
                    "send a date, a time and an offset, such as {example} or one ending in +01:00"
                ),
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_json_refuses_duplicates_and_deep_nesting() {
        assert_eq!(
            strict_json(r#"{"b": [1, 2.5, "x", null, true], "a": {}}"#).unwrap(),
            serde_json::json!({"a": {}, "b": [1, 2.5, "x", null, true]})
        );
        assert!(strict_json(r#"{"a": 1, "a": 2}"#).is_err());
        assert!(strict_json(r#"[{"x": {"a": 1, "a": 1}}]"#).is_err());
        assert!(strict_json(&format!("{}{}", "[".repeat(200), "]".repeat(200))).is_err());
        assert!(strict_json("1e400").is_err());
        assert!(strict_json("1 2").is_err());
        assert_eq!(
            strict_json("-9223372036854775808").unwrap(),
            serde_json::json!(i64::MIN)
        );
    }
}
