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
use crate::error::Result;
use crate::learn::file;

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
        let (_, params, trained) = file::parse(text, FORMAT, VERSION, |arch: &ArchInfo| {
            let want = ArchInfo::current();
            file::check_arch(&[
                ("arch.node_features", arch.node_features, want.node_features),
                ("arch.job_features", arch.job_features, want.job_features),
                ("arch.embed", arch.embed, want.embed),
                ("arch.hidden", arch.hidden, want.hidden),
                ("arch.levels", arch.levels, want.levels),
            ])?;
            Ok(Arch::new().len)
        })?;
        Ok(Model { params, trained })
    }

    /// The file's text (deterministic: same weights, same bytes).
    pub fn to_json(&self) -> String {
        file::write(FORMAT, VERSION, &ArchInfo::current(), &self.params, &self.trained)
    }
}
