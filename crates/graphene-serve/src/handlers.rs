//! The endpoints. Parsing and scheduling run on the blocking worker pool, never on the async
//! threads, so `/healthz` and `/metrics` answer while every worker is busy.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use super::request::{self, Endpoint, Options};
use graphene::api as work;
use super::AppState;
use graphene::error::Result;
use graphene::OfflineConfig;

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
    let work = async move {
        let permit = permits.acquire_owned().await.expect("the worker semaphore is never closed");
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            state.metrics.running.inc();
            let out = answer(&body, query, endpoint);
            state.metrics.running.dec();
            out
        })
        .await
    };
    match tokio::time::timeout(st.config.timeout, work).await {
        Err(_) => {
            st.metrics.timeouts.inc();
            error(
                StatusCode::SERVICE_UNAVAILABLE,
                &format!("not finished within {} (--timeout)", humantime::format_duration(st.config.timeout)),
            )
        }
        Ok(Err(_panicked)) => error(StatusCode::INTERNAL_SERVER_ERROR, "internal error: the worker failed"),
        Ok(Ok(Err(e))) => {
            let msg = e.to_string();
            let status = if msg.starts_with("internal error") {
                StatusCode::INTERNAL_SERVER_ERROR
            } else {
                StatusCode::BAD_REQUEST
            };
            error(status, &msg)
        }
        Ok(Ok(Ok(json))) => ([(header::CONTENT_TYPE, "application/json")], json).into_response(),
    }
}

/// The CPU part of a request: parse, compute, render, as the CLI command would.
fn answer(body: &[u8], query: Options, endpoint: Endpoint) -> Result<Vec<u8>> {
    let job = request::parse(body, query, endpoint)?;
    match endpoint {
        Endpoint::Schedule => {
            let which = job.options.scheduler()?;
            let cfg = OfflineConfig::default();
            let (seed, no_timing) = (job.options.seed(), job.options.no_timing());
            let s = work::schedule(&job.dag, &job.cluster, &job.net, job.network_file, which, &cfg, seed, no_timing)?;
            Ok(s.json)
        }
        Endpoint::LowerBound => Ok(work::pretty(&work::lower_bound_json(&job.dag, &job.cluster))),
        Endpoint::Validate => {
            let entries = job.schedule.as_deref().unwrap_or_default();
            let v = match work::validate_entries(&job.dag, &job.cluster, &job.net, entries, &[]) {
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
fn error(status: StatusCode, message: &str) -> Response {
    let body = work::pretty(&serde_json::json!({ "error": message }));
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}
