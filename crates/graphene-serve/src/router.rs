//! Routes, admission and the metrics middleware.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::{header, HeaderValue, StatusCode};

use axum::body::HttpBody;
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;

use super::handlers;
use super::{body, AppState};

pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/v1/schedule", post(handlers::schedule))
        .route("/v1/lower-bound", post(handlers::lower_bound))
        .route("/v1/validate", post(handlers::validate))
        .route("/healthz", get(handlers::healthz))
        .route("/metrics", get(handlers::metrics))
        .fallback(handlers::not_found)
        .layer(middleware::from_fn(handlers::catch_panic))
        .layer(middleware::from_fn_with_state(state.clone(), admit))
        .layer(middleware::from_fn_with_state(state.clone(), track))
        .with_state(state)
}

/// Seconds a client is asked to wait (`Retry-After`) after a 503 busy.
pub const RETRY_AFTER_SECS: u64 = 1;

/// Admits a request only while fewer than `--max-pending` are in flight (503 at once
/// otherwise, with `Retry-After`), refuses a body declared larger than `--max-body` (413) before
/// admission, and bounds a request's whole life, reading a slow body included, by `--timeout`.
/// A refused request's body is read and discarded before the answer (see `body`), so that the
/// client receives it. `/healthz` and `/metrics` are always answered: they are how an operator
/// sees an overload.
async fn admit(State(st): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    if matches!(req.uri().path(), "/healthz" | "/metrics") {
        return next.run(req).await;
    }
    if req.body().size_hint().lower() > st.config.max_body as u64 {
        let answer = body::too_large_answer(&st);
        return body::refuse(&st, req, answer).await;
    }
    let Ok(_permit) = st.admitted.clone().try_acquire_owned() else {
        st.metrics.rejected.inc();
        let mut busy = handlers::error(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!("busy: {} requests in flight (--max-pending); retry later", st.config.max_pending),
        );
        busy.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
        return body::refuse(&st, req, busy).await;
    };
    // The handler answers 503 itself at the timeout; this bound catches anything else, with a
    // little slack so that the handler's answer wins the race.
    match tokio::time::timeout(st.config.timeout + Duration::from_millis(50), next.run(req)).await {
        Ok(resp) => resp,
        Err(_) => {
            st.metrics.timeouts.inc();
            handlers::timed_out(&st)
        }
    }
}

/// Counts every answer by route (the route pattern, so unknown paths share one label) and status.
async fn track(State(st): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let route = req.extensions().get::<MatchedPath>().map_or("unmatched", |p| p.as_str()).to_string();
    let started = Instant::now();
    let resp = next.run(req).await;
    st.metrics.observe(&route, resp.status().as_u16(), started.elapsed().as_secs_f64());
    resp
}
