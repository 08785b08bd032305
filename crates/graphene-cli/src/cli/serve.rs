//! `graphene serve`

use graphene::Result;
use graphene_serve::{self as serve, ServeConfig};

#[derive(clap::Args)]
pub struct Args {
    /// Address to listen on (port 0: any free port; the bound address is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: String,
    /// Scheduling requests computed at once [default: all cores].
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Largest request body (e.g. 16MiB, 512KiB); larger bodies get 413.
    #[arg(long, value_name = "SIZE", default_value = "16MiB")]
    pub max_body: String,
    /// Answer 503 to a request not done in this time (e.g. 10s, 500ms).
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub timeout: String,
    /// Requests admitted at once (running or waiting for a worker); more get 503 at once, with
    /// Retry-After: 1 [default: 16 per worker].
    #[arg(long, value_name = "N")]
    pub max_pending: Option<usize>,
    /// Time a connection may take to send a request's headers (and, kept alive, to start its
    /// next request); then it is closed [default: 10s].
    #[arg(long, value_name = "DURATION")]
    pub header_timeout: Option<String>,
    /// Time a request's body may take to arrive; then 408. Also how long the body of a refused
    /// request is read (and thrown away) so that its client gets the answer [default: 10s].
    #[arg(long, value_name = "DURATION")]
    pub body_timeout: Option<String>,
    /// Connections open at once; at the limit a new connection closes the one idle longest
    /// (waiting for a request) [default: 1024].
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,
}

pub fn run(a: Args) -> Result<i32> {
    let config = ServeConfig::new(&a.addr, a.workers, &a.max_body, &a.timeout)?
        .with_max_pending(a.max_pending)?
        .with_read_timeouts(a.header_timeout.as_deref(), a.body_timeout.as_deref())?
        .with_max_connections(a.max_connections)?;
    let workers = config.workers;
    serve::run(config, |addr| {
        outln!("graphene serve: listening on http://{addr} ({workers} workers)")?;
        Ok(())
    })?;
    eprintln!("graphene serve: shut down");
    Ok(0)
}
