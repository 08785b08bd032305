//! What commands write: schedule reports, and files written atomically.

pub mod chrome;
pub mod replay;
mod report;
pub mod table;

pub use report::{ScheduleReport, TaskOut};

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Where an output path really leads, decided before anything is written.
#[derive(Debug, PartialEq, Eq)]
pub enum Target {
    /// `-`: standard output.
    Stdout,
    /// A device, FIFO or socket (`/dev/null`, a named pipe, `/dev/stdout` on a terminal): opened
    /// and written in place. Replacing it by a rename would turn `/dev/null` into a regular file
    /// for every program on the machine, or cut a pipe's reader off.
    Special(PathBuf),
    /// A regular file, or a path that does not exist yet: written to a temporary file beside it
    /// and renamed over it, so a failure never leaves a half-written file. Symbolic links are
    /// followed: this is the link's final target, and the link itself stays.
    File(PathBuf),
}

/// Decides how to write `path`, refusing a directory and any path that is the same file as
/// one of `inputs` (a hard link, a symbolic link or another spelling of it included): writing
/// there would destroy the input the output was computed from.
pub fn target(path: &Path, inputs: &[&Path]) -> Result<Target> {
    if path.as_os_str() == "-" {
        return Ok(Target::Stdout);
    }
    let fail = |m: String| Error::Usage(format!("--out {}: {m}", path.display()));
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        // A path that does not exist yet, or a link to one: the file is created where the
        // link's chain ends.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Target::File(final_link_target(path)?)),
        Err(e) => return Err(Error::Io(e).in_file(path)),
    };
    if meta.is_dir() {
        return Err(fail("is a directory; give a file name".into()));
    }
    for input in inputs {
        if let Ok(im) = std::fs::metadata(input) {
            if same_file(&meta, &im) {
                return Err(fail(format!("is the input {}; write the output elsewhere", input.display())));
            }
        }
    }
    if !meta.is_file() {
        return Ok(Target::Special(path.to_path_buf()));
    }
    let real = std::fs::canonicalize(path).map_err(|e| Error::Io(e).in_file(path))?;
    Ok(Target::File(real))
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_a: &std::fs::Metadata, _b: &std::fs::Metadata) -> bool {
    false
}

/// Follows a chain of symbolic links to the path it ends at (which may not exist yet).
fn final_link_target(path: &Path) -> Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&p).map_err(|e| Error::Io(e).in_file(path))?;
                p = match p.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(Error::Usage(format!("--out {}: too many levels of symbolic links", path.display())))
}

/// Refuses two outputs of one command that would be written to the same place: the same
/// regular file under any spelling, symbolic or hard link, the same new path, or both standard
/// output (`-`). Each output is `(flag, path)`. Devices, FIFOs and sockets are written in place
/// and may be shared (`--out /dev/null --waves-out /dev/null`). Checked before any work, so that
/// one output never silently replaces another.
pub fn distinct_outputs(outputs: &[(&str, &Path)]) -> Result<()> {
    let mut seen: Vec<(&str, &Path, Place)> = Vec::with_capacity(outputs.len());
    for &(flag, path) in outputs {
        let Some(place) = place(path)? else { continue };
        if let Some((other, other_path, _)) = seen.iter().find(|(_, _, p)| *p == place) {
            let what = if place == Place::Stdout { "standard output".to_string() } else { "the same file".to_string() };
            return Err(Error::Usage(format!(
                "{flag} {} and {other} {} are {what}; give each output its own file",
                path.display(),
                other_path.display()
            )));
        }
        seen.push((flag, path, place));
    }
    Ok(())
}

/// Where an output lands, the same for every spelling of it.
#[derive(Debug, PartialEq, Eq)]
enum Place {
    Stdout,
    /// An existing regular file: its device and inode (its canonical path where there are none).
    Existing(u64, u64, PathBuf),
    /// A path that does not exist yet, made absolute through its existing folders.
    New(PathBuf),
}

/// [`Place`] of an output path; None for a device, FIFO or socket (written in place).
fn place(path: &Path) -> Result<Option<Place>> {
    if path.as_os_str() == "-" {
        return Ok(Some(Place::Stdout));
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => {
            #[cfg(unix)]
            let place = {
                use std::os::unix::fs::MetadataExt;
                Place::Existing(m.dev(), m.ino(), PathBuf::new())
            };
            #[cfg(not(unix))]
            let place = Place::Existing(0, 0, std::fs::canonicalize(path).map_err(|e| Error::Io(e).in_file(path))?);
            Ok(Some(place))
        }
        // A directory is refused by the writer itself, with its own message.
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok(Some(Place::New(resolve_new(&final_link_target(path)?))))
        }
        Err(e) => Err(Error::Io(e).in_file(path)),
    }
}

/// A path that does not exist, made absolute: followed through the file system (links and
/// `..` resolved) as far as it exists, the rest appended with `.` and `..` resolved by name (no
/// part of the rest exists, so none is a link).
fn resolve_new(path: &Path) -> PathBuf {
    use std::path::Component;
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().map(|d| d.join(path)).unwrap_or_else(|_| path.to_path_buf())
    };
    let mut out = PathBuf::new();
    let mut existing = true;
    for c in absolute.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir if !existing => {
                out.pop();
            }
            _ => {
                out.push(c.as_os_str());
                if existing {
                    match std::fs::canonicalize(&out) {
                        Ok(real) => out = real,
                        Err(_) => existing = false,
                    }
                }
            }
        }
    }
    out
}

