//! The weights file: JSON with the architecture it was trained for, the flat parameter vector
//! and free-form notes on how it was made.
//!
//! ```json
//! {"format": "graphene-decima", "version": 1,
//!  "arch": {"node_features": 8, "job_features": 2, "embed": 8, "hidden": 16, "levels": 20},
//!  "params": [...], "trained": {"config": {...}, "setting": {...}, ...}}
//! ```
//! A file whose architecture differs from this build's is refused with the field that differs,
//! rather than read into the wrong places.
//!
//! `trained.setting` is the cluster and job mix the model was trained for ([`Setting`]), which
//! runs are compared against. Files written before it was kept have none and still load (the
//! setting is then unknown); a setting that is present must be well-formed, or the file is
//! refused naming the field. It lives inside `trained`, not beside it, so the file's version is
//! unchanged and older builds read newer files.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::features::{Scaling, F, J};
use super::net::{Arch, D, H, LEVELS};
use super::setting::{Difference, Freed, RunShape, Setting};
use crate::error::{Error, Result};
use crate::learn::file;

pub const FORMAT: &str = "graphene-decima";
pub const VERSION: u32 = 1;

/// The default model, trained for the TPC-H setting of the experiments (see
/// `crates/graphene/models/README.md` for the command and seed).
pub const BUNDLED: &str = include_str!("../../../../graphene/models/decima-tpch.json");

/// Every model bundled with the crate, by file name, the default first. A run without
/// `--decima-model` gets the one whose recorded setting is closest to it ([`Model::closest`]):
/// a model applied outside its setting can be several times worse (the TPC-H model on
/// spark-sched-sim's one-slot workload), so the choice is made for the user.
pub const BUNDLED_MODELS: &[(&str, &str)] = &[
    ("decima-tpch.json", BUNDLED),
    ("decima-sss.json", include_str!("../../../../graphene/models/decima-sss.json")),
    ("decima-sss-waves.json", include_str!("../../../../graphene/models/decima-sss-waves.json")),
    ("decima-sss-waves-sticky.json", include_str!("../../../../graphene/models/decima-sss-waves-sticky.json")),
    ("decima-sss-100g.json", include_str!("../../../../graphene/models/decima-sss-100g.json")),
    ("decima-sss-100g-waves.json", include_str!("../../../../graphene/models/decima-sss-100g-waves.json")),
    (
        "decima-sss-100g-waves-sticky.json",
        include_str!("../../../../graphene/models/decima-sss-100g-waves-sticky.json"),
    ),
];

