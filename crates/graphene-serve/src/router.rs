//! Routes, the body limit and the metrics middleware.

use std::sync::Arc;
use std::time::Instant;

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
        .layer(middleware::from_fn_with_state(state.clone(), track))
        .with_state(state)
}

/// Counts every answer by route (the route pattern, so unknown paths share one label) and status.
async fn track(State(st): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let route = req.extensions().get::<MatchedPath>().map_or("unmatched", |p| p.as_str()).to_string();
    let started = Instant::now();
    let resp = next.run(req).await;
    st.metrics.observe(&route, resp.status().as_u16(), started.elapsed().as_secs_f64());
    resp
}
