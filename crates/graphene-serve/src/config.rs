//! The service's settings, parsed once from the flags.

use std::net::SocketAddr;
use std::time::Duration;

use graphene::error::{Error, Result};

#[derive(Clone, Debug)]
pub struct ServeConfig {
    pub addr: SocketAddr,
    /// CPU-heavy requests that may run at once; more wait (within their timeout) for a turn.
    pub workers: usize,
    /// Largest request body accepted, in bytes (larger: 413).
    pub max_body: usize,
    /// Time a request may take, waiting for a worker included (longer: 503).
    pub timeout: Duration,
    /// Requests admitted at once, running or waiting for a worker; more get 503 at once. With
    /// `max_body` this bounds the memory held by request bodies (`max_pending x max_body`),
    /// and with the input limits the memory of the jobs themselves (`workers` at a time).
    pub max_pending: usize,
    /// Time a connection may take to send a request's headers, and to start the next request on
    /// a kept-alive connection; then it is closed (`--header-timeout`).
    pub header_timeout: Duration,
    /// Time a request's body may take to arrive (longer: 408 and the connection is closed);
    /// also how long the body of a refused request is read and discarded (`--body-timeout`).
    pub body_timeout: Duration,
    /// Connections open at once (`--max-connections`). At the limit a new connection closes the
    /// one idle for longest (waiting for a request's headers), or is closed itself when every
    /// open connection is in the middle of a request.
    pub max_connections: usize,
}

/// `--header-timeout`'s default.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// `--body-timeout`'s default.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(10);
/// `--max-connections`' default.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;

impl ServeConfig {
    pub fn new(addr: &str, workers: Option<usize>, max_body: &str, timeout: &str) -> Result<ServeConfig> {
        let addr: SocketAddr =
            addr.parse().map_err(|e| Error::Usage(format!("--addr '{addr}': {e} (expected IP:PORT)")))?;
        let workers = match workers {
            Some(0) => return Err(Error::Usage("--workers must be at least 1".into())),
            Some(n) => n,
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        let max_body = parse_size(max_body).map_err(|m| Error::Usage(format!("--max-body '{max_body}': {m}")))?;
        let timeout = parse_duration(timeout, "--timeout")?;
        Ok(ServeConfig {
            addr,
            workers,
            max_body,
            timeout,
            max_pending: workers * 16,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        })
    }

    /// Sets `header_timeout` and `body_timeout` (`None`: their defaults).
    pub fn with_read_timeouts(mut self, header: Option<&str>, body: Option<&str>) -> Result<ServeConfig> {
        if let Some(h) = header {
            self.header_timeout = parse_duration(h, "--header-timeout")?;
        }
        if let Some(b) = body {
            self.body_timeout = parse_duration(b, "--body-timeout")?;
        }
        Ok(self)
    }

    /// Sets `max_connections` (`None`: the default).
    pub fn with_max_connections(mut self, n: Option<usize>) -> Result<ServeConfig> {
        match n {
            Some(0) => return Err(Error::Usage("--max-connections must be at least 1".into())),
            Some(n) => self.max_connections = n,
            None => {}
        }
        Ok(self)
    }

    /// Sets `max_pending` (default: 16 per worker).
    pub fn with_max_pending(mut self, n: Option<usize>) -> Result<ServeConfig> {
        match n {
            Some(0) => return Err(Error::Usage("--max-pending must be at least 1".into())),
            Some(n) => self.max_pending = n,
            None => {}
        }
        Ok(self)
    }
}

/// A duration flag (`10s`, `500ms`), longer than 0.
fn parse_duration(text: &str, flag: &str) -> Result<Duration> {
    let d =
        humantime::parse_duration(text).map_err(|e| Error::Usage(format!("{flag} '{text}': {e} (e.g. 10s, 500ms)")))?;
    if d.is_zero() {
        return Err(Error::Usage(format!("{flag} must be longer than 0")));
    }
    Ok(d)
}

/// `16MiB`, `512KiB`, `1MB`, `4096` (bytes).
pub fn parse_size(s: &str) -> std::result::Result<usize, String> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().map_err(|_| "expected a size such as 16MiB, 512KiB or 4096".to_string())?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "ki" | "kib" => 1024.0,
        "mi" | "mib" => 1024.0 * 1024.0,
        "gi" | "gib" => 1024.0 * 1024.0 * 1024.0,
        u => return Err(format!("unknown unit '{u}' (B, KB, MB, GB, KiB, MiB, GiB)")),
    };
    let bytes = (n * mult).round();
    if !(1.0..=usize::MAX as f64).contains(&bytes) {
        return Err("must be at least 1 byte".into());
    }
    Ok(bytes as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("16MiB"), Ok(16 * 1024 * 1024));
        assert_eq!(parse_size("512 KiB"), Ok(512 * 1024));
        assert_eq!(parse_size("1MB"), Ok(1_000_000));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("1.5KiB"), Ok(1536));
        assert!(parse_size("0").is_err());
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("MiB").is_err());
    }

    #[test]
    fn flags() {
        let c = ServeConfig::new("127.0.0.1:0", Some(3), "1KiB", "250ms").unwrap();
        assert_eq!((c.workers, c.max_body, c.timeout), (3, 1024, Duration::from_millis(250)));
        assert!(ServeConfig::new("localhost", None, "1KiB", "1s").is_err());
        assert!(ServeConfig::new("127.0.0.1:1", Some(0), "1KiB", "1s").is_err());
        assert!(ServeConfig::new("127.0.0.1:1", None, "1KiB", "0s").is_err());
        assert!(ServeConfig::new("127.0.0.1:1", None, "1KiB", "soon").is_err());
        let c = c.with_read_timeouts(Some("2s"), None).unwrap().with_max_connections(Some(7)).unwrap();
        assert_eq!(
            (c.header_timeout, c.body_timeout, c.max_connections),
            (Duration::from_secs(2), DEFAULT_BODY_TIMEOUT, 7)
        );
        let e = c.clone().with_read_timeouts(None, Some("0ms")).unwrap_err().to_string();
        assert_eq!(e, "--body-timeout must be longer than 0");
        let e = c.clone().with_read_timeouts(Some("forever"), None).unwrap_err().to_string();
        assert!(e.starts_with("--header-timeout 'forever': "), "{e}");
        assert!(c.with_max_connections(Some(0)).is_err());
    }
}
