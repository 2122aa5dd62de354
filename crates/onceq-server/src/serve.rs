//! Runs a server: open the store (migrating it), make sure a key exists
//! ([`crate::bootstrap`]),
//! bind, serve until SIGTERM or Ctrl-C, then drain.
//!
//! Shutdown order: stop accepting connections, let in-flight requests
//! finish (long polls return early), write the last usage, stop the
//! background services, let push deliveries in flight finish (for up to
//! `push.shutdown_grace`). Every write a client was told succeeded was
//! committed before its answer, so nothing acknowledged is lost.
//!
//! Hostile clients: at most `max_connections` connections are served at
//! once (by default sized from the descriptor limit, raised to its hard
//! limit at start), and `max_connections_per_ip` from one address; past a
//! bound the oldest idle connection is shed for the new one, else the
//! longest-parked long poll is cut short, and a new one is closed only
//! when all are busy ([`crate::connections`]); a connection must deliver
//! each request's headers within `header_read_timeout` (slow-loris headers
//! and idle keep-alive connections are closed), and a body within
//! `body_read_timeout` ([`crate::extract::Body`] answers 408).

use std::{net::SocketAddr, path::PathBuf, sync::Arc};

use hyper::server::conn::http1;
use hyper_util::{
    rt::{TokioIo, TokioTimer},
    server::graceful::GracefulShutdown,
    service::TowerToHyperService,
};
use onceq_store::StoreError;
use tokio::net::TcpListener;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

use crate::{
    AppState, ServerConfig, bootstrap, connections::Slot, maintenance, push, unread_body, webhooks,
};

/// What `onceq serve` was asked for.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Address to listen on.
    pub listen: SocketAddr,
    /// A `postgres://` URL, or `None` for the embedded store.
    pub database_url: Option<String>,
    /// Directory of the embedded store.
    pub data_dir: PathBuf,
    /// A key to accept for project `default` (`ONCEQ_API_KEY`).
    pub api_key: Option<String>,
    /// Everything else.
    pub config: ServerConfig,
}

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The store could not be opened or migrated (the cause in the message,
    /// so that a chain printer says it once).
    #[error("opening the store: {0}")]
    Store(StoreError),
    /// The address could not be bound.
    #[error("binding {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// Serving failed.
    #[error("serving: {0}")]
    Io(#[from] std::io::Error),
}

impl From<StoreError> for ServeError {
    fn from(e: StoreError) -> Self {
        ServeError::Store(e)
    }
}

/// Runs until a shutdown signal.
pub async fn serve(opts: ServeOptions) -> Result<(), ServeError> {
    // Every store call is bounded by the store timeout, not only /readyz:
    // a stalled database answers 503 within it.
    let store_options = onceq_store::StoreOptions {
        op_timeout: opts.config.store_timeout,
        mode: onceq_store::OpenMode::Create,
    };
    // Before anything opens a descriptor: the connection bound is sized
    // from what this leaves (`AppState::new`).
    crate::connections::raise_descriptor_limit();
    let store =
        onceq_store::open_with(opts.database_url.as_deref(), &opts.data_dir, store_options).await?;
    let where_ = match &opts.database_url {
        Some(url) => format!("PostgreSQL at {}", onceq_store::redact_url(url)),
        None => format!("embedded SQLite in {}", opts.data_dir.display()),
    };
    tracing::info!(store = %where_, "store ready (schema migrated)");
    // The first key's file goes in the data directory: SQLite's always
    // exists by now; with PostgreSQL, only if the operator made it.
    let key_dir = (opts.database_url.is_none() || opts.data_dir.is_dir()).then_some(&opts.data_dir);
    bootstrap::keys(
        store.as_ref(),
        opts.api_key.as_deref(),
        key_dir.map(|d| d.as_path()),
    )
    .await?;

    let listener = TcpListener::bind(opts.listen)
        .await
        .map_err(|source| ServeError::Bind {
            addr: opts.listen,
            source,
        })?;
    let addr = listener.local_addr()?;
    tracing::info!(%addr, backend = store.backend(), "onceq listening on http://{addr}");

    let state = AppState::new(store, opts.config);
    run(listener, state, shutdown_signal()).await
}

/// Serves `state` on `listener` until `shutdown` completes, then drains.
pub async fn run(
    listener: TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let tracker = TaskTracker::new();
    maintenance::spawn_all(&state, &tracker);
    push::spawn(&state, &tracker);
    webhooks::spawn(&state, &tracker);
    let token = state.shutdown.clone();
    let router = crate::app(state.clone());
    let connections = state.connections.clone();
    let graceful = GracefulShutdown::new();
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(state.config.header_read_timeout);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(e) => {
                    // Out of file descriptors and the like: let some close.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let admitted = match connections.admit(peer.ip()) {
            Ok(admitted) => Arc::new(admitted),
            Err(why) => {
                tracing::debug!(%peer, ?why, "connection limit reached, every connection busy: closing a new one");
                drop(stream);
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let shed = admitted.shed().clone();
        // Each request marks its connection busy until its answer is
        // ready, so that only idle connections are ever shed; an answer
        // given before the body was read closes the connection, saying so.
        let service = tower::service_fn({
            let router = router.clone();
            move |mut request: axum::http::Request<hyper::body::Incoming>| {
                let busy = admitted.request();
                // Who is asking: for what only loopback peers may see.
                request
                    .extensions_mut()
                    .insert(axum::extract::ConnectInfo(peer));
                // Its connection's place: a long poll parks it.
                request.extensions_mut().insert(Slot(admitted.clone()));
                let admitted = admitted.clone();
                let (request, body) = unread_body::track(request);
                let answer = router.clone().oneshot(request);
                async move {
                    let answer = answer.await;
                    drop(busy);
                    answer.map(|a| {
                        let mut a = body.close_if_unread(a);
                        // Its place went to a new connection: close after
                        // this answer (a cut long poll's empty one).
                        if admitted.was_cut() {
                            a.headers_mut().insert(
                                axum::http::header::CONNECTION,
                                axum::http::HeaderValue::from_static("close"),
                            );
                        }
                        a
                    })
                }
            }
        });
        let conn = graceful
            .watch(http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service)));
        tokio::spawn(async move {
            tokio::select! {
                ended = conn => if let Err(e) = ended {
                    tracing::debug!(%peer, error = %e, "connection ended with an error");
                },
                () = shed.cancelled() => tracing::debug!(%peer, "idle connection shed for a new one"),
            }
        });
    }
    drop(listener);
    tracing::info!("shutting down: finishing in-flight requests");
    token.cancel();
    graceful.shutdown().await;
    maintenance::account_sync::shutdown(&state).await;
    tracker.close();
    tracker.wait().await;
    tracing::info!("stopped");
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
