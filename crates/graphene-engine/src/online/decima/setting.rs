//! The setting a model was trained for, kept in its weights file (`trained.setting`), and the
//! comparison of a run against it.
//!
//! Why: a learned policy is only as good as the distribution it was trained on. Decima's inputs
//! are normalized by the cluster (shares, free resources over capacity) and its limits are
//! shares, so a model runs on any cluster and any trace without an error, and can schedule
//! badly on one unlike its training's without anything saying so. The weights file therefore
//! records the cluster and the job mix, and [`Setting::differences`] lists what a run changes;
//! the CLI prints that as one warning. A run is never refused: trying a model elsewhere is a
//! legitimate experiment, it only must not go unnoticed.
//!
//! ```json
//! "setting": {"machines": [{"count": 10, "capacity": {"cpu": 16, "mem": 64, "disk": 200, "net": 1250}}],
//!             "overbook": ["disk", "net"], "heartbeat": 1.0,
//!             "arrival": {"poisson_mean": 8.005, "load": 0.8}, "jobs": 200,
//!             "dags": [{"file": "tpch-2g.json", "format": "tpch"}], "executors": 20,
//!             "demands": "mixed", "demand_seed": 7}
//! ```
//! `machines` and `overbook` are a cluster file's (`--cluster` reads the same object). A model
//! trained with wave durations (`train-decima --waves`) also has `"waves": {"moving_delay": 2.0}`;
//! a run with `replay --waves` and a model without it, or the other way round, differ in
//! `durations`.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::model::{Cluster, MachineGroup, Workload};
use crate::trace::load;

/// Where a machine's freed resources go before the agent is asked (the model file's
/// `trained.freed`, see [`super::model::Model::freed`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Freed {
    /// To the committed stages of every active job, jobs in arrival order (the default, and
    /// every file written before the option): an older job with a commitment below its limit
    /// takes any machine's freed resources first.
    #[default]
    AnyJob,
    /// Only to the committed stages of the job that last picked tasks on this machine, as
    /// Decima's executor stays on its job's stage while it has tasks and the job is within its
    /// limit; otherwise the agent is asked. On one-slot machines (Decima's executors) that is
    /// exactly the paper's rule, and a job that arrived later is not queued behind older
    /// commitments without the agent's say.
    OwnJob,
}

impl Freed {
    /// The name kept in a model file; None for the default.
    pub fn name(self) -> Option<&'static str> {
        match self {
            Freed::AnyJob => None,
            Freed::OwnJob => Some("own-job"),
        }
    }

    pub fn parse(name: &str) -> Option<Freed> {
        match name {
            "any-job" => Some(Freed::AnyJob),
            "own-job" => Some(Freed::OwnJob),
            _ => None,
        }
    }
}

/// A mean arrival gap (or offered load) further than this factor from the model's, either way,
/// is a different setting. Poisson gaps are noisy: the mean of 50 gaps is within 1.5x of the
/// true mean with probability above 0.99, so a trace drawn at the model's rate is not flagged.
pub const ARRIVAL_FACTOR: f64 = 1.5;

/// A run with more than this many times the jobs of a training episode is a different setting:
/// queues longer than any the model saw.
pub const JOBS_ABOVE: f64 = 2.0;

/// A run with fewer than the episode's jobs divided by this is a different setting. Episodes
/// are cut at a random end and often hold far fewer jobs than their cap, so a smaller run is
/// closer to training than a larger one and the bound is looser this way.
pub const JOBS_BELOW: f64 = 8.0;

/// What a model was trained on: the cluster, the heartbeat and the job mix.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Setting {
    /// The machines, consecutive identical ones merged into a group, in machine order.
    pub machines: Vec<MachineGroup>,
    /// Resources that may be overbooked; the others are held to capacity.
    pub overbook: Vec<String>,
    /// Each machine's speed, in machine order; absent: every machine runs at speed 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speeds: Option<Vec<f64>>,
    /// Seconds between a machine's heartbeats.
    pub heartbeat: f64,
    pub arrival: Arrival,
    /// Most jobs in one training episode (episodes end at a random time, often before).
    pub jobs: usize,
    /// Where the jobs' DAGs come from.
    pub dags: Vec<DagSource>,
    /// TPC-H executor count whose measured task durations the DAGs carry.
    pub executors: u32,
    /// Demand profile the DAGs were given (`default`: the format's own, `mixed` for TPC-H).
    pub demands: String,
    /// Seed of the demand profile's draws.
    pub demand_seed: u64,
    /// Trained with wave- and parallelism-dependent durations (`train-decima --waves`, as
    /// `replay --waves`); absent: every task ran its trace duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waves: Option<WavesSetting>,
    /// Trained with every machine kept on its job first (`train-decima --sticky`, as `replay
    /// --sticky`): the policy only placed machines whose job had nothing runnable. Absent:
    /// false, the policy placed every machine.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sticky: bool,
}

