//! Routes, the body limit and the metrics middleware.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::StatusCode;

use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;

use super::handlers;
use super::AppState;

pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/v1/schedule", post(handlers::schedule))
        .route("/v1/lower-bound", post(handlers::lower_bound))
        .route("/v1/validate", post(handlers::validate))
        .route("/healthz", get(handlers::healthz))
        .route("/metrics", get(handlers::metrics))
        .fallback(handlers::not_found)
        .layer(DefaultBodyLimit::max(state.config.max_body))
        .layer(middleware::from_fn_with_state(state.clone(), admit))
        .layer(middleware::from_fn_with_state(state.clone(), track))
        .with_state(state)
}

/// Admits a request only while fewer than `--max-pending` are in flight (503 at once
/// otherwise), and bounds its whole life, reading a slow body included, by `--timeout`.
/// `/healthz` and `/metrics` are always answered: they are how an operator sees an overload.
async fn admit(State(st): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    if matches!(req.uri().path(), "/healthz" | "/metrics") {
        return next.run(req).await;
    }
    let Ok(_permit) = st.admitted.clone().try_acquire_owned() else {
        st.metrics.rejected.inc();
        return handlers::error(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!("busy: {} requests in flight (--max-pending); retry later", st.config.max_pending),
        );
    };
    // The handler answers 503 itself at the timeout once the body is read; this bound catches a
    // body still trickling in, with a little slack so that the handler's answer wins the race.
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
