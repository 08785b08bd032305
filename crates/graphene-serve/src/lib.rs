//! `graphene serve`: the scheduler as an HTTP service (axum on tokio).
//!
//! * `POST /v1/schedule`: a DAG (or `{"dag", "cluster", options}`) -> the schedule JSON of
//!   `build-schedule`, byte for byte for the same inputs (`no_timing` as `--no-timing`).
//! * `POST /v1/lower-bound`: -> `lower-bound --json`.
//! * `POST /v1/validate`: `{"dag", "schedule", "cluster"?}` -> the validator's verdict.
//! * `GET /healthz`, `GET /metrics` (Prometheus text).
//!
//! Answers, with the CLI's message as `{"error": ...}`: 400 for a body that is not readable JSON
//! (or not UTF-8, or has an unknown or nested option), 408 for a body not received within
//! `--body-timeout`, 422 for a well-formed body whose values are refused (an unknown parent, a
//! cycle, a task no machine can hold, a bad option), 413 for a body over `--max-body` or a count
//! over an input limit (`--limit-tasks`, `--limit-machines`), 503 when `--max-pending` requests
//! are already in flight (with `Retry-After`) or a request is not done within `--timeout`
//! (reading its body included), and 500 only for the service's own faults (a panic included).
//! CPU work runs on at most `--workers` blocking threads at once; a request that times out also
//! stops its work (the readers and the offline search poll the request's deadline), so its
//! worker is free again soon after the 503. Connections are served by `server`: a header-read
//! timeout and a cap on open connections that closes idle ones first.

mod body;
pub mod config;
mod handlers;
pub mod metrics;
pub mod request;
mod router;
mod server;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

pub use config::ServeConfig;

/// The service's default input limits: lower than the CLI's, because requests share one
/// process. At these sizes one request's DAG and search take well under a GiB, so `--workers`
/// requests in flight stay within a few GiB. `serve --limit-tasks` and friends raise them.
pub const SERVICE_LIMITS: graphene::limits::Limits = graphene::limits::Limits {
    tasks: 1_000_000,
    stages: 1_000_000,
    edges: 5_000_000,
    machines: 100_000,
    jobs: 100_000,
    input_bytes: 256 << 20,
};
pub use handlers::{answer, status_of};
pub use router::router;

use graphene::error::{Error, Result};
use metrics::Metrics;

pub struct AppState {
    pub config: ServeConfig,
    pub metrics: Metrics,
    workers: Arc<Semaphore>,
    /// Admission: one permit per request in flight (`--max-pending`).
    admitted: Arc<Semaphore>,
}

impl AppState {
    pub fn new(config: ServeConfig) -> Arc<AppState> {
        let workers = Arc::new(Semaphore::new(config.workers));
        let admitted = Arc::new(Semaphore::new(config.max_pending));
        Arc::new(AppState { config, metrics: Metrics::new(), workers, admitted })
    }
}

/// Serves until SIGTERM or ctrl-c, then lets the requests in flight finish. `ready` is told the
/// bound address (useful with port 0).
pub fn run(config: ServeConfig, ready: impl FnOnce(SocketAddr) -> Result<()>) -> Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Usage(format!("cannot start the async runtime: {e}")))?;
    let addr = config.addr;
    let result = rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| Error::Usage(format!("cannot listen on {addr}: {e}")))?;
        ready(listener.local_addr()?)?;
        let state = AppState::new(config);
        server::serve(listener, router(state.clone()), state, shutdown_signal()).await?;
        Ok(())
    });
    // Jobs that timed out may still be computing; their answers are no longer wanted.
    rt.shutdown_timeout(Duration::from_millis(100));
    result
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