/// How tasks' durations were drawn in training under `--waves` ([`crate::sim::waves`]).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct WavesSetting {
    /// Seconds an executor travelled when it moved to another job (`--moving-delay`).
    pub moving_delay: f64,
}

/// How jobs arrived in training.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Arrival {
    /// Poisson arrivals with this mean gap, in seconds.
    pub poisson_mean: f64,
    /// Offered load of the bottleneck resource at that rate (the `--load` target, or estimated
    /// from sampled jobs when the mean gap was given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
}

/// One DAG file jobs were drawn from.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct DagSource {
    /// File name (no directory: the same files live in different places on different machines).
    pub file: String,
    /// Format given with `--format`; absent: detected from the content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// TPC-H query given with `--query`; absent: all queries of the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<u32>,
}

/// The same facts measured on a run, to compare with a [`Setting`].
#[derive(Clone, Debug, PartialEq)]
pub struct RunShape {
    pub machines: Vec<MachineGroup>,
    pub overbook: Vec<String>,
    pub speeds: Option<Vec<f64>>,
    pub heartbeat: f64,
    pub jobs: usize,
    /// Mean gap between consecutive arrivals; None with fewer than two jobs.
    pub mean_gap: Option<f64>,
    /// Offered load of the bottleneck resource (see `trace::load`); None when the jobs all
    /// arrive together or bring no work.
    pub load: Option<f64>,
    /// The moving delay of a run with wave durations (`replay --waves`); None without them.
    pub waves: Option<f64>,
    /// Run with `replay --sticky`.
    pub sticky: bool,
}

impl RunShape {
    /// The shape of replaying `workload` on `cluster` with per-machine `speeds` (empty: all 1).
    pub fn of(workload: &Workload, cluster: &Cluster, speeds: &[f64], heartbeat: f64) -> RunShape {
        let n = workload.jobs.len();
        let span = load::span(workload);
        let (bottleneck, _) = load::bottleneck(workload, cluster);
        RunShape {
            machines: groups(cluster),
            overbook: overbooked(cluster),
            speeds: speeds_of(speeds),
            heartbeat,
            jobs: n,
            mean_gap: (n >= 2).then(|| span / (n - 1) as f64),
            load: (bottleneck.is_finite() && bottleneck > 0.0).then_some(bottleneck),
            waves: None,
            sticky: false,
        }
    }
}

/// `cluster`'s machines, consecutive identical ones merged (a cluster file's `machines`).
pub fn groups(cluster: &Cluster) -> Vec<MachineGroup> {
    let mut out: Vec<MachineGroup> = Vec::new();
    for m in &cluster.machines {
        let capacity: BTreeMap<String, f64> =
            cluster.resources.iter().enumerate().map(|(r, name)| (name.clone(), m.0[r])).collect();
        match out.last_mut() {
            Some(g) if g.capacity == capacity => g.count += 1,
            _ => out.push(MachineGroup { count: 1, capacity }),
        }
    }
    out
}

/// The resources of `cluster` that may be overbooked, in its resource order.
pub fn overbooked(cluster: &Cluster) -> Vec<String> {
    cluster.resources.iter().enumerate().filter(|&(r, _)| cluster.overbook[r]).map(|(_, n)| n.clone()).collect()
}

/// Speeds as a setting keeps them: None when every machine runs at speed 1.
pub fn speeds_of(speeds: &[f64]) -> Option<Vec<f64>> {
    (!speeds.iter().all(|&s| s == 1.0)).then(|| speeds.to_vec())
}

/// One field where a run differs from the model's setting, with both values as shown to users.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    pub field: &'static str,
    pub model: String,
    pub run: String,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: model trained with {}; this run has {}", self.field, self.model, self.run)
    }
}

fn num(v: f64) -> String {
    crate::limits::show(v)
}

fn capacity_text(c: &BTreeMap<String, f64>) -> String {
    c.iter().map(|(k, v)| format!("{k}={}", num(*v))).collect::<Vec<_>>().join(",")
}

