//! Behind a pooler, the hot statements ([`sql::HOT`]) as PL/pgSQL
//! functions, so that PostgreSQL keeps their plans.
//!
//! Behind PgBouncer in transaction mode every statement goes out unnamed
//! (`db.rs`), and PostgreSQL parses, analyses and plans it on every
//! execution: for the claim, a plan of a few dozen nodes, made for every
//! consume. A PL/pgSQL function keeps the plans of its statements for as
//! long as the server connection lives, whichever client the pooler hands
//! it to, and a call to one is a statement that costs next to nothing to
//! plan. So at start, behind a pooler, each hot statement that returns rows
//! gets a function whose body is the statement itself (`RETURN QUERY`,
//! the same text as the direct connections prepare: one statement, one
//! place), and the server sends `SELECT * FROM onceq_hot_…($1, …)` in its
//! place. Each function carries the hot settings as its own (`SET`
//! clauses, `sql::HOT_FUNCTION_SETTINGS`): its plans are made and used
//! under them, generic, as on a direct connection, whatever the transaction
//! set; so a call needs no transaction of its own to `SET LOCAL` them in,
//! and a committer's group can go out as one statement, without BEGIN or
//! COMMIT ([`Stmt::is_hot_function`](super::db::Stmt::is_hot_function)).
//!
//! A function's name ends with a hash of its whole definition, so a name
//! means one body: servers of different versions on one database each
//! find or create their own (an older version's functions stay until
//! dropped: they are a few kilobytes). Creating one needs `CREATE` on the
//! schema, which migrations need too; where it is refused, that statement
//! goes out unnamed as before (and a warning says so). A statement that
//! returns no rows, or a column type a function cannot return (`void`),
//! stays unnamed: those are the small ones.

use std::sync::Arc;

use sha2::{Digest, Sha256};
use tokio_postgres::types::{Kind, Type};
use tokio_postgres::{Client, Column};

use super::sql;

/// The prefix of every function made here.
const PREFIX: &str = "onceq_hot_";

/// What a call of one of these functions starts with.
const CALL: &str = "SELECT * FROM ";

/// Whether `text` (what goes out for a statement) calls one of these
/// functions.
pub(super) fn is_call(text: &str) -> bool {
    text.strip_prefix(CALL)
        .is_some_and(|f| f.starts_with(PREFIX))
}

/// A hot statement as a function.
#[derive(Debug, PartialEq)]
pub(super) struct HotFunction {
    /// Its name: [`PREFIX`] and a hash of the definition.
    pub name: String,
    /// `CREATE FUNCTION …`.
    pub create: String,
    /// The statement that runs it, with the same parameters and columns as
    /// the statement it wraps.
    pub call: String,
}

/// The function for `sql`, whose parameters and columns are `params` and
/// `columns`; `None` for a statement a function cannot stand for.
fn define(sql: &str, params: &[Type], columns: &[Column]) -> Option<HotFunction> {
    const QUOTE: &str = "$onceq_hot$";
    let body = sql.trim_end().trim_end_matches(';');
    if columns.is_empty() || body.contains(QUOTE) {
        return None;
    }
    let mut names: Vec<&str> = columns.iter().map(Column::name).collect();
    names.sort_unstable();
    names.dedup();
    if names.len() != columns.len() || columns.iter().any(|c| !returnable(c.type_())) {
        return None;
    }
    let args = params.iter().map(type_name).collect::<Vec<_>>().join(", ");
    let table = columns
        .iter()
        .map(|c| format!("{} {}", ident(c.name()), type_name(c.type_())))
        .collect::<Vec<_>>()
        .join(", ");
    // Column names are the function's output variables too: in the body a
    // name that is both means the column, as in the statement alone.
    let settings = sql::HOT_FUNCTION_SETTINGS;
    let definition = format!(
        "({args}) RETURNS TABLE ({table}) LANGUAGE plpgsql VOLATILE {settings} AS {QUOTE}\n\
         #variable_conflict use_column\n\
         BEGIN\nRETURN QUERY {body};\nEND\n{QUOTE}"
    );
    let hash = Sha256::digest(definition.as_bytes());
    let name = format!("{PREFIX}{}", hex::encode(&hash[..10]));
    let placeholders = (1..=params.len())
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ");
    Some(HotFunction {
        create: format!("CREATE FUNCTION {name}{definition}"),
        call: format!("{CALL}{name}({placeholders})"),
        name,
    })
}

/// What goes out for the hot statement `name` (`sql`, whose parameters
/// and columns are `params` and `columns`): the call of its function, made
/// here if it is missing; the statement itself when it cannot be one, or
/// when the function cannot be made (a warning says why).
pub(super) async fn text_to_send(
    client: &Client,
    name: &str,
    sql: &str,
    params: &[Type],
    columns: &[Column],
) -> Arc<str> {
    let Some(f) = define(sql, params, columns) else {
        return Arc::from(sql);
    };
    match ensure(client, &f).await {
        Ok(()) => Arc::from(f.call),
        Err(e) => {
            tracing::warn!(statement = name, error = %e,
                "postgres: cannot create the hot statement's function; it is planned on every execution");
            Arc::from(sql)
        }
    }
}

/// Creates `f` unless it exists, on `client` inside the caller's
/// transaction. Another server may be creating the same function at the
/// same moment: whichever commits second finds it there, which is as good.
async fn ensure(client: &Client, f: &HotFunction) -> Result<(), tokio_postgres::Error> {
    // The name is ours (hex), so it can stand in the text.
    let found = client
        .simple_query(&format!(
            "SELECT 1 FROM pg_proc WHERE proname = '{}' AND pronamespace = current_schema()::regnamespace",
            f.name
        ))
        .await?
        .iter()
        .any(|m| matches!(m, tokio_postgres::SimpleQueryMessage::Row(_)));
    if found {
        return Ok(());
    }
    client.batch_execute("SAVEPOINT onceq_hot").await?;
    match client.batch_execute(&f.create).await {
        Ok(()) => client.batch_execute("RELEASE SAVEPOINT onceq_hot").await,
        Err(e) => {
            client
                .batch_execute("ROLLBACK TO SAVEPOINT onceq_hot")
                .await?;
            let raced = e.code().is_some_and(|c| {
                *c == tokio_postgres::error::SqlState::DUPLICATE_FUNCTION
                    || *c == tokio_postgres::error::SqlState::UNIQUE_VIOLATION
            });
            match raced {
                true => Ok(()),
                false => Err(e),
            }
        }
    }
}

/// Whether a function can return a column of type `t` (not `void`,
/// `record` or another pseudo-type).
fn returnable(t: &Type) -> bool {
    !matches!(t.kind(), Kind::Pseudo)
}

/// `t`'s name as SQL, schema-qualified.
fn type_name(t: &Type) -> String {
    format!("{}.{}", ident(t.schema()), ident(t.name()))
}

/// A quoted identifier.
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
