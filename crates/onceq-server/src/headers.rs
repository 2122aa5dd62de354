//! Message headers (queue-api-2.md §3): the rule a publish's `headers` must
//! meet, their stored form, and their way back out.
//!
//! Stored as one canonical JSON object (names lower-cased, in name order,
//! compact), `None` when a message has none, so the common message costs
//! the store nothing. The store's CHECK only insists on an object; the
//! rule below is the server's, in this one place.

use onceq_types::{
    ErrorCode, Headers, MAX_HEADER_NAME_BYTES, MAX_HEADER_VALUE_BYTES, MAX_HEADERS,
    MAX_PAYLOAD_BYTES,
};
use serde_json::{Value, value::RawValue};

use crate::{ApiError, validate};

/// Checks a publish's `headers` (the field name given as `field`) and
/// returns their stored form: `None` when absent or empty.
pub fn parse(
    field: impl validate::Field,
    raw: Option<Box<RawValue>>,
) -> Result<Option<String>, ApiError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    // Strict: `{"a":"1","a":"2"}` is ambiguous, so refused like a payload.
    let value =
        validate::strict_json(raw.get()).map_err(|e| ApiError::invalid(format!("{field}: {e}")))?;
    let entries = match value {
        Value::Null => return Ok(None),
        Value::Object(entries) => entries,
        other => {
            return Err(ApiError::invalid(format!(
                "{field} must be an object of string values (got {})",
                kind(&other)
            )));
        }
    };
    if entries.len() > MAX_HEADERS {
        return Err(ApiError::invalid(format!(
            "{field} holds {} entries; at most {MAX_HEADERS} are allowed",
            entries.len()
        )));
    }
    let mut headers = Headers::new();
    for (name, value) in entries {
        check_name(field, &name)?;
        let Value::String(value) = value else {
            return Err(ApiError::invalid(format!(
                "{field}.{name} must be a string (got {})",
                kind(&value)
            )));
        };
        if value.len() > MAX_HEADER_VALUE_BYTES {
            return Err(ApiError::invalid(format!(
                "{field}.{name} is {} bytes; a header value may be at most \
                 {MAX_HEADER_VALUE_BYTES} bytes",
                value.len()
            )));
        }
        let lower = name.to_ascii_lowercase();
        if headers.insert(lower.clone(), value).is_some() {
            return Err(ApiError::invalid(format!(
                "{field} names `{lower}` twice (header names are case-insensitive)"
            )));
        }
    }
    if headers.is_empty() {
        return Ok(None);
    }
    serde_json::to_string(&headers)
        .map(Some)
        .map_err(|e| ApiError::invalid(format!("{field}: {e}")))
}

/// A message's payload and headers together are within the message limit.
pub fn check_size(
    field: impl validate::Field,
    payload: &str,
    headers: Option<&str>,
) -> Result<(), ApiError> {
    let Some(headers) = headers else {
        return Ok(());
    };
    let total = payload.len() + headers.len();
    if total > MAX_PAYLOAD_BYTES {
        return Err(ApiError::new(
            ErrorCode::QueueMessageTooLarge,
            format!(
                "{field}payload and {field}headers are {total} bytes together as compact \
                 JSON; the limit is {MAX_PAYLOAD_BYTES} bytes"
            ),
        ));
    }
    Ok(())
}

/// The headers of a stored message, for an answer.
pub fn stored(text: Option<&str>) -> Result<Headers, ApiError> {
    match text {
        None => Ok(Headers::new()),
        Some(text) => serde_json::from_str(text).map_err(|e| {
            ApiError::from_store(
                onceq_store::StoreError::internal(format!("stored headers: {e}")),
                "",
            )
        }),
    }
}

