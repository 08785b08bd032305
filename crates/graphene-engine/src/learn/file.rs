//! The weights-file convention of the learned schedulers: one JSON object
//! `{"format": NAME, "version": N, "arch": {...}, "params": [...], "trained": {...}}`, where
//! `arch` names the network's shape, `params` is the flat parameter vector and `trained` records
//! how (and for which setting) the weights were made. A file for another format, version or
//! shape is refused naming the field that differs, rather than read into the wrong places.
//!
//! [`Weights`] is a model's weights as both learned schedulers keep them; each model says what
//! its file looks like through [`Arch`], so reading, checking and writing the file exist once.

use std::marker::PhantomData;
use std::path::Path;

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

/// A model's `arch` record: which format and version its file is, this build's shape, and how a
/// file's shape is checked against it.
pub trait Arch: Serialize + DeserializeOwned {
    const FORMAT: &'static str;
    const VERSION: u32;
    /// This build's architecture.
    fn current() -> Self;
    /// The sizes a file's architecture `self` must share with this build's, each with the field
    /// that names it.
    fn sizes(&self) -> Vec<(&'static str, usize)>;
    /// Whatever else must agree with this build's architecture `want`.
    fn check_more(&self, _want: &Self) -> Result<()> {
        Ok(())
    }
    /// This build's parameter count.
    fn len() -> usize;
    /// Random initial parameters from `seed`.
    fn init(seed: u64) -> Vec<f64>;
    /// Further checks of a parsed file (its `trained` notes, say).
    fn validate(_weights: &Weights<Self>) -> Result<()> {
        Ok(())
    }
}

/// Trained (or freshly initialized) weights of the model whose architecture record is `A`.
#[derive(Clone, Debug, PartialEq)]
pub struct Weights<A> {
    pub params: Vec<f64>,
    /// How (and for which setting) the weights were made, kept in the file.
    pub trained: serde_json::Value,
    pub format: PhantomData<A>,
}

impl<A: Arch> Weights<A> {
    /// Random weights from `seed` (Glorot-uniform, zero biases).
    pub fn init(seed: u64) -> Weights<A> {
        Weights { params: A::init(seed), trained: serde_json::Value::Null, format: PhantomData }
    }

    pub fn load(path: &Path) -> Result<Weights<A>> {
        let text = crate::formats::read_text(path)?;
        Weights::parse(&text).map_err(|e| e.in_file(path))
    }

    pub fn parse(text: &str) -> Result<Weights<A>> {
        let (_, params, trained) = parse(text, A::FORMAT, A::VERSION, |arch: &A| {
            let want = A::current();
            let pairs: Vec<_> =
                arch.sizes().into_iter().zip(want.sizes()).map(|((f, got), (_, w))| (f, got, w)).collect();
            check_arch(&pairs)?;
            arch.check_more(&want)?;
            Ok(A::len())
        })?;
        let weights = Weights { params, trained, format: PhantomData };
        A::validate(&weights)?;
        Ok(weights)
    }

    /// The file's text (deterministic: same weights, same bytes).
    pub fn to_json(&self) -> String {
        write(A::FORMAT, A::VERSION, &A::current(), &self.params, &self.trained)
    }
}
