//! The weights file: JSON with the architecture it was trained for, the flat parameter vector
//! and free-form notes on how it was made.
//!
//! ```json
//! {"format": "graphene-decima", "version": 1,
//!  "arch": {"node_features": 8, "job_features": 2, "embed": 8, "hidden": 16, "levels": 20},
//!  "params": [...], "trained": {"command": "...", "seed": 7, ...}}
//! ```
//! A file whose architecture differs from this build's is refused with the field that differs,
//! rather than read into the wrong places.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::features::{F, J};
use super::net::{Arch, D, H, LEVELS};
use crate::error::{Error, Result};

pub const FORMAT: &str = "graphene-decima";
pub const VERSION: u32 = 1;

/// The model trained for this repository (see `crates/graphene/models/README.md` for the command and seed).
pub const BUNDLED: &str = include_str!("../../../models/decima-tpch.json");

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ArchInfo {
    pub node_features: usize,
    pub job_features: usize,
    pub embed: usize,
    pub hidden: usize,
    pub levels: usize,
}

impl ArchInfo {
    pub fn current() -> ArchInfo {
        ArchInfo { node_features: F, job_features: J, embed: D, hidden: H, levels: LEVELS }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct File {
    format: String,
    version: u32,
    arch: ArchInfo,
    params: Vec<f64>,
    #[serde(default)]
    trained: serde_json::Value,
}

/// Trained (or freshly initialized) weights.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub params: Vec<f64>,
    /// How the weights were made (command, seed, iterations...), kept in the file.
    pub trained: serde_json::Value,
}

impl Model {
    /// Random weights from `seed` (Glorot-uniform, zero biases).
    pub fn init(seed: u64) -> Model {
        Model { params: Arch::new().init(seed), trained: serde_json::Value::Null }
    }

    /// The model bundled with the crate.
    pub fn bundled() -> Result<Model> {
        Model::parse(BUNDLED).map_err(|e| e.in_file(Path::new("crates/graphene/models/decima-tpch.json")))
    }

    pub fn load(path: &Path) -> Result<Model> {
        let text = crate::formats::read_text(path)?;
        Model::parse(&text).map_err(|e| e.in_file(path))
    }

    pub fn parse(text: &str) -> Result<Model> {
        let f: File = serde_json::from_str(text).map_err(|e| Error::from_json(&e))?;
        if f.format != FORMAT {
            return Err(Error::field("format", format!("'{}' is not '{FORMAT}'", f.format)));
        }
        if f.version != VERSION {
            return Err(Error::field(
                "version",
                format!("{} is not supported (this build reads {VERSION})", f.version),
            ));
        }
        let want = ArchInfo::current();
        let pairs = [
            ("arch.node_features", f.arch.node_features, want.node_features),
            ("arch.job_features", f.arch.job_features, want.job_features),
            ("arch.embed", f.arch.embed, want.embed),
            ("arch.hidden", f.arch.hidden, want.hidden),
            ("arch.levels", f.arch.levels, want.levels),
        ];
        for (field, got, want) in pairs {
            if got != want {
                return Err(Error::field(field, format!("{got}, but this build's network has {want}")));
            }
        }
        let len = Arch::new().len;
        if f.params.len() != len {
            return Err(Error::field(
                "params",
                format!("{} values, but the network has {len} parameters", f.params.len()),
            ));
        }
        if let Some(i) = f.params.iter().position(|x| !x.is_finite()) {
            return Err(Error::field(format!("params[{i}]"), "not a finite number"));
        }
        Ok(Model { params: f.params, trained: f.trained })
    }

    /// The file's text (deterministic: same weights, same bytes).
    pub fn to_json(&self) -> String {
        let f = File {
            format: FORMAT.into(),
            version: VERSION,
            arch: ArchInfo::current(),
            params: self.params.clone(),
            trained: self.trained.clone(),
        };
        let mut s = serde_json::to_string(&f).expect("serializable");
        s.push('\n');
        s
    }
}
