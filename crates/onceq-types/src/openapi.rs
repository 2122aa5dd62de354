//! Schemas the derives cannot express (feature `openapi`).

use utoipa::openapi::{
    RefOr, Schema,
    schema::{ArrayBuilder, ObjectBuilder, OneOfBuilder, SchemaType, Type},
};

/// Message headers on publish: string to string, at most 64 entries
/// (`null` means none, as for the other optional fields).
pub fn headers() -> impl Into<RefOr<Schema>> {
    ObjectBuilder::new()
        .schema_type(SchemaType::Array(vec![Type::Object, Type::Null]))
        .additional_properties(Some(
            ObjectBuilder::new()
                .schema_type(SchemaType::Type(Type::String))
                .max_length(Some(4096)),
        ))
        .max_properties(Some(64))
        .property_names(Some(
            ObjectBuilder::new()
                .schema_type(SchemaType::Type(Type::String))
                .min_length(Some(1))
                .max_length(Some(128))
                .pattern(Some("^[A-Za-z0-9_.-]+$")),
        ))
        .description(Some(
            "String to string; names 1 to 128 bytes of [A-Za-z0-9_.-], case-insensitive (stored lower-case); values at most 4096 bytes. Counted toward the 262144-byte message limit.",
        ))
}

/// A payload: any JSON value but `null` (at most 256 KiB as compact JSON).
///
/// Said as a `oneOf` of one schema per JSON type rather than one schema
/// with `type: [object, array, string, number, boolean]`: both mean the
/// same, but client generators (openapi-python-client) drop an operation
/// whose body has a type list, and take a `oneOf` as a union. The five
/// types are disjoint, so exactly one branch matches any value.
pub fn payload() -> impl Into<RefOr<Schema>> {
    let typed = |t: Type| ObjectBuilder::new().schema_type(t);
    OneOfBuilder::new()
        // An object's members and an array's items are any JSON, null
        // included (JSON Schema's default for members; `{}` for items):
        // only the payload itself may not be null.
        .item(typed(Type::Object))
        .item(ArrayBuilder::new().items(ObjectBuilder::new().schema_type(SchemaType::AnyValue)))
        .item(typed(Type::String))
        .item(typed(Type::Number))
        .item(typed(Type::Boolean))
        .description(Some(
            "Any JSON value but null, at most 262144 bytes as compact JSON.",
        ))
}

/// A stored payload in an answer that may withhold it: a payload, or
/// `null` when the key lacks `peek` (`payload_withheld: true`).
pub fn payload_or_withheld() -> impl Into<RefOr<Schema>> {
    let typed = |t: Type| ObjectBuilder::new().schema_type(t);
    OneOfBuilder::new()
        .item(typed(Type::Object))
        .item(ArrayBuilder::new().items(ObjectBuilder::new().schema_type(SchemaType::AnyValue)))
        .item(typed(Type::String))
        .item(typed(Type::Number))
        .item(typed(Type::Boolean))
        .item(typed(Type::Null))
        .description(Some(
            "The stored payload; null when withheld (payload_withheld: the key lacks peek).",
        ))
}