/// Per-machine capacities: `cpu=16,mem=64` when every machine is alike, else each group's count
/// and capacities (`4 x cpu=16 + 6 x cpu=8`).
fn machines_text(groups: &[MachineGroup]) -> String {
    match groups {
        [] => "no machines".into(),
        [g] => capacity_text(&g.capacity),
        gs => {
            gs.iter().map(|g| format!("{} x {}", g.count, capacity_text(&g.capacity))).collect::<Vec<_>>().join(" + ")
        }
    }
}

fn list_text(names: &[String]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(",")
    }
}

fn speeds_text(s: &Option<Vec<f64>>) -> String {
    match s {
        None => "speed 1 on every machine".into(),
        Some(v) => {
            let shown: Vec<String> = v.iter().take(8).map(|x| num(*x)).collect();
            let more = if v.len() > 8 { format!(",... ({} machines)", v.len()) } else { String::new() };
            format!("speeds {}{more}", shown.join(","))
        }
    }
}

/// Whether `a` and `b` are further apart than `factor`, either way.
fn beyond(a: f64, b: f64, factor: f64) -> bool {
    a > b * factor || b > a * factor
}

impl Setting {
    /// The fields where `run` differs from this setting, in a fixed order; empty when it matches.
    /// Cluster fields must match exactly; the arrival rate, the load and the job count within
    /// the factors above, since a trace is one noisy draw of a job mix.
    pub fn differences(&self, run: &RunShape) -> Vec<Difference> {
        let mut out = Vec::new();
        let mut diff = |field: &'static str, model: String, run: String| out.push(Difference { field, model, run });
        let count = |g: &[MachineGroup]| g.iter().map(|g| g.count).sum::<usize>();
        let (m, r) = (count(&self.machines), count(&run.machines));
        if m != r {
            diff("machines", m.to_string(), r.to_string());
        }
        let (m, r) = (machines_text(&self.machines), machines_text(&run.machines));
        if m != r {
            diff("capacity", m, r);
        }
        let sorted = |v: &[String]| {
            let mut v = v.to_vec();
            v.sort();
            v
        };
        if sorted(&self.overbook) != sorted(&run.overbook) {
            diff("overbooked resources", list_text(&self.overbook), list_text(&run.overbook));
        }
        if self.speeds != run.speeds {
            diff("speeds", speeds_text(&self.speeds), speeds_text(&run.speeds));
        }
        if self.heartbeat != run.heartbeat {
            diff("heartbeat", format!("{} s", num(self.heartbeat)), format!("{} s", num(run.heartbeat)));
        }
        let model_gap = self.arrival.poisson_mean;
        match run.mean_gap {
            Some(g) if g <= 0.0 => {
                diff("mean arrival gap", format!("{model_gap:.2} s (Poisson)"), "0 s (all jobs at once)".into())
            }
            Some(g) if beyond(g, model_gap, ARRIVAL_FACTOR) => {
                diff("mean arrival gap", format!("{model_gap:.2} s (Poisson)"), format!("{g:.2} s"))
            }
            _ => {}
        }
        if let (Some(m), Some(r)) = (self.arrival.load, run.load) {
            if beyond(r, m, ARRIVAL_FACTOR) {
                diff("offered load", format!("{:.0}%", 100.0 * m), format!("{:.0}%", 100.0 * r));
            }
        }
        let (m, r) = (self.jobs as f64, run.jobs as f64);
        if r > m * JOBS_ABOVE || r * JOBS_BELOW < m {
            diff("jobs", format!("at most {} per episode", self.jobs), run.jobs.to_string());
        }
        let waves_text = |d: f64| format!("wave durations (--waves, moving delay {} s)", num(d));
        let fixed = "the trace's durations (no --waves)".to_string();
        match (&self.waves, run.waves) {
            (Some(m), None) => diff("durations", waves_text(m.moving_delay), fixed),
            (None, Some(r)) => diff("durations", fixed, waves_text(r)),
            (Some(m), Some(r)) if m.moving_delay != r => {
                diff("moving delay", format!("{} s", num(m.moving_delay)), format!("{} s", num(r)))
            }
            _ => {}
        }
        if self.sticky != run.sticky {
            let text = |s: bool| {
                if s {
                    "machines kept on their job first (--sticky)".to_string()
                } else {
                    "every machine placed by the policy (no --sticky)".to_string()
                }
            };
            diff("machines", text(self.sticky), text(run.sticky));
        }
        out
    }
}

