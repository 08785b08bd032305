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
    let mut builder = tempfile::Builder::new();
    builder.prefix(".graphene-");
    // A temporary file is private (0600); the result should look like any file the user
    // writes: the permissions of the file it replaces, or 0666 less the umask for a new one.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let perms = match std::fs::metadata(path) {
            Ok(m) => m.permissions(),
            Err(_) => std::fs::Permissions::from_mode(0o666),
        };
        builder.permissions(perms);
    }
    let mut tmp = builder.tempfile_in(dir).map_err(wrap)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Replacing a file keeps its permissions (a temporary file alone would leave 0600), and
    /// the contents are the new ones.
    #[cfg(unix)]
    #[test]
    fn atomic_write_keeps_the_replaced_files_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        for mode in [0o640, 0o604] {
            std::fs::write(&path, b"old").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            write_atomic(&path, b"new").unwrap();
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, mode);
            assert_eq!(std::fs::read(&path).unwrap(), b"new");
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file left behind");
    }
}
