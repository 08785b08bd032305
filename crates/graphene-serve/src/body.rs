//! Request bodies: read whole, at most `--max-body` bytes within `--body-timeout`; and the body of
//! a refused request read and discarded before its answer goes out.
//!
//! Most clients (Python's `http.client`, `ureq`, `requests`) send the whole body before they read
//! the answer. A server that answers and closes while body bytes are still unread makes the
//! kernel reset the connection, and such a client then sees a broken pipe instead of the 503 or
//! 413. So a refused body is read to its end (bytes thrown away as they come, nothing kept)
//! before the answer (up to twice `--max-body`, within `--body-timeout`; the connection counts
//! as idle meanwhile, so that `--max-connections` may close it for a newer one); only a body
//! beyond that gets its answer with `Connection: close` and the rest of it unread.

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use http_body_util::BodyExt;
use tokio::time::Instant;

use super::handlers::{error, timed_out};
use super::server::ConnHandle;
use super::AppState;

/// The body, whole; or the answer for a body that is too large (413), too slow (408, or 503
/// when `until`, the request's own deadline, comes first) or broken (400).
pub async fn read(st: &AppState, mut body: Body, until: Instant) -> Result<Bytes, Response> {
    let max = st.config.max_body;
    let body_until = Instant::now() + st.config.body_timeout;
    let stop = until.min(body_until);
    if body.size_hint().lower() > max as u64 {
        return Err(too_large(st, body, stop).await);
    }
    // Content-Length, when given, is at most `max` here.
    let mut buf = Vec::with_capacity(body.size_hint().lower() as usize);
    loop {
        match tokio::time::timeout_at(stop, body.frame()).await {
            Err(_) if until <= body_until => {
                // The rest of the body is still read (within --body-timeout) so that the client,
                // still sending, gets the 503 rather than a broken pipe.
                st.metrics.timeouts.inc();
                return Err(after_discarding(st, body, body_until, timed_out(st)).await);
            }
            Err(_) => {
                let secs = humantime::format_duration(st.config.body_timeout);
                let answer = error(
                    StatusCode::REQUEST_TIMEOUT,
                    &format!("request body not received within {secs} (--body-timeout)"),
                );
                return Err(closing(answer));
            }
            Ok(None) => return Ok(Bytes::from(buf)),
            Ok(Some(Err(e))) => {
                return Err(closing(error(StatusCode::BAD_REQUEST, &format!("cannot read the request body: {e}"))))
            }
            Ok(Some(Ok(frame))) => {
                if let Ok(data) = frame.into_data() {
                    if buf.len() + data.len() > max {
                        return Err(too_large(st, body, stop).await);
                    }
                    buf.extend_from_slice(&data);
                }
            }
        }
    }
}

/// The 413 for a body over `--max-body`, once the rest of it is read (up to twice `--max-body`
/// in all).
async fn too_large(st: &AppState, body: Body, stop: Instant) -> Response {
    after_discarding(st, body, stop, too_large_answer(st)).await
}

/// `answer`, once the rest of `body` is read and thrown away (up to twice `--max-body`, by
/// `stop`); with `Connection: close` when it could not be.
async fn after_discarding(st: &AppState, body: Body, stop: Instant, answer: Response) -> Response {
    if discard(body, st.config.max_body.saturating_mul(2), stop).await {
        answer
    } else {
        closing(answer)
    }
}

pub fn too_large_answer(st: &AppState) -> Response {
    error(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("request body is larger than {} bytes (--max-body)", st.config.max_body),
    )
}

/// `answer`, for a request refused before its body was read: the body is read and discarded
/// first (at most twice `--max-body`, within `--body-timeout`).
pub async fn refuse(st: &AppState, req: Request, answer: Response) -> Response {
    // A client that asked to be told before it sends the body gets the answer instead.
    if req.headers().get(header::EXPECT).is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue")) {
        return closing(answer);
    }
    // Discarding costs no memory; the connection counts as idle meanwhile, so that under
    // --max-connections it is the first to go.
    let _idle = req.extensions().get::<ConnHandle>().map(ConnHandle::discarding);
    let stop = Instant::now() + st.config.body_timeout;
    after_discarding(st, req.into_body(), stop, answer).await
}

/// Reads `body` to its end and throws it away; false when it is longer than `most` more bytes,
/// broken, or still arriving at `stop` (the rest is left unread).
async fn discard(mut body: Body, most: usize, stop: Instant) -> bool {
    let mut seen = 0usize;
    loop {
        match tokio::time::timeout_at(stop, body.frame()).await {
            Ok(None) => return true,
            Ok(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    seen = seen.saturating_add(data.len());
                    if seen > most {
                        return false;
                    }
                }
            }
            Ok(Some(Err(_))) | Err(_) => return false,
        }
    }
}

/// `answer`, closing the connection after it (hyper reads no further request from it).
fn closing(mut answer: Response) -> Response {
    answer.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    answer
}
