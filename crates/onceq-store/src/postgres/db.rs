//! How statements reach PostgreSQL: prepared once per connection, or — behind
//! a pooler in transaction mode — sent unnamed with their parameter types.
//!
//! PgBouncer in transaction pooling mode hands each transaction to whichever
//! server connection is free. A named prepared statement lives on the server
//! connection that parsed it, so using it in a later transaction (deadpool's
//! statement cache) fails with `prepared statement "s3" does not exist`, and a
//! name left behind on a server connection collides with the next client's
//! (`"s3" already exists`). PgBouncer 1.21 can track named statements
//! itself; Debian's 1.18 cannot. So with `pgbouncer=transaction` in the URL
//! every statement goes out as the unnamed statement, Parse, Bind and Execute
//! in one message sequence, which no transaction boundary can split; its
//! parameter types, which the unnamed form must state, are learnt once at
//! start (inside one transaction, so the probe statements never outlive it).
//! Each such statement is parsed and planned on every execution, except the
//! hot ones: they go out as calls of PL/pgSQL functions made from them at
//! start, which keep their plans on the server connection
//! (`hot_functions.rs`), planned generic under the hot settings
//! (`sql::HOT_BEGIN`) as on a direct connection.
//!
//! Everything in the backend runs its statements through [`GenericClient`],
//! implemented by [`Conn`] (a pooled connection) and [`Tx`] (a transaction on
//! one), so each call site reads the same in both modes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use deadpool_postgres::{Object, Pool, PoolError, Status};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Row, Statement};

use super::{hot_functions, sql};

/// How statements are sent.
#[derive(Debug)]
pub(super) enum Statements {
    /// Prepared once per connection and cached (direct connections).
    Prepared,
    /// Unnamed, with the parameter types learnt at start (behind a pooler
    /// in transaction mode); a hot statement as the call of its function.
    Unnamed(HashMap<&'static str, Unnamed>),
}

/// What goes out for a statement behind a pooler.
#[derive(Clone, Debug)]
pub(super) struct Unnamed {
    /// The statement, or the call of its function (`hot_functions.rs`).
    pub(super) text: Arc<str>,
    /// Its parameters' types.
    types: Arc<[Type]>,
}

impl Statements {
    /// Learns every statement's parameter types on `client`, inside one
    /// transaction: a pooler keeps one server connection for it, and the
    /// probe statements are closed before it commits.
    pub(super) async fn learn(
        client: &tokio_postgres::Client,
    ) -> Result<Statements, tokio_postgres::Error> {
        client.batch_execute("BEGIN").await?;
        let mut unnamed = HashMap::with_capacity(sql::ALL.len());
        for sql in sql::ALL {
            let probe = client.prepare(sql).await?;
            let types: Arc<[Type]> = Arc::from(probe.params());
            let text = match sql::HOT.iter().find(|(_, text)| text == sql) {
                Some(&(name, _)) => {
                    hot_functions::text_to_send(client, name, sql, &types, probe.columns()).await
                }
                None => Arc::from(*sql),
            };
            unnamed.insert(*sql, Unnamed { text, types });
        }
        client.batch_execute("COMMIT").await?;
        Ok(Statements::Unnamed(unnamed))
    }

    /// Whether statements go out unnamed (a pooler is in front).
    pub(super) fn behind_pooler(&self) -> bool {
        matches!(self, Statements::Unnamed(_))
    }
}

/// When a statement of this pool last failed because its server is
/// read-only (SQLSTATE 25006: a standby, or a primary fenced read-only
/// during a switchover while a proxy or the pool still points at it).
///
/// Every connection opened up to that moment may be on that server, so
/// none of them is handed out again: the pool's `pre_recycle` hook
/// (`pool.rs`) drops each as it comes up ([`ReadOnlySeen::stale`]), the one
/// that failed included, and the next request opens a new connection — with
/// `target_session_attrs=read-write` to whichever host accepts writes now,
/// through HAProxy to wherever it routes. Connections opened after it are
/// kept: a second failure marks again.
#[derive(Debug, Default)]
pub(super) struct ReadOnlySeen(Mutex<Option<Instant>>);

impl ReadOnlySeen {
    /// Marks now if `e` is a write refused by a read-only server.
    pub(super) fn note(&self, e: &tokio_postgres::Error) {
        if is_read_only(e) {
            *self.0.lock().expect("read-only mark") = Some(Instant::now());
        }
    }

