//! `graphene serve`

use graphene_serve::{self as serve, ServeConfig};
use graphene::Result;

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
}

pub fn run(a: Args) -> Result<i32> {
    let config = ServeConfig::new(&a.addr, a.workers, &a.max_body, &a.timeout)?;
    let workers = config.workers;
    serve::run(config, |addr| {
        outln!("graphene serve: listening on http://{addr} ({workers} workers)")?;
        Ok(())
    })?;
    eprintln!("graphene serve: shut down");
    Ok(0)
}
