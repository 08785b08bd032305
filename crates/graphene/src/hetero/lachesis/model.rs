//! LACHESIS's weights file, in the convention of [`crate::learn::file`]:
//!
//! ```json
//! {"format": "graphene-lachesis", "version": 1,
//!  "arch": {"node_features": 11, "edge_features": 1, "embed": 8, "hidden": 16, "policy": [32, 16, 8]},
//!  "params": [...], "trained": {"setting": {...}, "command": "...", ...}}
//! ```
//! `trained.setting` records what the weights were trained for (executors and their speeds,
//! transfer rule, jobs per batch, DAG files). A file whose architecture differs from this
//! build's (another feature count, widths) is refused naming the field, not read into the wrong
//! places.

use std::path::Path;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::features::{A, F};
use super::net::{Arch, D, H, POLICY};
use crate::error::{Error, Result};
use crate::learn::file;

pub const FORMAT: &str = "graphene-lachesis";
pub const VERSION: u32 = 1;

/// The model trained for this repository (see `crates/graphene/models/README.md` for the command).
pub const BUNDLED: &str = include_str!("../../../models/lachesis-tpch.json");

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ArchInfo {
    pub node_features: usize,
    pub edge_features: usize,
    pub embed: usize,
    pub hidden: usize,
    pub policy: Vec<usize>,
}

impl ArchInfo {
    pub fn current() -> ArchInfo {
        ArchInfo { node_features: F, edge_features: A, embed: D, hidden: H, policy: POLICY.to_vec() }
    }
}

/// Trained (or freshly initialized) weights.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub params: Vec<f64>,
    /// How and for which setting the weights were made, kept in the file.
    pub trained: serde_json::Value,
}

impl Model {
    /// Random weights from `seed` (Glorot-uniform, zero biases).
    pub fn init(seed: u64) -> Model {
        Model { params: Arch::new().init(seed), trained: serde_json::Value::Null }
    }

    /// The model bundled with the crate, parsed once.
    pub fn bundled() -> Result<&'static Model> {
        static CELL: OnceLock<std::result::Result<Model, String>> = OnceLock::new();
        CELL.get_or_init(|| {
            Model::parse(BUNDLED)
                .map_err(|e| e.in_file(Path::new("crates/graphene/models/lachesis-tpch.json")).to_string())
        })
        .as_ref()
        .map_err(|e| Error::Usage(e.clone()))
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
                ("arch.edge_features", arch.edge_features, want.edge_features),
                ("arch.embed", arch.embed, want.embed),
                ("arch.hidden", arch.hidden, want.hidden),
            ])?;
            if arch.policy != want.policy {
                return Err(Error::field(
                    "arch.policy",
                    format!("{:?}, but this build's policy network has hidden layers {:?}", arch.policy, want.policy),
                ));
            }
            Ok(Arch::new().len)
        })?;
        Ok(Model { params, trained })
    }

    /// The file's text (deterministic: same weights, same bytes).
    pub fn to_json(&self) -> String {
        file::write(FORMAT, VERSION, &ArchInfo::current(), &self.params, &self.trained)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_exactly_and_refuses_other_shapes() {
        let mut m = Model::init(5);
        m.params[3] = 0.1 + 0.2; // a value whose shortest decimal form is long
        m.trained = serde_json::json!({"setting": {"machines": 50}});
        let text = m.to_json();
        let back = Model::parse(&text).unwrap();
        assert_eq!(back, m);
        assert!(back.params.iter().zip(&m.params).all(|(a, b)| a.to_bits() == b.to_bits()));
        assert_eq!(back.to_json(), text);
        let other = text.replace("\"node_features\":11", "\"node_features\":12");
        let err = Model::parse(&other).unwrap_err().to_string();
        assert!(err.contains("arch.node_features") && err.contains("12"), "{err}");
        let decima = text.replace("graphene-lachesis", "graphene-decima");
        assert!(Model::parse(&decima).unwrap_err().to_string().contains("format"));
        let short = text.replace("\"params\":[", "\"params\":[1.0,");
        assert!(Model::parse(&short).unwrap_err().to_string().contains("params"));
    }
}