    /// Whether a connection opened at `created` predates the last mark.
    pub(super) fn stale(&self, created: Instant) -> bool {
        self.0
            .lock()
            .expect("read-only mark")
            .is_some_and(|at| created <= at)
    }
}

/// Whether `e` is SQLSTATE 25006, "cannot execute ... in a read-only
/// transaction".
pub(super) fn is_read_only(e: &tokio_postgres::Error) -> bool {
    e.code() == Some(&SqlState::READ_ONLY_SQL_TRANSACTION)
}

/// The pool, and how its connections send statements. Cheap to clone.
#[derive(Clone, Debug)]
pub(super) struct Db {
    pool: Pool,
    statements: Arc<Statements>,
    read_only: Arc<ReadOnlySeen>,
}

impl Db {
    /// `read_only` is the mark the pool's `pre_recycle` hook reads.
    pub(super) fn new(pool: Pool, statements: Statements, read_only: Arc<ReadOnlySeen>) -> Db {
        Db {
            pool,
            statements: Arc::new(statements),
            read_only,
        }
    }

    /// A connection from the pool.
    pub(super) async fn get(&self) -> Result<Conn, PoolError> {
        Ok(Conn {
            client: self.pool.get().await?,
            statements: self.statements.clone(),
            read_only: self.read_only.clone(),
        })
    }

    /// How its connections send statements.
    #[cfg(test)]
    pub(super) fn statements(&self) -> Arc<Statements> {
        self.statements.clone()
    }

    /// The pool's use, for `/metrics`.
    pub(super) fn status(&self) -> Status {
        self.pool.status()
    }
}

/// A pooled connection; back to the pool when dropped.
pub(super) struct Conn {
    client: Object,
    statements: Arc<Statements>,
    read_only: Arc<ReadOnlySeen>,
}

impl Conn {
    /// Opens a transaction (`BEGIN`; `ROLLBACK` when dropped uncommitted).
    pub(super) async fn transaction(&mut self) -> Result<Tx<'_>, tokio_postgres::Error> {
        Ok(Tx {
            tx: self.client.transaction().await?,
            statements: &self.statements,
            read_only: &self.read_only,
        })
    }

    /// Whether the connection's socket has closed.
    pub(super) fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    /// Whether statements go out unnamed (a pooler is in front).
    pub(super) fn behind_pooler(&self) -> bool {
        self.statements.behind_pooler()
    }

    /// What opens a committer's transaction: `BEGIN` where the connection
    /// holds the hot settings for its session (`hot.rs`); behind a pooler,
    /// which keeps no session, `BEGIN` with them set for the transaction
    /// ([`sql::HOT_BEGIN`]) — without them a statement planned against a
    /// table whose statistics are stale reads it whole (measured: 43 million
    /// rows read for 20 000 jobs).
    pub(super) fn hot_begin(&self) -> &'static str {
        match self.behind_pooler() {
            true => sql::HOT_BEGIN,
            false => "BEGIN",
        }
    }

    /// The driver's client, for tests' own SQL.
    #[cfg(test)]
    pub(super) fn raw(&self) -> &tokio_postgres::Client {
        &self.client
    }

    /// Closes the connection instead of returning it to the pool (it may
    /// be in an unknown state).
    pub(super) fn discard(self) {
        drop(Object::take(self.client));
    }
}

/// A transaction on a [`Conn`].
pub(super) struct Tx<'a> {
    tx: deadpool_postgres::Transaction<'a>,
    statements: &'a Statements,
    read_only: &'a ReadOnlySeen,
}

impl Tx<'_> {
    /// Commits.
    pub(super) async fn commit(self) -> Result<(), tokio_postgres::Error> {
        self.tx.commit().await
    }
}

/// A statement ready to run on the connection it was prepared for.
pub(super) struct Stmt(Kind);

impl Stmt {
    /// Whether this goes out as the call of a hot statement's function
    /// (behind a pooler, `hot_functions.rs`), which carries the hot
    /// settings itself and so may run without a transaction of its own.
    pub(super) fn is_hot_function(&self) -> bool {
        match &self.0 {
            Kind::Named(_) => false,
            Kind::Unnamed(u) => hot_functions::is_call(&u.text),
        }
    }
}

enum Kind {
    Named(Statement),
    Unnamed(Unnamed),
}

type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// What the backend asks of a connection or a transaction. The names are
/// the driver's, so call sites read as plain tokio-postgres.
pub(super) trait GenericClient: Sync {
    /// `sql`, ready to run: from the connection's cache, or (behind a
    /// pooler) its text and learnt parameter types.
    fn prepare_cached(
        &self,
        sql: &'static str,
    ) -> impl Future<Output = Result<Stmt, tokio_postgres::Error>> + Send;

    /// Runs a statement, returning its rows.
    fn query(
        &self,
        stmt: &Stmt,
        params: Params<'_>,
    ) -> impl Future<Output = Result<Vec<Row>, tokio_postgres::Error>> + Send;

