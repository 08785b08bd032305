//! What commands write: schedule reports, and files written atomically.

mod report;

pub use report::{ScheduleReport, TaskOut};

use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so a
/// failure part-way never leaves a half-written file where the caller expects a whole one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let wrap = |e: std::io::Error| Error::Io(e).in_file(path);
    let mut tmp = tempfile::Builder::new().prefix(".graphene-").tempfile_in(dir).map_err(wrap)?;
    tmp.write_all(bytes).map_err(wrap)?;
    tmp.as_file().sync_all().map_err(wrap)?;
    tmp.persist(path).map_err(|e| wrap(e.error))?;
    Ok(())
}

/// Writes to `path`, or to standard output when `path` is None.
pub fn write_or_stdout(path: Option<&Path>, bytes: &[u8]) -> Result<()> {
    match path {
        Some(p) => write_atomic(p, bytes),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes)?;
            out.flush()?;
            Ok(())
        }
    }
}
