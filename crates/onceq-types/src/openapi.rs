//! Schemas the derives cannot express (feature `openapi`).

use utoipa::openapi::{
    RefOr, Schema,
    schema::{ObjectBuilder, SchemaType, Type},
};

/// Message headers on publish: string to string, at most 64 entries.
pub fn headers() -> impl Into<RefOr<Schema>> {
    ObjectBuilder::new()
        .schema_type(SchemaType::Type(Type::Object))
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
pub fn payload() -> impl Into<RefOr<Schema>> {
    ObjectBuilder::new()
        .schema_type(SchemaType::Array(vec![
            Type::Object,
            Type::Array,
            Type::String,
            Type::Number,
            Type::Boolean,
        ]))
        .description(Some(
            "Any JSON value but null, at most 262144 bytes as compact JSON.",
        ))
}
