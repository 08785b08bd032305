//! The accept loop: HTTP/1.1 connections served by hyper with a header-read timeout, at most
//! `--max-connections` of them open at once, and a graceful shutdown.
//!
//! A client that opens connections and sends nothing (or half a request line) costs a socket and
//! a task each. The header-read timeout closes such a connection after `--header-timeout`, and
//! the cap keeps the process below its open-files limit, so that `accept` never fails for want
//! of a descriptor: at the cap a new connection closes the one idle longest (no request in
//! progress on it, and none for the longest time), which is where half-open connections are,
//! and `/healthz` stays answerable.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::StatusCode;
use axum::Router;
use futures_util::FutureExt;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch, Notify};

use super::handlers;
use super::AppState;

/// One open connection, as the cap sees it.
struct Conn {
    /// Its key in the table: the time of its last activity (being accepted, or the end of its
    /// last request) as a count, so that the table lists connections idle longest first.
    key: AtomicU64,
    /// Requests in progress on it (hyper serves one at a time; 0: idle, waiting for headers).
    requests: AtomicUsize,
    /// Told to close the connection now.
    evict: Notify,
}

/// The open connections, by last activity, least recent first.
struct Connections {
    open: Mutex<BTreeMap<u64, Arc<Conn>>>,
    next: AtomicU64,
    max: usize,
    state: Arc<AppState>,
}

impl Connections {
    fn table(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Arc<Conn>>> {
        // The table stays consistent whatever panicked while holding it (inserts and removes).
        self.open.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Registers a new connection. At the cap, the connection idle longest is told to close
    /// first; None when every open connection is in a request (the new one is refused).
    fn admit(&self) -> Option<Arc<Conn>> {
        let mut open = self.table();
        if open.len() >= self.max && !self.evict_idle_longest(&mut open) {
            self.state.metrics.dropped.with_label_values(&["refused"]).inc();
            return None;
        }
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn { key: AtomicU64::new(key), requests: AtomicUsize::new(0), evict: Notify::new() });
        open.insert(key, conn.clone());
        self.state.metrics.connections.set(open.len() as i64);
        Some(conn)
    }

    /// A request on `conn` ended: it is now the connection idle for the shortest time.
    fn touch(&self, conn: &Conn) {
        let mut open = self.table();
        // Gone already when it was evicted.
        if let Some(c) = open.remove(&conn.key.load(Ordering::Acquire)) {
            let key = self.next.fetch_add(1, Ordering::Relaxed);
            conn.key.store(key, Ordering::Release);
            open.insert(key, c);
        }
    }

    /// Closes the connection idle longest, if any (the process is out of descriptors).
    fn make_room(&self) -> bool {
        self.evict_idle_longest(&mut self.table())
    }

    /// Tells the connection idle longest to close and forgets it; false when none is idle.
    fn evict_idle_longest(&self, open: &mut BTreeMap<u64, Arc<Conn>>) -> bool {
        let idle = open.iter().find(|(_, c)| c.requests.load(Ordering::Acquire) == 0).map(|(key, _)| *key);
        let Some(conn) = idle.and_then(|key| open.remove(&key)) else {
            return false;
        };
        conn.evict.notify_one();
        self.state.metrics.dropped.with_label_values(&["evicted"]).inc();
        self.state.metrics.connections.set(open.len() as i64);
        true
    }

    fn close(&self, conn: &Conn) {
        let mut open = self.table();
        open.remove(&conn.key.load(Ordering::Acquire));
        self.state.metrics.connections.set(open.len() as i64);
    }

    /// At shutdown: every idle connection closes now; the others after their request.
    fn close_idle(&self) {
        let mut open = self.table();
        open.retain(|_, c| {
            let idle = c.requests.load(Ordering::Acquire) == 0;
            if idle {
                c.evict.notify_one();
            }
            !idle
        });
        self.state.metrics.connections.set(open.len() as i64);
    }
}

/// In every request's extensions: lets a handler mark its connection idle while it only reads
/// and discards a refused body, so that the cap may close the connection for a newer one.
#[derive(Clone)]
pub struct ConnHandle(Arc<Conn>);

impl ConnHandle {
    /// The connection counts as idle until the returned guard is dropped.
    pub fn discarding(&self) -> Discarding {
        self.0.requests.fetch_sub(1, Ordering::AcqRel);
        Discarding(self.0.clone())
    }
}

pub struct Discarding(Arc<Conn>);

impl Drop for Discarding {
    fn drop(&mut self) {
        self.0.requests.fetch_add(1, Ordering::AcqRel);
    }
}

/// Marks a connection busy for the life of one request, and most recently active after it.
struct InRequest(Arc<Conn>, Arc<Connections>);

impl InRequest {
    fn start(conn: &Arc<Conn>, conns: &Arc<Connections>) -> InRequest {
        conn.requests.fetch_add(1, Ordering::AcqRel);
        InRequest(conn.clone(), conns.clone())
    }
}

impl Drop for InRequest {
    fn drop(&mut self) {
        self.1.touch(&self.0);
        self.0.requests.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Serves `app` on `listener` until `shutdown` completes, then stops accepting, closes idle
/// connections, and waits for the requests in progress to be answered.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    state: Arc<AppState>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let conns = Arc::new(Connections {
        open: Mutex::new(BTreeMap::new()),
        next: AtomicU64::new(0),
        max: state.config.max_connections,
        state: state.clone(),
    });
    let service = TowerToHyperService::new(app);
    let (stop_tx, stop_rx) = watch::channel(false);
    // Every connection task holds a sender; recv() returns None once all have ended.
    let (alive_tx, mut alive_rx) = mpsc::channel::<Infallible>(1);
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    if !is_connection_error(&e) {
                        // Out of descriptors (or memory): free one if a connection is idle, and
                        // give the process a moment instead of spinning on the error.
                        conns.make_room();
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let Some(conn) = conns.admit() else {
            drop(stream);
            continue;
        };
        let task = Connection {
            conn,
            conns: conns.clone(),
            service: service.clone(),
            stop: stop_rx.clone(),
            _alive: alive_tx.clone(),
        };
        tokio::spawn(task.run(stream));
    }
    drop(listener);
    let _ = stop_tx.send(true);
    conns.close_idle();
    drop(alive_tx);
    let _ = alive_rx.recv().await;
    Ok(())
}