fn check_name(field: impl validate::Field, name: &str) -> Result<(), ApiError> {
    let valid = (1..=MAX_HEADER_NAME_BYTES).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if valid {
        return Ok(());
    }
    let shown: String = name.chars().take(40).collect();
    Err(ApiError::invalid(format!(
        "{field} has an invalid name {shown:?}: names are 1 to {MAX_HEADER_NAME_BYTES} bytes \
         of A-Z, a-z, 0-9, `_`, `.` and `-`"
    )))
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Option<Box<RawValue>> {
        Some(RawValue::from_string(s.to_owned()).unwrap())
    }

    fn message(e: ApiError) -> String {
        e.message().to_owned()
    }

    #[test]
    fn names_are_lowercased_and_sorted() {
        let got = parse("headers", raw(r#"{"X-Tenant":"a","TraceParent":"t"}"#)).unwrap();
        assert_eq!(
            got.as_deref(),
            Some(r#"{"traceparent":"t","x-tenant":"a"}"#)
        );
    }

    #[test]
    fn absent_null_and_empty_store_nothing() {
        assert_eq!(parse("headers", None).unwrap(), None);
        assert_eq!(parse("headers", raw("null")).unwrap(), None);
        assert_eq!(parse("headers", raw("{}")).unwrap(), None);
    }

    #[test]
    fn each_refusal_names_the_entry() {
        let cases = [
            (r#"["a"]"#, "must be an object"),
            (r#"{"a":1}"#, "headers.a must be a string"),
            (r#"{"bad name":"v"}"#, "invalid name \"bad name\""),
            (r#"{"":"v"}"#, "invalid name \"\""),
            (r#"{"A":"1","a":"2"}"#, "names `a` twice"),
            (r#"{"a":"1","a":"2"}"#, "duplicate"),
        ];
        for (input, want) in cases {
            let err = message(parse("headers", raw(input)).unwrap_err());
            assert!(err.contains(want), "{input}: {err}");
        }
        let long_name = format!(r#"{{"{}":"v"}}"#, "n".repeat(MAX_HEADER_NAME_BYTES + 1));
        assert!(message(parse("h", raw(&long_name)).unwrap_err()).contains("invalid name"));
        let long_value = format!(r#"{{"a":"{}"}}"#, "v".repeat(MAX_HEADER_VALUE_BYTES + 1));
        assert!(message(parse("h", raw(&long_value)).unwrap_err()).contains("h.a is 4097 bytes"));
        let many: Vec<String> = (0..=MAX_HEADERS)
            .map(|i| format!(r#""h{i}":"v""#))
            .collect();
        let many = format!("{{{}}}", many.join(","));
        assert!(message(parse("h", raw(&many)).unwrap_err()).contains("65 entries"));
    }

    #[test]
    fn the_limits_themselves_are_accepted() {
        let name = "n".repeat(MAX_HEADER_NAME_BYTES);
        let value = "v".repeat(MAX_HEADER_VALUE_BYTES);
        assert!(parse("h", raw(&format!(r#"{{"{name}":"{value}"}}"#))).is_ok());
        let many: Vec<String> = (0..MAX_HEADERS).map(|i| format!(r#""h{i}":"v""#)).collect();
        assert!(parse("h", raw(&format!("{{{}}}", many.join(",")))).is_ok());
    }

    #[test]
    fn headers_count_toward_the_message_limit() {
        let payload = "x".repeat(MAX_PAYLOAD_BYTES - 10);
        assert!(check_size("", &payload, Some(r#"{"a":"b"}"#)).is_ok());
        let err = check_size("", &payload, Some(r#"{"a":"bcd"}"#)).unwrap_err();
        assert_eq!(err.code(), ErrorCode::QueueMessageTooLarge);
        assert!(check_size("", &payload, None).is_ok());
    }

    #[test]
    fn stored_headers_come_back_as_a_map() {
        let h = stored(Some(r#"{"a":"1"}"#)).unwrap();
        assert_eq!(h.get("a").map(String::as_str), Some("1"));
        assert!(stored(None).unwrap().is_empty());
    }
}
