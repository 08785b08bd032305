//! `graphene serve`: the scheduler as an HTTP service (axum on tokio).
//!
//! * `POST /v1/schedule`: a DAG (or `{"dag", "cluster", options}`) -> the schedule JSON of
//!   `build-schedule`, byte for byte for the same inputs (`no_timing` as `--no-timing`).
//! * `POST /v1/lower-bound`: -> `lower-bound --json`.
//! * `POST /v1/validate`: `{"dag", "schedule", "cluster"?}` -> the validator's verdict.
//! * `GET /healthz`, `GET /metrics` (Prometheus text).
//!
//! Bad bodies get 400 with the CLI's message, bodies over `--max-body` 413, and requests still
//! unanswered after `--timeout` 503. CPU work runs on at most `--workers` blocking threads at
//! once; a timed-out job keeps its worker until it ends (a computation cannot be interrupted), so
//! the pool stays bounded while the async threads keep answering.

pub mod config;
mod handlers;
pub mod metrics;
pub mod request;
mod router;


use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

pub use config::ServeConfig;
pub use router::router;

use graphene::error::{Error, Result};
use metrics::Metrics;

pub struct AppState {
    pub config: ServeConfig,
    pub metrics: Metrics,
    workers: Arc<Semaphore>,
}

impl AppState {
    pub fn new(config: ServeConfig) -> Arc<AppState> {
        let workers = Arc::new(Semaphore::new(config.workers));
        Arc::new(AppState { config, metrics: Metrics::new(), workers })
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
        axum::serve(listener, router(AppState::new(config))).with_graceful_shutdown(shutdown_signal()).await?;
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
