//! The `Idempotency-Key` header, the 409 `REQUEST_IN_FLIGHT` and the 422
//! `IDEMPOTENCY_KEY_REUSED` answers on every operation of a capability in
//! `idempotency::IDEMPOTENT`: added where the route is registered
//! (`app::routes`), so the document and the call ledger read one list.

use utoipa::{
    IntoResponses,
    openapi::{
        Paths,
        path::{Operation, ParameterBuilder, ParameterIn},
        schema::{ObjectBuilder, Type},
    },
};

use super::responses::{InFlight, KeyReused};

/// Adds the header and the answers to every operation of `paths`.
pub(crate) fn document(paths: &mut Paths) {
    for item in paths.paths.values_mut() {
        for op in [
            &mut item.post,
            &mut item.put,
            &mut item.delete,
            &mut item.patch,
        ]
        .into_iter()
        .flatten()
        {
            document_operation(op);
        }
    }
}

fn document_operation(op: &mut Operation) {
    let header = ParameterBuilder::new()
        .name("Idempotency-Key")
        .parameter_in(ParameterIn::Header)
        .description(Some(
            "Makes a retry safe: within the dedupe window the same call with the same key answers what the first answered (metadata.idempotent_replay: true) and does nothing more; another body with the same key is 422, a retry while the first is running is 409 with Retry-After. Keys are scoped by project and capability; a replay is answered only to a key allowed to make the call now (403 otherwise, never the stored answer). 1 to 255 characters of visible ASCII (! to ~, no spaces).",
        ))
        .schema(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(1))
                .max_length(Some(255))
                .pattern(Some("^[!-~]{1,255}$")),
        ))
        .build();
    op.parameters
        .get_or_insert_with(Vec::new)
        .push(header.into());
    let responses = &mut op.responses.responses;
    for (status, response) in InFlight::responses()
        .into_iter()
        .chain(KeyReused::responses())
    {
        // 409 replaces a create's own (it lists both codes); 422 is added.
        responses.insert(status, response);
    }
}
