//! The endpoints. Parsing and scheduling run on the blocking worker pool, never on the async
//! threads, so `/healthz` and `/metrics` answer while every worker is busy.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use axum::extract::{Query, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use prometheus::IntGauge;

use super::request::{self, Endpoint, Options};
use super::{body, AppState};
use graphene::api as work;

use graphene::error::{Error, Result};
use graphene::{Deadline, OfflineConfig};

pub async fn schedule(State(st): State<Arc<AppState>>, req: Request) -> Response {
    job(st, req, Endpoint::Schedule).await
}

pub async fn lower_bound(State(st): State<Arc<AppState>>, req: Request) -> Response {
    job(st, req, Endpoint::LowerBound).await
}

pub async fn validate(State(st): State<Arc<AppState>>, req: Request) -> Response {
    job(st, req, Endpoint::Validate).await
}

pub async fn healthz() -> Response {
    (StatusCode::OK, "ok\n").into_response()
}

pub async fn metrics(State(st): State<Arc<AppState>>) -> Response {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], st.metrics.render()).into_response()
}

pub async fn not_found(State(st): State<Arc<AppState>>, req: Request) -> Response {
    let answer = error(
        StatusCode::NOT_FOUND,
        "no such endpoint (POST /v1/schedule, /v1/lower-bound, /v1/validate; GET /healthz, /metrics)",
    );
    body::refuse(&st, req, answer).await
}

/// The innermost layer: a handler that panics answers 500 (counted by the metrics like any
/// answer) instead of resetting the client's connection. The guards the handlers hold (worker
/// and admission permits, the running gauge) are released as the panic unwinds.
pub async fn catch_panic(req: Request, next: Next) -> Response {
    match AssertUnwindSafe(next.run(req)).catch_unwind().await {
        Ok(response) => response,
        Err(_) => error(StatusCode::INTERNAL_SERVER_ERROR, "internal error: the request failed; please report it"),
    }
}

async fn job(st: Arc<AppState>, req: Request, endpoint: Endpoint) -> Response {
    // The request's time runs from here: reading its body, waiting for a worker and the work
    // all count against --timeout.
    let until = tokio::time::Instant::now() + st.config.timeout;
    let mut deadline = Deadline::after(st.config.timeout);
    // The job stops itself at the deadline; the flag stops it at once when this future ends
    // early: its 503 went out (here or from `admit`), or the client went away.
    let _cancel = CancelOnDrop(deadline.cancel_flag());
    let (parts, body) = req.into_parts();
    let body = match body::read(&st, body, until).await {
        Ok(b) => b,
        Err(answer) => return answer,
    };
    let query = match Query::<Options>::try_from_uri(&parts.uri) {
        Ok(Query(q)) => q,
        Err(rej) => return error(StatusCode::BAD_REQUEST, &rej.body_text()),
    };
    compute(&st, until, deadline, move |d| answer(&body, query, endpoint, d)).await
}

/// Runs `work` on a worker (waiting for one first) until `until`: its answer, or 503.
async fn compute(
    st: &Arc<AppState>,
    until: tokio::time::Instant,
    deadline: Deadline,
    work: impl FnOnce(&Deadline) -> Result<Vec<u8>> + Send + 'static,
) -> Response {
    let permits = st.workers.clone();
    let state = st.clone();
    let job = async move {
        let Ok(permit) = permits.acquire_owned().await else {
            return Ok(Err(Error::Usage("internal error: the worker pool is closed".into())));
        };
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            // Counted down however the job ends, a panic included.
            let _running = Running::start(&state.metrics.running);
            let out = work(&deadline);
            if out.as_ref().is_err_and(timed_out_error) {
                state.metrics.cancelled.inc();
            }
            out
        })
        .await
    };
    match tokio::time::timeout_at(until, job).await {
        Err(_) => {
            st.metrics.timeouts.inc();
            timed_out(st)
        }
        Ok(Err(_panicked)) => error(StatusCode::INTERNAL_SERVER_ERROR, "internal error: the worker failed"),
        Ok(Ok(Err(e))) if timed_out_error(&e) => {
            st.metrics.timeouts.inc();
            timed_out(st)
        }
        Ok(Ok(Err(e))) => error(status_of(&e), &e.to_string()),
        Ok(Ok(Ok(json))) => ([(header::CONTENT_TYPE, "application/json")], json).into_response(),
    }
}

/// The work stopped at its deadline (a reader's stop comes named after its file).
fn timed_out_error(e: &Error) -> bool {
    match e {
        Error::InFile { source, .. } | Error::AtLine { source, .. } => timed_out_error(source),
        e => matches!(e, Error::TimedOut { .. }),
    }
}

/// `graphene_jobs_running` up for as long as it lives.
struct Running(IntGauge);

impl Running {
    fn start(gauge: &IntGauge) -> Running {
        gauge.inc();
        Running(gauge.clone())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// Sets a deadline's cancel flag when dropped.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
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
/// fuzz targets, which run whole requests without a server). Reading the body observes
/// `deadline` too (the readers poll it), so a request answered 503 stops while still parsing.
pub fn answer(body: &[u8], query: Options, endpoint: Endpoint, deadline: &Deadline) -> Result<Vec<u8>> {
    graphene::deadline::scope(deadline, || answer_within(body, query, endpoint, deadline))
}

fn answer_within(body: &[u8], query: Options, endpoint: Endpoint, deadline: &Deadline) -> Result<Vec<u8>> {
    deadline.check("the request")?;
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::ServeConfig;

    /// A job that panics answers 500 and leaves nothing behind: `graphene_jobs_running` is back
    /// at 0 and the only worker takes the next job.
    #[tokio::test]
    async fn a_panicking_job_answers_500_and_releases_its_worker() {
        let st = AppState::new(ServeConfig::new("127.0.0.1:0", Some(1), "1KiB", "10s").unwrap());
        let until = tokio::time::Instant::now() + Duration::from_secs(10);
        let r = compute(&st, until, Deadline::none(), |_| panic!("a bug in the job")).await;
        assert_eq!(r.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(st.metrics.running.get(), 0);
        let r = compute(&st, until, Deadline::none(), |_| Ok(b"{}".to_vec())).await;
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(st.metrics.running.get(), 0);
        assert!(st.metrics.render().contains("graphene_jobs_running 0"));
    }
}
