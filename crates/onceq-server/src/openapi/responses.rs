//! Answers as an operation's `responses(..)` lists them.
//!
//! `Ok<T>` is a 200 whose body is the success envelope around `T`;
//! `OkList<T>` the same around `{items: [T]}`. Each error type is one
//! status with the error envelope, its `error.code` restricted to the codes
//! that status carries (`ErrorCode::http_status`), so a client generated
//! from the document knows which codes to expect where.

use std::{collections::BTreeMap, marker::PhantomData};

use onceq_types::ErrorCode;
use utoipa::{
    IntoResponses, ToSchema,
    openapi::{
        ContentBuilder, HeaderBuilder, Ref, RefOr, ResponseBuilder,
        response::Response,
        schema::{ArrayBuilder, ObjectBuilder, Schema, Type},
    },
};

/// 200 with `{ok: true, data: T, error: null, metadata}`.
pub struct Ok<T>(PhantomData<T>);

/// 200 with `{ok: true, data: {items: [T]}, error: null, metadata}`.
pub struct OkList<T>(PhantomData<T>);

impl<T: ToSchema> IntoResponses for Ok<T> {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        let data = Ref::from_schema_name(T::name());
        ok(data.into())
    }
}

impl<T: ToSchema> IntoResponses for OkList<T> {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        let items = ArrayBuilder::new().items(Ref::from_schema_name(T::name()));
        let data = ObjectBuilder::new()
            .property("items", items)
            .required("items")
            .build();
        ok(Schema::Object(data).into())
    }
}

fn ok(data: RefOr<Schema>) -> BTreeMap<String, RefOr<Response>> {
    let envelope = ObjectBuilder::new()
        .description(Some("The success envelope."))
        .property(
            "ok",
            ObjectBuilder::new()
                .schema_type(Type::Boolean)
                .enum_values(Some([true])),
        )
        .required("ok")
        .property("data", data)
        .required("data")
        .property("error", ObjectBuilder::new().schema_type(Type::Null))
        .required("error")
        .property("metadata", Ref::from_schema_name("Metadata"))
        .required("metadata");
    let response = ResponseBuilder::new()
        .description("Success.")
        .content(
            "application/json",
            ContentBuilder::new().schema(Some(envelope)).build(),
        )
        .build();
    BTreeMap::from([("200".to_owned(), response.into())])
}

/// An error status with the codes it can carry and a description. Codes
/// one operation alone answers (`MESSAGE_NOT_FOUND`: `message_get`) are
/// left to that operation's own type ([`MessageMissing`]).
fn error(status: u16, description: &str) -> (String, RefOr<Response>) {
    let codes: Vec<ErrorCode> = ErrorCode::ALL
        .into_iter()
        .filter(|c| c.http_status() == status && *c != ErrorCode::MessageNotFound)
        .collect();
    error_of(status, &codes, description)
}

/// An error status carrying exactly `codes`.
fn error_of(status: u16, codes: &[ErrorCode], description: &str) -> (String, RefOr<Response>) {
    let codes: Vec<&str> = codes.iter().map(|c| c.as_str()).collect();
    let error = ObjectBuilder::new()
        .property(
            "code",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(codes.clone())),
        )
        .required("code")
        .property(
            "message",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .description(Some(
                    "What went wrong; names the offending field for bad input.",
                )),
        )
        .required("message")
        .property(
            "hint",
            ObjectBuilder::new()
                .schema_type(utoipa::openapi::schema::SchemaType::Array(vec![
                    Type::String,
                    Type::Null,
                ]))
                .description(Some(
                    "One short sentence on what to do about it; null where nothing useful can be said.",
                )),
        )
        .required("hint")
        .property(
            "retryable",
            ObjectBuilder::new()
                .schema_type(Type::Boolean)
                .description(Some(
                    "Whether the same call may succeed if retried unchanged.",
                )),
        )
        .required("retryable");
    let envelope = ObjectBuilder::new()
        .description(Some("The error envelope."))
        .property(
            "ok",
            ObjectBuilder::new()
                .schema_type(Type::Boolean)
                .enum_values(Some([false])),
        )
        .required("ok")
        .property("data", ObjectBuilder::new().schema_type(Type::Null))
        .required("data")
        .property("error", error)
        .required("error")
        .property("metadata", Ref::from_schema_name("Metadata"))
        .required("metadata");
    let mut response = ResponseBuilder::new()
        .description(format!("{} ({description})", codes.join(" or ")))
        .content(
            "application/json",
            ContentBuilder::new().schema(Some(envelope)).build(),
        );
    if matches!(status, 409 | 429 | 503) {
        response = response.header(
            "Retry-After",
            HeaderBuilder::new()
                .schema(Some(ObjectBuilder::new().schema_type(Type::Integer)))
                .description(Some(if status == 409 {
                    "With REQUEST_IN_FLIGHT: seconds until the first call's claim ends."
                } else {
                    "Seconds to wait before retrying."
                }))
                .build(),
        );
    }
    (status.to_string(), response.build().into())
}