/// Errors of one connection that `accept` reports; the listener itself is fine.
fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e.kind(), ConnectionRefused | ConnectionAborted | ConnectionReset | Interrupted | WouldBlock)
}

struct Connection {
    conn: Arc<Conn>,
    conns: Arc<Connections>,
    service: TowerToHyperService<Router>,
    stop: watch::Receiver<bool>,
    _alive: mpsc::Sender<Infallible>,
}

impl Connection {
    async fn run(mut self, stream: TcpStream) {
        // Leaves the table however the task ends.
        let _registered = Registered(self.conns.clone(), self.conn.clone());
        let config = &self.conns.state.config;
        let (conn, conns, service) = (self.conn.clone(), self.conns.clone(), self.service.clone());
        let svc = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
            let busy = InRequest::start(&conn, &conns);
            req.extensions_mut().insert(ConnHandle(conn.clone()));
            let answer = hyper::service::Service::call(&service, req);
            async move {
                let _busy = busy;
                // The router answers 500 for a panicking handler itself (and counts it); this
                // catches what is left, so that no panic resets a client's connection.
                match AssertUnwindSafe(answer).catch_unwind().await {
                    Ok(Ok(response)) => Ok::<_, Infallible>(response),
                    Ok(Err(never)) => match never {},
                    Err(_) => Ok(handlers::error(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "internal error: the request failed; please report it",
                    )),
                }
            }
        });
        let http = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(config.header_timeout)
            .serve_connection(TokioIo::new(stream), svc);
        tokio::pin!(http);
        tokio::select! {
            _ = http.as_mut() => {}
            _ = self.conn.evict.notified() => {}
            _ = self.stop.changed() => {
                // Shutting down: the request in progress is answered, then the connection closes.
                http.as_mut().graceful_shutdown();
                tokio::select! {
                    _ = http.as_mut() => {}
                    _ = self.conn.evict.notified() => {}
                }
            }
        }
    }
}

struct Registered(Arc<Connections>, Arc<Conn>);

impl Drop for Registered {
    fn drop(&mut self) {
        self.0.close(&self.1);
    }
}

#[cfg(test)]
mod tests {
    use axum::routing::get;

    use super::*;
    use crate::ServeConfig;

    fn status(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> u16 {
        match r {
            Ok(r) => r.status().as_u16(),
            Err(ureq::Error::StatusCode(code)) => code,
            Err(e) => panic!("no answer: {e}"),
        }
    }

    async fn boom() -> &'static str {
        panic!("a bug in a handler")
    }

    /// A handler that panics answers 500 through the router's layer, and through the
    /// connection's own guard on a router without it; the service answers the next request.
    #[test]
    fn a_panicking_handler_answers_500() {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let routes = || Router::new().route("/boom", get(boom)).route("/ok", get(|| async { "ok" }));
        for app in [routes().layer(axum::middleware::from_fn(handlers::catch_panic)), routes()] {
            let st = AppState::new(ServeConfig::new("127.0.0.1:0", Some(1), "1KiB", "10s").unwrap());
            let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
            let base = format!("http://{}", listener.local_addr().unwrap());
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let server = rt.spawn(serve(listener, app, st, async {
                let _ = stopped.await;
            }));
            assert_eq!(status(ureq::get(&format!("{base}/boom")).call()), 500);
            assert_eq!(status(ureq::get(&format!("{base}/ok")).call()), 200);
            stop.send(()).unwrap();
            rt.block_on(server).unwrap().unwrap();
        }
    }
}
