//! Schemas the derives cannot express (feature `openapi`).

use utoipa::openapi::{
    RefOr, Schema,
    schema::{ArrayBuilder, ObjectBuilder, OneOfBuilder, SchemaType, Type},
};

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