/// Writes `bytes` to `path` as [`target`] decides (refusing the inputs' paths).
pub fn write_output(path: &Path, bytes: &[u8], inputs: &[&Path]) -> Result<()> {
    match target(path, inputs)? {
        Target::Stdout => write_stdout(bytes),
        Target::Special(p) => {
            let wrap = |e: std::io::Error| Error::Io(e).in_file(&p);
            let mut f = std::fs::OpenOptions::new().write(true).open(&p).map_err(wrap)?;
            f.write_all(bytes).map_err(wrap)?;
            f.flush().map_err(wrap)
        }
        Target::File(p) => replace_file(&p, bytes),
    }
}

/// Writes to `path` (see [`write_output`]), or to standard output when `path` is None.
pub fn write_or_stdout(path: Option<&Path>, bytes: &[u8], inputs: &[&Path]) -> Result<()> {
    match path {
        Some(p) => write_output(p, bytes, inputs),
        None => write_stdout(bytes),
    }
}

fn write_stdout(bytes: &[u8]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()?;
    Ok(())
}

/// Writes `bytes` to the regular file (or new path) `path` through a temporary file in the same
/// directory and a rename, so a failure part-way never leaves a half-written file where the
/// caller expects a whole one. Callers other than [`write_output`] must know `path` is not a
/// special file.
pub fn replace_file(path: &Path, bytes: &[u8]) -> Result<()> {
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

/// A folder of outputs written together: files go to a staging folder first and appear in the
/// destination only when [`OutDir::commit`] runs, so a failure part-way leaves the previous
/// outputs as they were, never new files beside old ones.
///
/// A destination that does not exist is created by renaming the staging folder (one atomic
/// step). An existing one may hold the user's other files, so it is not replaced as a whole:
/// the staged files are renamed into it one by one (renames within one file system, which do
/// not fail for lack of space), after every file has been written and synced.
pub struct OutDir {
    dest: PathBuf,
    staging: tempfile::TempDir,
    existed: bool,
    names: Vec<String>,
    /// Inputs (canonical paths) that an output file must not replace.
    inputs: Vec<PathBuf>,
}

impl OutDir {
    /// Prepares `dest`, refusing a path that exists and is not a directory.
    pub fn create(dest: &Path, inputs: &[&Path]) -> Result<OutDir> {
        let existed = match std::fs::metadata(dest) {
            Ok(m) if m.is_dir() => true,
            Ok(_) => {
                return Err(Error::Usage(format!("--out {}: exists and is not a directory", dest.display())));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(Error::Io(e).in_file(dest)),
        };
        let stage_in = if existed {
            dest.to_path_buf()
        } else {
            let parent = match dest.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            std::fs::create_dir_all(&parent).map_err(|e| Error::Io(e).in_file(&parent))?;
            parent
        };
        let staging = tempfile::Builder::new()
            .prefix(".graphene-out-")
            .tempdir_in(&stage_in)
            .map_err(|e| Error::Io(e).in_file(dest))?;
        let inputs = inputs.iter().filter_map(|p| std::fs::canonicalize(p).ok()).collect();
        Ok(OutDir { dest: dest.to_path_buf(), staging, existed, names: Vec::new(), inputs })
    }

    /// Stages one file of the folder (`name` is a plain file name).
    pub fn write(&mut self, name: &str, bytes: &[u8]) -> Result<()> {
        let final_path = self.dest.join(name);
        if let Ok(real) = std::fs::canonicalize(&final_path) {
            if self.inputs.contains(&real) {
                return Err(Error::Usage(format!(
                    "--out {}: would replace the input {}; write the output elsewhere",
                    self.dest.display(),
                    final_path.display()
                )));
            }
        }
        let path = self.staging.path().join(name);
        let wrap = |e: std::io::Error| Error::Io(e).in_file(&final_path);
        let mut f = std::fs::File::create(&path).map_err(wrap)?;
        f.write_all(bytes).map_err(wrap)?;
        f.sync_all().map_err(wrap)?;
        self.names.push(name.to_string());
        Ok(())
    }

    /// Moves every staged file into place.
    pub fn commit(self) -> Result<()> {
        let wrap = |e: std::io::Error| Error::Io(e).in_file(&self.dest);
        if !self.existed {
            let staged = self.staging.keep();
            #[cfg(unix)]
            {
                // A temporary folder is private (0700); the output folder should not be.
                use std::os::unix::fs::PermissionsExt;
                let _ = std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o755));
            }
            if let Err(e) = std::fs::rename(&staged, &self.dest) {
                let _ = std::fs::remove_dir_all(&staged);
                return Err(wrap(e));
            }
            return Ok(());
        }
        for name in &self.names {
            std::fs::rename(self.staging.path().join(name), self.dest.join(name)).map_err(wrap)?;
        }
        Ok(())
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
            replace_file(&path, b"new").unwrap();
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, mode);
            assert_eq!(std::fs::read(&path).unwrap(), b"new");
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file left behind");
    }
}
