//! The weights-file convention of the learned schedulers: one JSON object
//! `{"format": NAME, "version": N, "arch": {...}, "params": [...], "trained": {...}}`, where
//! `arch` names the network's shape, `params` is the flat parameter vector and `trained` records
//! how (and for which setting) the weights were made. A file for another format, version or
//! shape is refused naming the field that differs, rather than read into the wrong places.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

#[derive(Serialize, Deserialize)]
struct File<A> {
    format: String,
    version: u32,
    arch: A,
    params: Vec<f64>,
    #[serde(default)]
    trained: serde_json::Value,
}

/// The file's text (deterministic: same inputs, same bytes), newline-terminated.
pub fn write<A: Serialize>(
    format: &str,
    version: u32,
    arch: &A,
    params: &[f64],
    trained: &serde_json::Value,
) -> String {
    #[derive(Serialize)]
    struct Out<'a, A> {
        format: &'a str,
        version: u32,
        arch: &'a A,
        params: &'a [f64],
        trained: &'a serde_json::Value,
    }
    let mut s =
        serde_json::to_string(&Out { format, version, arch, params, trained }).expect("a weights file serializes");
    s.push('\n');
    s
}

/// Reads a file of `format` and `version`; checks that every parameter is finite and that there
/// are `len(arch)` of them. Returns the architecture, the parameters and the `trained` notes.
pub fn parse<A: DeserializeOwned>(
    text: &str,
    format: &str,
    version: u32,
    len: impl Fn(&A) -> Result<usize>,
) -> Result<(A, Vec<f64>, serde_json::Value)> {
    let f: File<A> = serde_json::from_str(text).map_err(|e| Error::from_json(&e))?;
    if f.format != format {
        return Err(Error::field("format", format!("'{}' is not '{format}'", f.format)));
    }
    if f.version != version {
        return Err(Error::field("version", format!("{} is not supported (this build reads {version})", f.version)));
    }
    let want = len(&f.arch)?;
    if f.params.len() != want {
        return Err(Error::field(
            "params",
            format!("{} values, but the network has {want} parameters", f.params.len()),
        ));
    }
    if let Some(i) = f.params.iter().position(|x| !x.is_finite()) {
        return Err(Error::field(format!("params[{i}]"), "not a finite number"));
    }
    Ok((f.arch, f.params, f.trained))
}

/// Compares (field, in the file, in this build) pairs; the first that differs is the error.
pub fn check_arch(pairs: &[(&str, usize, usize)]) -> Result<()> {
    for &(field, got, want) in pairs {
        if got != want {
            return Err(Error::field(field, format!("{got}, but this build's network has {want}")));
        }
    }
    Ok(())
}