/// The one warning for a run of the model read from `source` (a file name, or "bundled
/// models/decima-tpch.json"): None when the setting matches, a note when the model records no
/// setting (files written before settings were kept), else a header and one line per field.
pub fn warning(setting: Option<&Setting>, source: &str, run: &RunShape) -> Option<String> {
    let Some(s) = setting else {
        return Some(format!(
            "warning: decima model {source} records no training setting (trained.setting); this run cannot be checked against it"
        ));
    };
    let diffs = s.differences(run);
    if diffs.is_empty() {
        return None;
    }
    let mut text = format!(
        "warning: decima model {source} was trained for another setting ({} field(s) differ; it runs anyway, but its schedules may be poor):",
        diffs.len()
    );
    for d in &diffs {
        text.push_str("\n  ");
        text.push_str(&d.to_string());
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ClusterSpec;

    fn cap(v: &[(&str, f64)]) -> BTreeMap<String, f64> {
        v.iter().map(|(k, x)| (k.to_string(), *x)).collect()
    }

    fn cluster(n: usize, c: &[(&str, f64)]) -> Cluster {
        ClusterSpec::uniform(n, cap(c)).resolve(&crate::trace::RESOURCES.map(String::from)).unwrap()
    }

    const DEFAULT: [(&str, f64); 4] = [("cpu", 16.0), ("mem", 64.0), ("disk", 200.0), ("net", 1250.0)];

    fn setting() -> Setting {
        let c = cluster(10, &DEFAULT);
        Setting {
            machines: groups(&c),
            overbook: overbooked(&c),
            speeds: None,
            heartbeat: 1.0,
            arrival: Arrival { poisson_mean: 8.0, load: Some(0.8) },
            jobs: 200,
            dags: vec![DagSource { file: "tpch-2g.json".into(), format: None, query: None }],
            executors: 20,
            demands: "default".into(),
            demand_seed: 7,
            waves: None,
            sticky: false,
        }
    }

    fn run_like(s: &Setting) -> RunShape {
        RunShape {
            machines: s.machines.clone(),
            overbook: s.overbook.clone(),
            speeds: None,
            heartbeat: 1.0,
            jobs: 200,
            mean_gap: Some(8.5),
            load: Some(0.75),
            waves: None,
            sticky: false,
        }
    }

    fn fields(d: &[Difference]) -> Vec<&'static str> {
        d.iter().map(|d| d.field).collect()
    }

    #[test]
    fn groups_merge_consecutive_identical_machines() {
        let c = cluster(10, &DEFAULT);
        assert_eq!(groups(&c), vec![MachineGroup { count: 10, capacity: cap(&DEFAULT) }]);
        assert_eq!(overbooked(&c), vec!["disk".to_string(), "net".to_string()]);
        assert_eq!(speeds_of(&[]), None);
        assert_eq!(speeds_of(&[1.0, 1.0]), None);
        assert_eq!(speeds_of(&[1.0, 2.0]), Some(vec![1.0, 2.0]));
    }

    #[test]
    fn a_matching_run_has_no_differences() {
        let s = setting();
        assert_eq!(s.differences(&run_like(&s)), vec![]);
        assert_eq!(warning(Some(&s), "m.json", &run_like(&s)), None);
        // Within the factors: 1.4x the gap, half the jobs.
        let r = RunShape { mean_gap: Some(8.0 * 1.4), jobs: 100, load: Some(0.6), ..run_like(&s) };
        assert_eq!(s.differences(&r), vec![]);
    }

    #[test]
    fn each_differing_field_is_reported_with_both_values() {
        let s = setting();
        let other = cluster(10, &[("cpu", 1.0), ("mem", 1.0), ("disk", 1.0), ("net", 1.0)]);
        let r = RunShape { machines: groups(&other), ..run_like(&s) };
        let d = s.differences(&r);
        assert_eq!(
            d,
            vec![Difference {
                field: "capacity",
                model: "cpu=16,disk=200,mem=64,net=1250".into(),
                run: "cpu=1,disk=1,mem=1,net=1".into()
            }]
        );
        let r = RunShape { machines: groups(&cluster(20, &DEFAULT)), ..run_like(&s) };
        assert_eq!(fields(&s.differences(&r)), vec!["machines"]);
        assert_eq!(s.differences(&r)[0].model, "10");
        assert_eq!(s.differences(&r)[0].run, "20");
        let r = RunShape { overbook: vec![], ..run_like(&s) };
        let d = s.differences(&r);
        assert_eq!((d[0].field, d[0].model.as_str(), d[0].run.as_str()), ("overbooked resources", "disk,net", "none"));
        let r = RunShape { speeds: Some(vec![2.0; 10]), heartbeat: 0.5, ..run_like(&s) };
        assert_eq!(fields(&s.differences(&r)), vec!["speeds", "heartbeat"]);
        let r = RunShape { mean_gap: Some(25.0), load: Some(0.3), jobs: 50, ..run_like(&s) };
        let d = s.differences(&r);
        assert_eq!(fields(&d), vec!["mean arrival gap", "offered load"], "50 jobs is within 1/8 of 200");
        assert_eq!(d[0].run, "25.00 s");
        assert_eq!(d[1].model, "80%");
        let r = RunShape { mean_gap: Some(0.0), jobs: 401, ..run_like(&s) };
        assert_eq!(fields(&s.differences(&r)), vec!["mean arrival gap", "jobs"]);
        let r = RunShape { jobs: 24, ..run_like(&s) };
        assert_eq!(fields(&s.differences(&r)), vec!["jobs"]);
        // A setting without a load compares no load; a run of one job no gap.
        let s2 = Setting { arrival: Arrival { poisson_mean: 8.0, load: None }, ..setting() };
        let r = RunShape { mean_gap: None, load: Some(5.0), ..run_like(&s2) };
        assert_eq!(s2.differences(&r), vec![]);
    }

    /// A model trained with wave durations warns on a run without them and the other way
    /// round, and on another moving delay; the field round-trips and is absent without waves.
    #[test]
    fn waves_are_part_of_the_setting() {
        let s = setting();
        let waved = Setting { waves: Some(WavesSetting { moving_delay: 2.0 }), ..setting() };
        let with = RunShape { waves: Some(2.0), ..run_like(&s) };
        assert_eq!(waved.differences(&with), vec![]);
        let d = waved.differences(&run_like(&s));
        assert_eq!(
            d,
            vec![Difference {
                field: "durations",
                model: "wave durations (--waves, moving delay 2 s)".into(),
                run: "the trace's durations (no --waves)".into()
            }]
        );
        let d = s.differences(&with);
        assert_eq!((d[0].field, d[0].model.as_str()), ("durations", "the trace's durations (no --waves)"));
        let w = warning(Some(&s), "m.json", &with).unwrap();
        assert!(w.contains("\n  durations: model trained with the trace's durations (no --waves); this run has wave durations (--waves, moving delay 2 s)"), "{w}");
        let d = waved.differences(&RunShape { waves: Some(0.5), ..run_like(&s) });
        assert_eq!((d[0].field, d[0].model.as_str(), d[0].run.as_str()), ("moving delay", "2 s", "0.5 s"));
        let text = serde_json::to_string(&waved).unwrap();
        assert!(text.contains(r#""waves":{"moving_delay":2.0}"#), "{text}");
        assert_eq!(serde_json::from_str::<Setting>(&text).unwrap(), waved);
        assert!(!serde_json::to_string(&s).unwrap().contains("waves"));
    }

    #[test]
    fn the_warning_is_one_message_naming_every_field() {
        let s = setting();
        let r = RunShape { machines: groups(&cluster(3, &DEFAULT)), heartbeat: 2.0, ..run_like(&s) };
        let w = warning(Some(&s), "m.json", &r).unwrap();
        assert!(w.starts_with("warning: decima model m.json was trained for another setting (2 field(s)"), "{w}");
        assert!(w.contains("\n  machines: model trained with 10; this run has 3"), "{w}");
        assert!(w.contains("\n  heartbeat: model trained with 1 s; this run has 2 s"), "{w}");
        let unknown = warning(None, "old.json", &r).unwrap();
        assert!(unknown.contains("records no training setting"), "{unknown}");
    }

    #[test]
    fn heterogeneous_clusters_show_their_groups() {
        let spec = ClusterSpec {
            machines: vec![
                MachineGroup { count: 2, capacity: cap(&DEFAULT) },
                MachineGroup { count: 1, capacity: cap(&[("cpu", 8.0)]) },
            ],
            ..ClusterSpec::uniform(1, cap(&DEFAULT))
        };
        let c = spec.resolve(&crate::trace::RESOURCES.map(String::from)).unwrap();
        let g = groups(&c);
        assert_eq!(g.len(), 2);
        assert!(machines_text(&g).starts_with("2 x cpu=16,"), "{}", machines_text(&g));
        assert!(machines_text(&g).contains(" + 1 x cpu=8,disk=0,mem=0,net=0"), "{}", machines_text(&g));
    }

    #[test]
    fn the_setting_round_trips_through_json() {
        let s = Setting { speeds: Some(vec![1.5, 2.0]), ..setting() };
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<Setting>(&text).unwrap(), s);
        assert!(!serde_json::to_string(&setting()).unwrap().contains("speeds"));
    }
}