/// The bundled models' settings, parsed once per process (each file is about 100 KB).
fn bundled_settings() -> &'static [(&'static str, Option<Setting>)] {
    static SETTINGS: std::sync::OnceLock<Vec<(&'static str, Option<Setting>)>> = std::sync::OnceLock::new();
    SETTINGS.get_or_init(|| {
        BUNDLED_MODELS
            .iter()
            .map(|(name, text)| {
                // A unit test parses every bundled file; a broken one would be a build defect.
                let setting = Model::parse(text).ok().and_then(|m| m.setting().ok().flatten());
                (*name, setting)
            })
            .collect()
    })
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ArchInfo {
    pub node_features: usize,
    pub job_features: usize,
    pub embed: usize,
    pub hidden: usize,
    pub levels: usize,
}

impl file::Arch for ArchInfo {
    const FORMAT: &'static str = FORMAT;
    const VERSION: u32 = VERSION;

    fn current() -> ArchInfo {
        ArchInfo { node_features: F, job_features: J, embed: D, hidden: H, levels: LEVELS }
    }

    fn sizes(&self) -> Vec<(&'static str, usize)> {
        vec![
            ("arch.node_features", self.node_features),
            ("arch.job_features", self.job_features),
            ("arch.embed", self.embed),
            ("arch.hidden", self.hidden),
            ("arch.levels", self.levels),
        ]
    }

    fn len() -> usize {
        Arch::new().len
    }

    fn init(seed: u64) -> Vec<f64> {
        Arch::new().init(seed)
    }

    /// A setting, feature scaling or freed-slot rule that is present must be well-formed.
    fn validate(model: &Model) -> Result<()> {
        model.setting()?;
        model.scaling()?;
        model.freed()?;
        Ok(())
    }
}

/// Trained (or freshly initialized) weights; `trained` records how they were made (command,
/// seed, iterations...) and the setting.
pub type Model = file::Weights<ArchInfo>;

impl Model {
    /// The model bundled with the crate.
    pub fn bundled() -> Result<Model> {
        Model::parse(BUNDLED).map_err(|e| e.in_file(Path::new("crates/graphene/models/decima-tpch.json")))
    }

    /// The bundled model called `name` (a file name of [`BUNDLED_MODELS`]).
    pub fn bundled_named(name: &str) -> Result<Model> {
        let (name, text) = BUNDLED_MODELS.iter().find(|(n, _)| *n == name).ok_or_else(|| {
            let known: Vec<&str> = BUNDLED_MODELS.iter().map(|(n, _)| *n).collect();
            Error::Usage(format!("no bundled decima model '{name}' (bundled: {})", known.join(", ")))
        })?;
        Model::parse(text).map_err(|e| e.in_file(Path::new(&format!("crates/graphene/models/{name}"))))
    }

    /// The name of the bundled model whose recorded setting is closest to `run`, and how it
    /// differs. Closest means, in this order: the fewest differences in what a machine is
    /// (capacity, overbooked resources, speeds: the features a model reads are scaled by
    /// them), then in how durations are drawn (waves, moving delay), then the fewest
    /// differences of any kind (the default model on a tie, then the list's order).
    pub fn closest(run: &RunShape) -> (&'static str, Vec<Difference>) {
        let key = |diffs: &[Difference]| {
            let count = |fields: &[&str]| diffs.iter().filter(|d| fields.contains(&d.field)).count();
            (count(&["capacity", "overbooked resources", "speeds"]), count(&["durations", "moving delay"]), diffs.len())
        };
        let mut best: Option<(&'static str, Vec<Difference>)> = None;
        for (name, setting) in bundled_settings() {
            let Some(setting) = setting else { continue };
            let diffs = setting.differences(run);
            if best.as_ref().is_none_or(|(_, b)| key(&diffs) < key(b)) {
                best = Some((name, diffs));
            }
        }
        best.unwrap_or((BUNDLED_MODELS[0].0, Vec::new()))
    }

    /// The setting the model was trained for; None when the file records none (older files).
    pub fn setting(&self) -> Result<Option<Setting>> {
        match self.trained.get("setting") {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(v) => Setting::deserialize(v)
                .map(Some)
                .map_err(|e| Error::field("trained.setting", format!("not a training setting: {e}"))),
        }
    }

    /// How the weights expect their features scaled: `trained.features` ("log"), absent for
    /// [`Scaling::Linear`] (every file written before the option existed). An unknown name is
    /// refused naming the field.
    pub fn scaling(&self) -> Result<Scaling> {
        match self.trained.get("features") {
            None | Some(serde_json::Value::Null) => Ok(Scaling::Linear),
            Some(serde_json::Value::String(n)) => Scaling::parse(n).ok_or_else(|| {
                Error::field("trained.features", format!("unknown feature scaling '{n}' (linear, log)"))
            }),
            Some(v) => Err(Error::field("trained.features", format!("not a feature scaling name: {v}"))),
        }
    }

    /// Where freed resources go before the agent is asked: `trained.freed` ("own-job"), absent
    /// for [`Freed::AnyJob`] (every file written before the option existed).
    pub fn freed(&self) -> Result<Freed> {
        match self.trained.get("freed") {
            None | Some(serde_json::Value::Null) => Ok(Freed::AnyJob),
            Some(serde_json::Value::String(n)) => Freed::parse(n)
                .ok_or_else(|| Error::field("trained.freed", format!("unknown rule '{n}' (any-job, own-job)"))),
            Some(v) => Err(Error::field("trained.freed", format!("not a rule name: {v}"))),
        }
    }

    /// Records `freed` as `trained.freed` (nothing for the default).
    pub fn set_freed(&mut self, freed: Freed) {
        if let Some(name) = freed.name() {
            if !self.trained.is_object() {
                self.trained = serde_json::json!({});
            }
            self.trained.as_object_mut().expect("an object").insert("freed".into(), name.into());
        }
    }

    /// Records `scaling` as `trained.features` (nothing for the default, so files stay as
    /// they were).
    pub fn set_scaling(&mut self, scaling: Scaling) {
        if let Some(name) = scaling.name() {
            if !self.trained.is_object() {
                self.trained = serde_json::json!({});
            }
            self.trained.as_object_mut().expect("an object").insert("features".into(), name.into());
        }
    }

    /// Records `setting` as `trained.setting` (turning absent notes into an object).
    pub fn set_setting(&mut self, setting: &Setting) {
        if !self.trained.is_object() {
            self.trained = serde_json::json!({});
        }
        let v = serde_json::to_value(setting).expect("a setting serializes");
        self.trained.as_object_mut().expect("an object").insert("setting".into(), v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::online::decima::setting::{Arrival, DagSource};

    fn setting() -> Setting {
        let cap = [("cpu", 16.0), ("mem", 64.0)].into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        Setting {
            machines: vec![crate::model::MachineGroup { count: 10, capacity: cap }],
            overbook: vec!["disk".into(), "net".into()],
            speeds: None,
            heartbeat: 1.0,
            arrival: Arrival { poisson_mean: 8.005451916037028, load: Some(0.8) },
            jobs: 200,
            dags: vec![DagSource { file: "tpch-2g.json".into(), format: Some("tpch".into()), query: Some(6) }],
            executors: 20,
            demands: "mixed".into(),
            demand_seed: 7,
            waves: None,
            sticky: false,
        }
    }

    #[test]
    fn the_setting_round_trips_through_the_weights_file() {
        let mut m = Model::init(3);
        assert_eq!(m.setting().unwrap(), None);
        m.set_setting(&setting());
        let back = Model::parse(&m.to_json()).unwrap();
        assert_eq!(back.setting().unwrap(), Some(setting()));
        assert_eq!(back.params, m.params);
        assert_eq!(back.to_json(), m.to_json(), "same bytes after a round trip");
        // Other notes are kept beside it.
        let mut n = Model { trained: serde_json::json!({"seed": 4}), ..Model::init(3) };
        n.set_setting(&setting());
        assert_eq!(Model::parse(&n.to_json()).unwrap().trained["seed"], 4);
    }

    #[test]
    fn the_feature_scaling_round_trips_and_defaults_to_linear() {
        let mut m = Model::init(3);
        assert_eq!(m.scaling().unwrap(), Scaling::Linear);
        m.set_scaling(Scaling::Linear);
        assert_eq!(m.trained, serde_json::Value::Null, "the default writes nothing");
        m.set_scaling(Scaling::Log);
        let back = Model::parse(&m.to_json()).unwrap();
        assert_eq!(back.scaling().unwrap(), Scaling::Log);
        assert_eq!(back.trained["features"], "log");
        let bad = Model { trained: serde_json::json!({"features": "cubic"}), ..Model::init(3) };
        let e = Model::parse(&bad.to_json()).unwrap_err().to_string();
        assert!(e.contains("trained.features") && e.contains("cubic"), "{e}");
        let bad = Model { trained: serde_json::json!({"features": 2}), ..Model::init(3) };
        assert!(Model::parse(&bad.to_json()).unwrap_err().to_string().contains("trained.features"));
        assert_eq!(Model::bundled().unwrap().scaling().unwrap(), Scaling::Linear, "the bundled model is linear");
        assert_eq!(Model::bundled().unwrap().freed().unwrap(), Freed::AnyJob);
        let mut m = Model::init(3);
        m.set_freed(Freed::AnyJob);
        assert_eq!(m.trained, serde_json::Value::Null);
        m.set_freed(Freed::OwnJob);
        assert_eq!(Model::parse(&m.to_json()).unwrap().freed().unwrap(), Freed::OwnJob);
        let bad = Model { trained: serde_json::json!({"freed": "nobody"}), ..Model::init(3) };
        assert!(Model::parse(&bad.to_json()).unwrap_err().to_string().contains("trained.freed"));
    }

    #[test]
    fn a_file_without_a_setting_still_loads() {
        let m = Model { trained: serde_json::json!({"machines": 10, "load": 0.8}), ..Model::init(2) };
        let back = Model::parse(&m.to_json()).unwrap();
        assert_eq!(back.setting().unwrap(), None, "unknown");
        let null = Model::init(2).to_json();
        assert!(null.contains("\"trained\":null"));
        assert_eq!(Model::parse(&null).unwrap().setting().unwrap(), None);
    }

    #[test]
    fn a_malformed_setting_is_refused_naming_the_field() {
        let m = Model { trained: serde_json::json!({"setting": {"machines": 10}}), ..Model::init(2) };
        let e = Model::parse(&m.to_json()).unwrap_err().to_string();
        assert!(e.contains("trained.setting"), "{e}");
    }

    /// Every bundled model parses and records its setting, and for a run of exactly that
    /// setting it is the one picked, so no run is steered to a model trained for another.
    #[test]
    fn each_bundled_model_is_the_closest_for_its_own_setting() {
        for (name, _) in BUNDLED_MODELS {
            let s = Model::bundled_named(name).unwrap().setting().unwrap().expect("a setting");
            let own = RunShape {
                machines: s.machines.clone(),
                overbook: s.overbook.clone(),
                speeds: s.speeds.clone(),
                heartbeat: s.heartbeat,
                jobs: s.jobs,
                mean_gap: Some(s.arrival.poisson_mean),
                load: s.arrival.load,
                waves: s.waves.as_ref().map(|w| w.moving_delay),
                sticky: s.sticky,
            };
            assert_eq!(Model::closest(&own), (*name, vec![]), "{name}");
        }
        assert!(Model::bundled_named("nope.json").unwrap_err().to_string().contains("bundled: decima-tpch.json"));
    }

    #[test]
    fn the_bundled_model_records_its_setting() {
        let m = Model::bundled().unwrap();
        assert_eq!(m.to_json(), BUNDLED, "the bundled file is what this build writes, byte for byte");
        let s = m.setting().unwrap().expect("the bundled model has a setting");
        assert_eq!(s.machines.iter().map(|g| g.count).sum::<usize>(), 10);
        assert_eq!(s.machines[0].capacity["cpu"], 16.0);
        assert_eq!(s.overbook, vec!["disk".to_string(), "net".to_string()]);
        assert_eq!(s.arrival.load, Some(0.8));
        assert_eq!(s.jobs, 200);
        assert_eq!(s.dags.len(), 4);
        assert_eq!(s.executors, 20);
    }
}
