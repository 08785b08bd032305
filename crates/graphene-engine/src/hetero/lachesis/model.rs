//! LACHESIS's weights file, in the convention of [`crate::learn::file`]:
//!
//! ```json
//! {"format": "graphene-lachesis", "version": 1,
//!  "arch": {"node_features": 11, "edge_features": 1, "embed": 8, "hidden": 16, "policy": [32, 16, 8]},
//!  "params": [...], "trained": {"setting": {...}, "command": "...", ...}}
//! ```
//! `trained.setting` records what the weights were trained for (executors and their speeds,
//! transfer rule, jobs per batch, DAG files) and, as `decision: "task"`, that each decision
//! places one task ([`super::Decision`]; absent means a stage, as in the bundled model). A file whose architecture differs from this
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
pub const BUNDLED: &str = include_str!("../../../../graphene/models/lachesis-tpch.json");

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ArchInfo {
    pub node_features: usize,
    pub edge_features: usize,
    pub embed: usize,
    pub hidden: usize,
    pub policy: Vec<usize>,
}

impl file::Arch for ArchInfo {
    const FORMAT: &'static str = FORMAT;
    const VERSION: u32 = VERSION;

    fn current() -> ArchInfo {
        ArchInfo { node_features: F, edge_features: A, embed: D, hidden: H, policy: POLICY.to_vec() }
    }

    fn sizes(&self) -> Vec<(&'static str, usize)> {
        vec![
            ("arch.node_features", self.node_features),
            ("arch.edge_features", self.edge_features),
            ("arch.embed", self.embed),
            ("arch.hidden", self.hidden),
        ]
    }

    fn check_more(&self, want: &ArchInfo) -> Result<()> {
        if self.policy != want.policy {
            return Err(Error::field(
                "arch.policy",
                format!("{:?}, but this build's policy network has hidden layers {:?}", self.policy, want.policy),
            ));
        }
        Ok(())
    }

    fn len() -> usize {
        Arch::new().len
    }

    fn init(seed: u64) -> Vec<f64> {
        Arch::new().init(seed)
    }

    /// `trained.setting.decision`, when present, must name a decision this build makes: a
    /// model trained to place one task per decision scored a stage at a time (or the reverse)
    /// would run a policy it was not trained for.
    fn validate(weights: &Model) -> Result<()> {
        super::Decision::of(&weights.trained).map(|_| ())
    }
}

/// Trained (or freshly initialized) weights; `trained` records how and for which setting.
pub type Model = file::Weights<ArchInfo>;

impl Model {
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

    #[test]
    fn the_decision_is_read_from_the_setting_and_a_bad_one_is_refused() {
        use super::super::Decision;
        let mut m = Model::init(5);
        assert_eq!(Decision::of(&m.trained).unwrap(), Decision::Stage);
        assert_eq!(Decision::of(&Model::bundled().unwrap().trained).unwrap(), Decision::Stage);
        m.trained = serde_json::json!({"setting": {"machines": 50, "decision": "task"}});
        assert_eq!(Decision::of(&Model::parse(&m.to_json()).unwrap().trained).unwrap(), Decision::Task);
        for bad in [serde_json::json!("tasks"), serde_json::json!(1)] {
            m.trained = serde_json::json!({"setting": {"decision": bad}});
            let err = Model::parse(&m.to_json()).unwrap_err().to_string();
            assert!(err.contains("trained.setting.decision") && err.contains("stage"), "{err}");
        }
    }
}
