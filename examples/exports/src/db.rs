//! The app's database: a pool, and the `exports` table the worker writes.

/// A pool on `url` (TLS and several hosts as libpq reads them).
pub fn pool(url: &str) -> anyhow::Result<deadpool_postgres::Pool> {
    Ok(onceq::pg::PgConnect::parse(url)?.pool(16)?)
}

/// Creates `exports` if missing. Deliberately no unique constraint on
/// `job_fact`: a duplicated export must show up as a second row, not be
/// hidden by the database. The advisory lock makes concurrent starts safe.
pub async fn ensure_exports_table(pool: &deadpool_postgres::Pool) -> anyhow::Result<()> {
    let mut db = pool.get().await?;
    let tx = db.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock(7061006501)", &[])
        .await?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS exports (
            id bigserial PRIMARY KEY,
            job_fact text NOT NULL,
            tenant text,
            format text,
            built_at timestamptz NOT NULL DEFAULT now()
        )",
    )
    .await?;
    tx.commit().await?;
    Ok(())
}