    /// Runs a statement that returns exactly one row.
    fn query_one(
        &self,
        stmt: &Stmt,
        params: Params<'_>,
    ) -> impl Future<Output = Result<Row, tokio_postgres::Error>> + Send;

    /// Runs a statement that returns at most one row.
    fn query_opt(
        &self,
        stmt: &Stmt,
        params: Params<'_>,
    ) -> impl Future<Output = Result<Option<Row>, tokio_postgres::Error>> + Send;

    /// Runs a statement, returning how many rows it changed.
    fn execute(
        &self,
        stmt: &Stmt,
        params: Params<'_>,
    ) -> impl Future<Output = Result<u64, tokio_postgres::Error>> + Send;

    /// Runs statements without parameters (the simple protocol, which
    /// poolers carry as is).
    fn batch_execute(
        &self,
        sql: &str,
    ) -> impl Future<Output = Result<(), tokio_postgres::Error>> + Send;
}

/// An implementation over a field holding the pool's wrapper (its statement
/// cache), which derefs to the driver's `$raw` (to run on).
macro_rules! generic_client {
    ($ty:ty, $field:ident, $raw:ty) => {
        impl GenericClient for $ty {
            async fn prepare_cached(
                &self,
                sql: &'static str,
            ) -> Result<Stmt, tokio_postgres::Error> {
                match &*self.statements {
                    Statements::Prepared => {
                        Ok(Stmt(Kind::Named(self.$field.prepare_cached(sql).await?)))
                    }
                    Statements::Unnamed(unnamed) => Ok(Stmt(Kind::Unnamed(
                        unnamed.get(sql).cloned().unwrap_or_else(|| {
                            unreachable!(
                                "every statement is in sql::ALL and learnt at start: {sql}"
                            )
                        }),
                    ))),
                }
            }

            async fn query(
                &self,
                stmt: &Stmt,
                params: Params<'_>,
            ) -> Result<Vec<Row>, tokio_postgres::Error> {
                let c: &$raw = &self.$field;
                match &stmt.0 {
                    Kind::Named(s) => c.query(s, params).await,
                    Kind::Unnamed(Unnamed { text, types }) => {
                        c.query_typed(text, &typed(params, types)).await
                    }
                }
                .inspect_err(|e| self.read_only.note(e))
            }

            async fn query_one(
                &self,
                stmt: &Stmt,
                params: Params<'_>,
            ) -> Result<Row, tokio_postgres::Error> {
                let c: &$raw = &self.$field;
                match &stmt.0 {
                    Kind::Named(s) => c.query_one(s, params).await,
                    Kind::Unnamed(Unnamed { text, types }) => {
                        c.query_typed_one(text, &typed(params, types)).await
                    }
                }
                .inspect_err(|e| self.read_only.note(e))
            }

            async fn query_opt(
                &self,
                stmt: &Stmt,
                params: Params<'_>,
            ) -> Result<Option<Row>, tokio_postgres::Error> {
                let c: &$raw = &self.$field;
                match &stmt.0 {
                    Kind::Named(s) => c.query_opt(s, params).await,
                    Kind::Unnamed(Unnamed { text, types }) => {
                        c.query_typed_opt(text, &typed(params, types)).await
                    }
                }
                .inspect_err(|e| self.read_only.note(e))
            }

            async fn execute(
                &self,
                stmt: &Stmt,
                params: Params<'_>,
            ) -> Result<u64, tokio_postgres::Error> {
                let c: &$raw = &self.$field;
                let run = async {
                    match &stmt.0 {
                        Kind::Named(s) => c.execute(s, params).await,
                        Kind::Unnamed(Unnamed { text, types }) => {
                            let rows = c.query_typed_raw(text, typed(params, types)).await?;
                            let mut rows = std::pin::pin!(rows);
                            while futures_util::StreamExt::next(&mut rows)
                                .await
                                .transpose()?
                                .is_some()
                            {}
                            Ok(rows.rows_affected().unwrap_or(0))
                        }
                    }
                };
                run.await.inspect_err(|e| self.read_only.note(e))
            }

            async fn batch_execute(&self, sql: &str) -> Result<(), tokio_postgres::Error> {
                let c: &$raw = &self.$field;
                c.batch_execute(sql)
                    .await
                    .inspect_err(|e| self.read_only.note(e))
            }
        }
    };
}

generic_client!(Conn, client, tokio_postgres::Client);
generic_client!(Tx<'_>, tx, tokio_postgres::Transaction<'_>);

/// Pairs each parameter with its learnt type, as the unnamed form needs.
fn typed<'a>(params: Params<'a>, types: &[Type]) -> Vec<(&'a (dyn ToSql + Sync), Type)> {
    params.iter().copied().zip(types.iter().cloned()).collect()
}
