//! Load generator for `graphene serve` (used by `scripts/loadtest`): N client threads POST one
//! body in a loop for a fixed time, each on its own keep-alive connection, and the run prints
//! one JSON line with requests/s, latency percentiles and errors.
//!
//! Loopback only: any other host is refused, and every run is bounded by `--seconds` and
//! `--max-requests`.
//!
//! `cargo run --release --example loadgen -- --url http://127.0.0.1:8080/v1/schedule --body dag.json --clients 16 --seconds 20`

use std::time::{Duration, Instant};

struct Args {
    url: String,
    body: Vec<u8>,
    clients: usize,
    seconds: f64,
    max_requests: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut url = None;
    let mut body = None;
    let (mut clients, mut seconds, mut max_requests) = (1usize, 10.0f64, 1_000_000u64);
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--url" => url = Some(value()?),
            "--body" => {
                let path = value()?;
                body = Some(std::fs::read(&path).map_err(|e| format!("{path}: {e}"))?);
            }
            "--clients" => clients = value()?.parse().map_err(|e| format!("--clients: {e}"))?,
            "--seconds" => seconds = value()?.parse().map_err(|e| format!("--seconds: {e}"))?,
            "--max-requests" => max_requests = value()?.parse().map_err(|e| format!("--max-requests: {e}"))?,
            other => return Err(format!("unknown flag {other}")),
        }
    }
    let url = url.ok_or("--url is required")?;
    let host = url.strip_prefix("http://").ok_or("--url must start with http://")?;
    if !(host.starts_with("127.") || host.starts_with("localhost:") || host.starts_with("[::1]:")) {
        return Err(format!("{url}: only loopback addresses (127.0.0.0/8, localhost, [::1]) are allowed"));
    }
    if clients == 0 || !(seconds > 0.0 && seconds <= 600.0) {
        return Err("--clients must be at least 1 and --seconds in (0, 600]".into());
    }
    Ok(Args { url, body: body.ok_or("--body is required")?, clients, seconds, max_requests })
}

/// One client's latencies (seconds) and error count.
fn client(a: &Args, deadline: Instant, budget: u64) -> (Vec<f64>, u64, Option<String>) {
    let agent: ureq::Agent = ureq::Agent::config_builder().timeout_global(Some(Duration::from_secs(60))).build().into();
    let (mut lat, mut errors, mut first_error) = (Vec::new(), 0, None);
    while Instant::now() < deadline && (lat.len() as u64) + errors < budget {
        let t = Instant::now();
        let result = agent.post(&a.url).header("content-type", "application/json").send(&a.body[..]);
        match result.map(|mut r| r.body_mut().read_to_string()) {
            Ok(Ok(_)) => lat.push(t.elapsed().as_secs_f64()),
            Ok(Err(e)) => {
                errors += 1;
                first_error.get_or_insert(e.to_string());
            }
            Err(e) => {
                errors += 1;
                first_error.get_or_insert(e.to_string());
            }
        }
    }
    (lat, errors, first_error)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn main() {
    let a = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(a.seconds);
    let budget = a.max_requests.div_ceil(a.clients as u64);
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..a.clients).map(|_| s.spawn(|| client(&a, deadline, budget))).collect();
        handles.into_iter().map(|h| h.join().expect("a client thread")).collect()
    });
    let wall = started.elapsed().as_secs_f64();
    let mut lat: Vec<f64> = results.iter().flat_map(|r| r.0.iter().copied()).collect();
    let errors: u64 = results.iter().map(|r| r.1).sum();
    let first_error = results.iter().find_map(|r| r.2.clone());
    lat.sort_by(f64::total_cmp);
    let out = serde_json::json!({
        "clients": a.clients,
        "seconds": (wall * 100.0).round() / 100.0,
        "requests": lat.len(),
        "errors": errors,
        "first_error": first_error,
        "requests_per_s": ((lat.len() as f64 / wall) * 10.0).round() / 10.0,
        "p50_ms": (percentile(&lat, 0.50) * 1e4).round() / 10.0,
        "p99_ms": (percentile(&lat, 0.99) * 1e4).round() / 10.0,
        "max_ms": (lat.last().copied().unwrap_or(f64::NAN) * 1e4).round() / 10.0,
    });
    println!("{out}");
    if errors > 0 {
        std::process::exit(1);
    }
}
