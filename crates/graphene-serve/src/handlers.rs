//! The endpoints. Parsing and scheduling run on the blocking worker pool, never on the async
//! threads, so `/healthz` and `/metrics` answer while every worker is busy.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use super::request::{self, Endpoint, Options};
use super::AppState;
use graphene::api as work;
use std::sync::atomic::Ordering;

use graphene::error::{Error, Result};
use graphene::{Deadline, OfflineConfig};

type Body = std::result::Result<Bytes, BytesRejection>;
type Params = std::result::Result<Query<Options>, QueryRejection>;

pub async fn schedule(State(st): State<Arc<AppState>>, q: Params, body: Body) -> Response {
    job(st, q, body, Endpoint::Schedule).await
}

pub async fn lower_bound(State(st): State<Arc<AppState>>, q: Params, body: Body) -> Response {
    job(st, q, body, Endpoint::LowerBound).await
}

pub async fn validate(State(st): State<Arc<AppState>>, q: Params, body: Body) -> Response {
    job(st, q, body, Endpoint::Validate).await
}

pub async fn healthz() -> Response {
    (StatusCode::OK, "ok\n").into_response()
}

pub async fn metrics(State(st): State<Arc<AppState>>) -> Response {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], st.metrics.render()).into_response()
}

pub async fn not_found() -> Response {
    error(
        StatusCode::NOT_FOUND,
        "no such endpoint (POST /v1/schedule, /v1/lower-bound, /v1/validate; GET /healthz, /metrics)",
    )
}

async fn job(st: Arc<AppState>, q: Params, body: Body, endpoint: Endpoint) -> Response {
    let body = match body {
        Ok(b) => b,
        Err(rej) if rej.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("request body is larger than {} bytes (--max-body)", st.config.max_body),
            )
        }
        Err(rej) => return error(rej.status(), &rej.body_text()),
    };
    let Query(query) = match q {
        Ok(q) => q,
        Err(rej) => return error(StatusCode::BAD_REQUEST, &rej.body_text()),
    };
    let permits = st.workers.clone();
    let state = st.clone();
    // The job stops itself at the request's deadline; the flag stops it at once when the
    // answer has already gone out as a 503.
    let mut deadline = Deadline::after(st.config.timeout);
    let cancel = deadline.cancel_flag();
    let work = async move {
        let permit = permits.acquire_owned().await.expect("the worker semaphore is never closed");
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            state.metrics.running.inc();
            let out = answer(&body, query, endpoint, &deadline);
            state.metrics.running.dec();
            if matches!(out, Err(Error::TimedOut { .. })) {
                state.metrics.cancelled.inc();
            }
            out
        })
        .await
    };
    match tokio::time::timeout(st.config.timeout, work).await {
        Err(_) => {
            cancel.store(true, Ordering::Relaxed);
            st.metrics.timeouts.inc();
            timed_out(&st)
        }
        Ok(Err(_panicked)) => error(StatusCode::INTERNAL_SERVER_ERROR, "internal error: the worker failed"),
        Ok(Ok(Err(Error::TimedOut { .. }))) => {
            st.metrics.timeouts.inc();
            timed_out(&st)
        }
        Ok(Ok(Err(e))) => error(status_of(&e), &e.to_string()),
        Ok(Ok(Ok(json))) => ([(header::CONTENT_TYPE, "application/json")], json).into_response(),
    }
}

pub fn timed_out(st: &AppState) -> Response {
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        &format!("not finished within {} (--timeout)", humantime::format_duration(st.config.timeout)),
    )
}

/// The status for a refused request: what the client must change decides it.
pub fn status_of(e: &Error) -> StatusCode {
    match e {
        Error::InFile { source, .. } | Error::AtLine { source, .. } => status_of(source),
        // Not readable as JSON (or CSV): the body itself is malformed.
        Error::Syntax { .. } => StatusCode::BAD_REQUEST,
        Error::Field { field, .. } if field == request::BODY => StatusCode::BAD_REQUEST,
        Error::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
        Error::TimedOut { .. } => StatusCode::SERVICE_UNAVAILABLE,
        Error::Usage(m) if m.starts_with("internal error") => StatusCode::INTERNAL_SERVER_ERROR,
        Error::Io(_) => StatusCode::INTERNAL_SERVER_ERROR,
        // Well-formed, but the values are refused: an unknown parent, a cycle, a task too big
        // for every machine, an option out of range.
        Error::Field { .. } | Error::Cycle(_) | Error::TaskTooBig { .. } | Error::Usage(_) => {
            StatusCode::UNPROCESSABLE_ENTITY
        }
    }
}

/// The CPU part of a request: parse, compute, render, as the CLI command would (public for the
/// fuzz targets, which run whole requests without a server).
pub fn answer(body: &[u8], query: Options, endpoint: Endpoint, deadline: &Deadline) -> Result<Vec<u8>> {
    let job = request::parse(body, query, endpoint)?;
    deadline.check("the request")?;
    match endpoint {
        Endpoint::Schedule => {
            let which = job.options.scheduler()?;
            let cfg = OfflineConfig {
                deadline: deadline.clone(),
                improve_budget: job.options.improve.unwrap_or(graphene::offline::DEFAULT_IMPROVE_BUDGET),
                exact: job
                    .options
                    .exact
                    .unwrap_or(false)
                    .then(|| job.options.exact_nodes.unwrap_or(graphene::offline::DEFAULT_EXACT_NODES)),
                ..OfflineConfig::default()
            };
            if cfg.exact == Some(0) {
                return Err(graphene::Error::Usage("--exact-nodes must be at least 1".into()));
            }
            let (seed, no_timing) = (job.options.seed(), job.options.no_timing());
            let s = work::schedule(&job.dag, &job.cluster, &job.net, job.network_file, which, &cfg, seed, no_timing)?;
            // A search cut short by the deadline has nobody to answer: the 503 went out.
            deadline.check("the request")?;
            Ok(s.json)
        }
        Endpoint::LowerBound => Ok(work::pretty(&work::lower_bound_json(&job.dag, &job.cluster))),
        Endpoint::Validate => {
            let file = job.schedule.as_ref().expect("a validate request has a schedule");
            let v = match work::validate_file(&job.dag, &job.cluster, &job.net, file) {
                Ok(summary) => serde_json::json!({"valid": true, "summary": summary, "violations": []}),
                Err(violations) => serde_json::json!({
                    "valid": false,
                    "summary": format!("{}: {} violation(s) against {}:", request::SCHEDULE_FILE, violations.len(), request::DAG_FILE),
                    "violations": violations.iter().map(|v| v.to_string()).collect::<Vec<_>>(),
                }),
            };
            Ok(work::pretty(&v))
        }
    }
}

/// `{"error": message}` with the CLI's message (which the CLI prints after `error: `).
pub fn error(status: StatusCode, message: &str) -> Response {
    let body = work::pretty(&serde_json::json!({ "error": message }));
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}
