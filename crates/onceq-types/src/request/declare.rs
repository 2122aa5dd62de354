//! The `request!` macro that declares every request body, and what it
//! records of each: its wire names ([`Fields`]), for the near-miss rule
//! ([`near_miss`]) that every decoder of a body applies.

/// Declares a request body: the derives every body has, and one spelling
/// for each kind of field that recurs across bodies, so that a kind's rule
/// (its OpenAPI schema, its serde handling) is written once:
/// - `#[queue]`: the queue a call names (required, a queue or DLQ name);
/// - `#[required_token]`, `#[token]`: a required or optional 1..=255
///   character token without control characters (ids, keys, receipts);
/// - `#[whole(<schema bounds>)]`: an optional integer, written as any whole
///   JSON number, within those bounds;
/// - `#[items]`: a list of another `request!` body, whose fields are the
///   call's too (for the near-miss rule).
///
/// Other fields pass through as written. Each body also gets its wire
/// names ([`Fields`]), so that a camelCase near-miss of any of them is
/// refused ([`near_miss`]) wherever bodies are decoded. The markers stand after a field's
/// doc comment and before nothing else.
macro_rules! request {
    (
        $(#[doc = $doc:literal])*
        pub struct $name:ident { $($fields:tt)* }
    ) => {
        request!(@fields [$($doc),*] $name [] [] [] $($fields)*);
    };
    // Done: the struct, and its wire names for the near-miss rule
    // ([`Fields`]).
    (@fields [$($doc:literal),*] $name:ident [$($done:tt)*] [$($wire:expr),*] [$($nf:ident => $nt:ty),*]) => {
        $(#[doc = $doc])*
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        #[derive(Debug, Clone, Default, Serialize, Deserialize)]
        pub struct $name { $($done)* }

        impl $crate::request::Fields for $name {
            const FIELDS: &'static [&'static str] = &[$($wire),*];

            #[allow(unused_variables)]
            fn nested(field: &str) -> &'static [&'static str] {
                $(if field == stringify!($nf) {
                    return <$nt as $crate::request::Fields>::FIELDS;
                })*
                &[]
            }
        }
    };
    (@fields $docs:tt $name:ident [$($done:tt)*] [$($wire:expr),*] $nested:tt
        $(#[doc = $d:literal])* #[queue] pub $f:ident: Option<String>, $($rest:tt)*
    ) => {
        request!(@fields $docs $name [$($done)*
            $(#[doc = $d])*
            #[cfg_attr(
                feature = "openapi",
                schema(
                    required = true,
                    nullable = false,
                    pattern = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}(-dlq)?$"
                )
            )]
            pub $f: Option<String>,
        ] [$($wire,)* stringify!($f)] $nested $($rest)*);
    };
    (@fields $docs:tt $name:ident [$($done:tt)*] [$($wire:expr),*] $nested:tt
        $(#[doc = $d:literal])* #[required_token] pub $f:ident: Option<String>, $($rest:tt)*
    ) => {
        request!(@fields $docs $name [$($done)*
            $(#[doc = $d])*
            #[cfg_attr(
                feature = "openapi",
                schema(
                    required = true,
                    nullable = false,
                    min_length = 1,
                    max_length = 255,
                    pattern = "^[^\\u0000-\\u001F\\u007F-\\u009F]+$"
                )
            )]
            pub $f: Option<String>,
        ] [$($wire,)* stringify!($f)] $nested $($rest)*);
    };
    (@fields $docs:tt $name:ident [$($done:tt)*] [$($wire:expr),*] $nested:tt
        $(#[doc = $d:literal])* #[token] pub $f:ident: Option<String>, $($rest:tt)*
    ) => {
        request!(@fields $docs $name [$($done)*
            $(#[doc = $d])*
            #[serde(skip_serializing_if = "Option::is_none")]
            #[cfg_attr(
                feature = "openapi",
                schema(
                    min_length = 1,
                    max_length = 255,
                    pattern = "^[^\\u0000-\\u001F\\u007F-\\u009F]+$"
                )
            )]
            pub $f: Option<String>,
        ] [$($wire,)* stringify!($f)] $nested $($rest)*);
    };
    (@fields $docs:tt $name:ident [$($done:tt)*] [$($wire:expr),*] $nested:tt
        $(#[doc = $d:literal])* #[whole($($bounds:tt)*)] pub $f:ident: Option<i64>, $($rest:tt)*
    ) => {
        request!(@fields $docs $name [$($done)*
            $(#[doc = $d])*
            #[serde(skip_serializing_if = "Option::is_none")]
            #[cfg_attr(feature = "openapi", schema($($bounds)*))]
            #[serde(default, deserialize_with = "crate::request::whole::opt")]
            pub $f: Option<i64>,
        ] [$($wire,)* stringify!($f)] $nested $($rest)*);
    };
    // `#[items]`: a list of bodies of another request! type, whose fields
    // are fields of the same call (publish_batch's messages).
    (@fields $docs:tt $name:ident [$($done:tt)*] [$($wire:expr),*] [$($nf:ident => $nt:ty),*]
        $(#[doc = $d:literal])* #[items] $(#[$attr:meta])* pub $f:ident: Option<Vec<$item:ty>>, $($rest:tt)*
    ) => {
        request!(@fields $docs $name [$($done)* $(#[doc = $d])* $(#[$attr])* pub $f: Option<Vec<$item>>,]
            [$($wire,)* stringify!($f)] [$($nf => $nt,)* $f => $item] $($rest)*);
    };
    // A field serde knows by another name: that name is its wire name.
    (@fields $docs:tt $name:ident [$($done:tt)*] [$($wire:expr),*] $nested:tt
        // `$w:tt`, not `:literal`: a literal fragment is passed on wrapped,
        // and utoipa's reading of `serde(rename)` then misses it (the schema
        // named the Rust field; tests/it/openapi.rs checks).
        $(#[doc = $d:literal])* #[serde(rename = $w:tt $($sattr:tt)*)] $(#[$attr:meta])* pub $f:ident: $t:ty, $($rest:tt)*
    ) => {
        request!(@fields $docs $name [$($done)* $(#[doc = $d])* #[serde(rename = $w $($sattr)*)] $(#[$attr])* pub $f: $t,]
            [$($wire,)* $w] $nested $($rest)*);
    };
    (@fields $docs:tt $name:ident [$($done:tt)*] [$($wire:expr),*] $nested:tt
        $(#[$attr:meta])* pub $f:ident: $t:ty, $($rest:tt)*
    ) => {
        request!(@fields $docs $name [$($done)* $(#[$attr])* pub $f: $t,]
            [$($wire,)* stringify!($f)] $nested $($rest)*);
    };
}

/// What the `request!` macro knows of a body: the names its fields have on
/// the wire, for the near-miss rule ([`near_miss`]).
pub trait Fields {
    /// The body's own fields, as the client spells them.
    const FIELDS: &'static [&'static str];
    /// The fields of the bodies listed in `field` (`messages` of
    /// `publish_batch`: its items'), empty for any other field.
    fn nested(field: &str) -> &'static [&'static str];
}

/// The rule for mistyped fields (queue-api-2.md §2): an unknown `key` that
/// is the camelCase spelling of one of `fields` (`idempotencyKey` for
/// `idempotency_key`) is that field, misspelt; other unknown keys are
/// ignored (`None`). A product sold on exactly-once must not silently drop
/// a dedupe key.
pub fn near_miss(key: &str, fields: &[&'static str]) -> Option<&'static str> {
    if !key.bytes().any(|b| b.is_ascii_uppercase()) {
        return None;
    }
    let mut snake = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            snake.push('_');
            snake.push(c.to_ascii_lowercase());
        } else {
            snake.push(c);
        }
    }
    fields.iter().copied().find(|f| *f == snake)
}

pub(crate) use request;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{BatchItem, CreateQueue, PublishBatch};

    #[test]
    fn camel_case_of_a_field_is_a_near_miss_and_nothing_else_is() {
        let fields = &["idempotency_key", "queue", "max_messages"];
        assert_eq!(near_miss("idempotencyKey", fields), Some("idempotency_key"));
        assert_eq!(near_miss("maxMessages", fields), Some("max_messages"));
        assert_eq!(
            near_miss("queue", fields),
            None,
            "known fields are not unknown"
        );
        assert_eq!(near_miss("Queue", fields), None);
        assert_eq!(near_miss("traceId", fields), None);
        assert_eq!(
            near_miss("delaySeconds", fields),
            None,
            "not a field of this call"
        );
    }

    #[test]
    fn the_macro_records_wire_names_and_listed_bodies() {
        assert!(
            CreateQueue::FIELDS.contains(&"type"),
            "a renamed field by its wire name"
        );
        assert!(!CreateQueue::FIELDS.contains(&"queue_type"));
        assert_eq!(PublishBatch::FIELDS, &["queue", "messages"]);
        assert_eq!(PublishBatch::nested("messages"), BatchItem::FIELDS);
        assert!(PublishBatch::nested("queue").is_empty());
    }
}
