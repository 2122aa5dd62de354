//! Schemas the derives cannot express (feature `openapi`).

use utoipa::openapi::{
    RefOr, Schema,
    schema::{ObjectBuilder, SchemaType, Type},
};

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