macro_rules! error_responses {
    ($($(#[$doc:meta])* $name:ident => [$(($status:literal, $description:literal)),+];)+) => {$(
        $(#[$doc])*
        pub struct $name;

        impl IntoResponses for $name {
            fn responses() -> BTreeMap<String, RefOr<Response>> {
                BTreeMap::from([$(error($status, $description)),+])
            }
        }
    )+};
}

error_responses! {
    /// 400: a field is missing, has the wrong type or is out of range.
    InvalidParams => [(400, "a field is missing, malformed or out of range; the message names it")];
    /// 401: no key, or an unknown, revoked or expired one.
    Unauthorized => [(401, "missing, unknown, revoked or expired API key")];
    /// 402, 403 and 429: the guard of a keyed route refused the call (credit
    /// limit, key scope, rate limit); nothing was done.
    Refused => [
        (402, "the call would pass the project's credit limit; nothing was done"),
        (403, "the key's scope does not allow this call or this queue"),
        (429, "the key's or the project's rate limit; see Retry-After")
    ];
    /// 403 on `/metrics`: asked from the network of a server that serves it
    /// to loopback peers only.
    MetricsForbidden => [(403, "served to loopback peers only unless the server runs with --metrics-token or --metrics-public")];
    /// 404: the queue does not exist in the key's project (or the path
    /// matched no route: an empty `{queue}`).
    NotFound => [(404, "the queue does not exist in the key's project")];
    /// 404 of the admin API: no such key or project.
    AdminNotFound => [(404, "no active key with that key_id, or no project of that name")];
    /// 409: a queue of that name exists with other settings.
    Conflict => [(409, "a queue of that name exists with different settings")];
    /// 409 `REQUEST_IN_FLIGHT`: a call with the same `Idempotency-Key` is
    /// still being carried out (its route is in `idempotency::IDEMPOTENT`).
    InFlight => [(409, "a queue of that name exists with different settings (create), or a call with this Idempotency-Key is still being carried out (see Retry-After)")];
    /// 413: the body (or a payload) is too large.
    TooLarge => [(413, "the request body or a payload is too large")];
    /// 408: the body did not arrive within the server's body timeout.
    TimedOut => [(408, "the request body did not arrive in time; the connection is closed")];
    /// 422: an idempotency key reused with another payload.
    KeyReused => [(422, "an idempotency key was reused with a different payload")];
    /// 500 and 503: the store failed; on 503 nothing was done.
    StoreFailed => [
        (500, "an unexpected failure; never answered for bad input"),
        (503, "the store is unreachable; nothing was done")
    ];
}

/// A 404 `NOT_FOUND` described as `description` (an operation's own 404,
/// not a queue's).
pub fn not_found_of(description: &str) -> BTreeMap<String, RefOr<Response>> {
    BTreeMap::from([error_of(404, &[ErrorCode::NotFound], description)])
}

/// 404 of `message_get`: an unknown queue, or no such message in it or in
/// its dead-letter queue.
pub struct MessageMissing;

impl IntoResponses for MessageMissing {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        BTreeMap::from([error_of(
            404,
            &[ErrorCode::QueueNotFound, ErrorCode::MessageNotFound],
            "the queue does not exist in the key's project, or neither it nor its dead-letter queue holds the message",
        )])
    }
}
