//! Databases cloned from a template: a schema migrated once per test
//! process, then copied per test with `CREATE DATABASE ... TEMPLATE`, which
//! is a file copy, instead of every test running the migrations itself.
//!
//! PostgreSQL copies a template only while nobody is connected to it, so
//! the template takes connections only while it is being set up, from the
//! caller's `init`, which must close them before it returns; after it, the
//! template refuses connections (`ALLOW_CONNECTIONS false`), so a stray
//! one fails where it is made rather than in some later test's clone.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio::sync::OnceCell;

use crate::{TestCluster, TestDatabase};

/// A template's database name, once it is set up.
type Ready = Arc<OnceCell<String>>;

/// The templates of the shared cluster, by the caller's name.
static TEMPLATES: Mutex<Option<HashMap<&'static str, Ready>>> = Mutex::new(None);

/// A new database on the shared cluster, cloned from the template `name`.
/// The first call in the test process creates the template and runs
/// `init` with its URL (typically migrations; every connection it opens
/// must be closed when it returns); later calls, however concurrent, wait
/// for that and then only clone. `name` is part of a database name: ASCII
/// letters, digits and `_`.
pub async fn database_from_template<F, Fut>(name: &'static str, init: F) -> TestDatabase
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = ()>,
{
    assert!(
        name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'),
        "onceq-testdb: template name {name:?}: ASCII letters, digits and _ only"
    );
    let cluster = crate::shared_cluster().await;
    let cell = TEMPLATES
        .lock()
        .expect("templates lock")
        .get_or_insert_with(HashMap::new)
        .entry(name)
        .or_default()
        .clone();
    let template = cell
        .get_or_init(|| cluster.create_template(name, init))
        .await;
    cluster.create_database_from(template).await
}

impl TestCluster {
    /// Creates the template database `onceq_template_<name>`, runs `init`
    /// with its URL, then closes it to connections. Its name.
    async fn create_template<F, Fut>(&self, name: &str, init: F) -> String
    where
        F: FnOnce(String) -> Fut,
        Fut: Future<Output = ()>,
    {
        let template = format!("onceq_template_{name}");
        self.admin(&format!("CREATE DATABASE \"{template}\"")).await;
        init(self.url(&template)).await;
        self.admin(&format!(
            "ALTER DATABASE \"{template}\" WITH ALLOW_CONNECTIONS false"
        ))
        .await;
        template
    }
}
