//! Demand profiles (`--demands NAME`): resource demands for workloads whose files carry few or none.
//!
//! WfCommons instances record cores and runtimes, Decima's TPC-H files only durations; yet
//! packing only matters when tasks differ in which resource they stress. Graphene and Tetris
//! report exactly that for production analytics clusters: some stages are CPU-bound, some
//! memory-heavy, readers of the input hit the disk and shuffle readers the network. The profiles
//! below synthesise demands of that shape, reproducibly.
//!
//! Profiles only touch the resources a DAG names among `cpu`, `mem` (GB), `disk` (MB/s) and `net`
//! (MB/s); durations are never changed.
//!
//! * `none`: the file's demands as read.
//! * `mixed` (the default for WfCommons and TPC-H): one base vector per *group* (a stage for
//!   TPC-H, a task type for WfCommons), drawn as
//!   - cpu: 1, 2 or 4 cores with probability 0.5, 0.3, 0.2;
//!   - mem: cpu x U(1, 6) GB;
//!   - disk: U(20, 120) MB/s for stages without parents (they read the job's input), U(0, 40)
//!     for the others;
//!   - net: U(50, 400) MB/s for stages with parents (they read a shuffle), U(0, 30) for sources.
//!
//!   The group draws one uniform number per dimension and each stage maps it into the range its
//!   role (source or not) selects, so alike tasks in alike positions get alike demands. Each task
//!   then multiplies mem, disk and net by its own factor U(0.9, 1.1) (cpu stays integral), so tasks
//!   of a group are alike but not identical. Demands the file already gives are kept instead of
//!   drawn: cpu when it is above 1, mem when it is above 0 (then mem is not jittered, and a drawn
//!   mem uses the kept cpu as its core count). disk and net are always drawn.
//! * `cpu-mem`: cpu and mem exactly as in `mixed` (same draws for the same seed), disk = net = 0,
//!   like the Alibaba traces, which record only these two.
//! * `uniform`: every task cpu = 1, mem = 2, disk = net = 0: slot-like, packing does not matter.
//! * `single`: every group is heavy in exactly one resource, drawn uniformly among cpu, mem,
//!   disk and net (those the DAG names): heavy means cpu U{4..8} cores, mem U(16, 32) GB, disk
//!   U(60, 120) MB/s, net U(400, 800) MB/s (a quarter to a half of a default machine, so two to
//!   four such tasks fill it in that resource); the other resources are light: cpu 1, mem
//!   U(1, 3) GB, disk U(0, 10), net U(0, 40). Tasks are jittered as in `mixed`. This is the
//!   workload where packing complementary tasks pays the most, and where a scheduler that counts
//!   cores and memory only overbooks disk and network hardest. File demands are not kept.
//!
//! `mixed` and `cpu-mem` cap every demand at one default machine (16 cores, 64 GB, 200 MB/s disk,
//! 1250 MB/s network), kept file values included, so every task fits the default cluster.
//!
//! # Determinism
//!
//! All draws come from ChaCha8 generators seeded from the seed and an FNV-1a hash of the DAG
//! name and the group (base vectors) or stage (per-task jitter) name. A stage's demands therefore
//! depend only on the seed and the names, never on the order in which stages are visited, the
//! platform, or the Rust version.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{Error, Result};
use crate::model::Dag;

use super::Format;

/// Capacities of one default machine, the caps of drawn demands.
const CAP_CPU: f64 = 16.0;
const CAP_MEM: f64 = 64.0;
const CAP_DISK: f64 = 200.0;
const CAP_NET: f64 = 1250.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// `none`: keep the file's demands.
    Keep,
    Mixed,
    CpuMem,
    Uniform,
    /// `single`: every group heavy in one resource.
    Single,
}

impl Profile {
    pub const NAMES: [&'static str; 5] = ["none", "mixed", "cpu-mem", "uniform", "single"];

    pub fn by_name(name: &str) -> Result<Profile> {
        match name.trim().to_ascii_lowercase().as_str() {
            "none" => Ok(Profile::Keep),
            "mixed" => Ok(Profile::Mixed),
            "cpu-mem" | "cpumem" | "cpu_mem" => Ok(Profile::CpuMem),
            "uniform" => Ok(Profile::Uniform),
            "single" | "single-heavy" | "one-heavy" => Ok(Profile::Single),
            _ => Err(Error::Usage(format!("unknown demand profile '{name}' (known: {})", Profile::NAMES.join(", ")))),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Profile::Keep => "none",
            Profile::Mixed => "mixed",
            Profile::CpuMem => "cpu-mem",
            Profile::Uniform => "uniform",
            Profile::Single => "single",
        }
    }

    pub fn default_for(f: Format) -> Profile {
        match f {
            Format::Native | Format::Hetero | Format::Spark | Format::Stg | Format::Dax | Format::Dot | Format::Tez => {
                Profile::Keep
            }
            Format::Wfcommons | Format::Tpch => Profile::Mixed,
        }
    }

    /// A copy of `dag` with this profile's demands; structure and durations are unchanged.
    pub fn apply(&self, dag: &Dag, seed: u64) -> Dag {
        let mut out = dag.clone();
        let dim = |name: &str| dag.resources.iter().position(|r| r == name);
        let dims = Dims { cpu: dim("cpu"), mem: dim("mem"), disk: dim("disk"), net: dim("net") };
        match self {
            Profile::Keep => {}
            Profile::Uniform => {
                for t in &mut out.tasks {
                    dims.set(&mut t.demand.0, [1.0, 2.0, 0.0, 0.0]);
                }
            }
            Profile::Single => {
                // Only the resources the DAG names can be the heavy one.
                let named: Vec<usize> = [dims.cpu, dims.mem, dims.disk, dims.net]
                    .iter()
                    .enumerate()
                    .filter_map(|(k, d)| d.map(|_| k))
                    .collect();
                for s in &dag.stages {
                    let mut g = rng_for(seed, &dag.name, "single", &dag.groups[s.group as usize]);
                    // Fixed order of draws: heavy pick, then one uniform per resource.
                    let pick: f64 = g.gen();
                    let u: [f64; 4] = [g.gen(), g.gen(), g.gen(), g.gen()];
                    let heavy = if named.is_empty() {
                        usize::MAX
                    } else {
                        named[((pick * named.len() as f64) as usize).min(named.len() - 1)]
                    };
                    let mut jitter = rng_for(seed, &dag.name, "stage", &s.name);
                    for t in s.tasks() {
                        let j: [f64; 3] =
                            [jitter.gen_range(0.9..1.1), jitter.gen_range(0.9..1.1), jitter.gen_range(0.9..1.1)];
                        let cpu = if heavy == 0 { (4.0 + (u[0] * 5.0).floor()).min(8.0) } else { 1.0 };
                        let mem = if heavy == 1 { lerp(16.0, 32.0, u[1]) } else { lerp(1.0, 3.0, u[1]) } * j[0];
                        let disk = if heavy == 2 { lerp(60.0, 120.0, u[2]) } else { lerp(0.0, 10.0, u[2]) } * j[1];
                        let net = if heavy == 3 { lerp(400.0, 800.0, u[3]) } else { lerp(0.0, 40.0, u[3]) } * j[2];
                        dims.set(
                            &mut out.tasks[t as usize].demand.0,
                            [cpu, mem.min(CAP_MEM), disk.min(CAP_DISK), net.min(CAP_NET)],
                        );
                    }
                }
            }
            Profile::Mixed | Profile::CpuMem => {
                for s in &dag.stages {
                    let base = GroupDraw::new(seed, &dag.name, &dag.groups[s.group as usize]);
                    let source = s.parents.is_empty();
                    let mut jitter = rng_for(seed, &dag.name, "stage", &s.name);
                    for t in s.tasks() {
                        let demand = &mut out.tasks[t as usize].demand.0;
                        // Drawn for every task, used or not, so the stream never depends on data.
                        let j: [f64; 3] =
                            [jitter.gen_range(0.9..1.1), jitter.gen_range(0.9..1.1), jitter.gen_range(0.9..1.1)];
                        let file_cpu = dims.cpu.map_or(0.0, |i| demand[i]);
                        let file_mem = dims.mem.map_or(0.0, |i| demand[i]);
                        let cpu = (if file_cpu > 1.0 { file_cpu } else { base.cores }).min(CAP_CPU);
                        let mem = (if file_mem > 0.0 { file_mem } else { cpu * base.mem_per_core * j[0] }).min(CAP_MEM);
                        let (disk, net) = if *self == Profile::CpuMem {
                            (0.0, 0.0)
                        } else if source {
                            (lerp(20.0, 120.0, base.u_disk) * j[1], lerp(0.0, 30.0, base.u_net) * j[2])
                        } else {
                            (lerp(0.0, 40.0, base.u_disk) * j[1], lerp(50.0, 400.0, base.u_net) * j[2])
                        };
                        dims.set(demand, [cpu, mem, disk.min(CAP_DISK), net.min(CAP_NET)]);
                    }
                }
            }
        }
        out
    }
}

/// Where cpu, mem, disk and net sit in a DAG's resource list, when it names them.
struct Dims {
    cpu: Option<usize>,
    mem: Option<usize>,
    disk: Option<usize>,
    net: Option<usize>,
}

impl Dims {
    fn set(&self, demand: &mut [f64], values: [f64; 4]) {
        for (slot, v) in [self.cpu, self.mem, self.disk, self.net].into_iter().zip(values) {
            if let Some(i) = slot {
                demand[i] = v;
            }
        }
    }
}

/// One group's draws; the order of draws is fixed, so adding a field must append it.
struct GroupDraw {
    cores: f64,
    mem_per_core: f64,
    u_disk: f64,
    u_net: f64,
}

impl GroupDraw {
    fn new(seed: u64, dag: &str, group: &str) -> GroupDraw {
        let mut rng = rng_for(seed, dag, "group", group);
        let p: f64 = rng.gen();
        let cores = if p < 0.5 {
            1.0
        } else if p < 0.8 {
            2.0
        } else {
            4.0
        };
        GroupDraw { cores, mem_per_core: rng.gen_range(1.0..6.0), u_disk: rng.gen(), u_net: rng.gen() }
    }
}

fn lerp(lo: f64, hi: f64, u: f64) -> f64 {
    lo + (hi - lo) * u
}

/// FNV-1a, 64 bit: stable across runs, platforms and Rust versions, unlike std's hasher.
fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in part.as_bytes().iter().chain(std::iter::once(&0xffu8)) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// splitmix64's finaliser, so that nearby seeds give unrelated streams.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn rng_for(seed: u64, dag: &str, kind: &str, name: &str) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(mix(seed.wrapping_add(0x9e37_79b9_7f4a_7c15)) ^ fnv1a(&[dag, kind, name]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::{tpch, wfcommons};
    use crate::model::{ClusterSpec, DagBuilder, EdgeKind, ResVec, StageSpec, TaskSpec};

    use crate::formats::test_support::shared_or_skip;

    /// The 2g TPC-H DAGs, or none when the shared data set is missing (the loops then skip).
    fn tpch_2g() -> Vec<Dag> {
        crate::formats::test_support::shared("decima-tpch/json/tpch-2g.json")
            .map_or_else(Vec::new, |t| tpch::parse(&t, "t", None, 20).unwrap())
    }

    fn q6() -> Dag {
        tpch::parse(include_str!("../../../../tests/data/tpch-2g-q6.json"), "t", None, 20).unwrap().remove(0)
    }

    fn demands(dag: &Dag) -> Vec<ResVec> {
        dag.tasks.iter().map(|t| t.demand).collect()
    }

    /// Demands keyed by stage name and task index, whatever the stage order.
    fn by_name(dag: &Dag) -> std::collections::BTreeMap<String, ResVec> {
        (0..dag.len() as u32).map(|t| (dag.task_name(t), dag.tasks[t as usize].demand)).collect()
    }

    #[test]
    fn names_resolve_and_defaults_follow_the_format() {
        for name in Profile::NAMES {
            assert_eq!(Profile::by_name(name).unwrap().name(), name);
        }
        assert_eq!(Profile::by_name("Mixed").unwrap(), Profile::Mixed);
        let e = Profile::by_name("tetris").unwrap_err().to_string();
        assert!(e.contains("'tetris'") && e.contains("none, mixed, cpu-mem, uniform"), "{e}");
        assert_eq!(Profile::default_for(Format::Tpch), Profile::Mixed);
        assert_eq!(Profile::default_for(Format::Wfcommons), Profile::Mixed);
        assert_eq!(Profile::default_for(Format::Native), Profile::Keep);
    }

    /// `single`: in every stage exactly one resource is heavy (at least a quarter of a default
    /// machine) and every other one light; over the TPC-H queries every resource is the heavy
    /// one somewhere; the same seed gives the same demands.
    #[test]
    fn single_profile_has_one_heavy_resource_per_stage() {
        let text = include_str!("../../../../tests/data/tpch-2g-q6.json");
        let mut counts = [0usize; 4];
        for seed in 0..8 {
            let dag = tpch::parse(text, "t", None, 20).unwrap().remove(0);
            let a = Profile::Single.apply(&dag, seed);
            assert_eq!(demands(&a), demands(&Profile::Single.apply(&dag, seed)));
            for st in &a.stages {
                for t in st.tasks() {
                    let d = &a.tasks[t as usize].demand.0;
                    let heavy: Vec<usize> = (0..4)
                        .filter(|&r| {
                            d[r] >= [4.0, 0.25 * CAP_MEM * 0.9, 0.25 * CAP_DISK * 0.9, 0.25 * CAP_NET * 0.9][r]
                        })
                        .collect();
                    let light = [1.0, 3.0 * 1.1, 10.0 * 1.1, 40.0 * 1.1];
                    assert_eq!(heavy.len(), 1, "stage {} task {t}: {d:?}", st.name);
                    assert!((0..4).all(|r| r == heavy[0] || d[r] <= light[r]), "{d:?}");
                    counts[heavy[0]] += 1;
                }
            }
        }
        assert!(counts.iter().all(|&c| c > 0), "{counts:?}");
    }

    #[test]
    fn same_seed_same_demands_other_seed_other_demands() {
        let dag = q6();
        let a = Profile::Mixed.apply(&dag, 7);
        let b = Profile::Mixed.apply(&dag, 7);
        let c = Profile::Mixed.apply(&dag, 8);
        assert_eq!(demands(&a), demands(&b));
        assert_ne!(demands(&a), demands(&c));
        // Structure and durations are untouched.
        assert_eq!(a.stages.len(), dag.stages.len());
        assert!(a.tasks.iter().zip(&dag.tasks).all(|(x, y)| x.duration == y.duration && x.stage == y.stage));
        // Pinned values: a change here silently changes every experiment's inputs, so it must be
        // deliberate (a new rand or rand_chacha major version, or a new draw order).
        let close = |x: &[f64], y: &[f64]| x.iter().zip(y).all(|(a, b)| (a - b).abs() < 1e-9);
        assert!(close(&a.tasks[0].demand.0[..4], &[1.0, 1.9823364833070036, 103.02057348353225, 11.041428174215262]));
        assert!(close(&a.tasks[12].demand.0[..4], &[4.0, 15.046825830821412, 35.83385144073236, 364.57610437120013]));
    }

    #[test]
    fn demands_do_not_depend_on_stage_order() {
        let stage = |name: &str, parents: &[&str]| StageSpec {
            name: name.into(),
            group: None,
            tasks: vec![TaskSpec { duration: 1.0, demand: ResVec::from_slice(&[1.0]) }; 3],
            parents: parents.iter().map(|p| (p.to_string(), EdgeKind::AllToAll)).collect(),
        };
        let build = |order: &[(&str, &[&str])]| {
            let mut b = DagBuilder::new("job", crate::formats::native::default_resources());
            for (n, p) in order {
                b.stage(stage(n, p));
            }
            b.build().unwrap()
        };
        let x = build(&[("scan", &[]), ("load", &[]), ("join", &["scan", "load"])]);
        let y = build(&[("load", &[]), ("scan", &[]), ("join", &["load", "scan"])]);
        assert_ne!(x.stages[0].name, y.stages[0].name);
        for p in [Profile::Mixed, Profile::CpuMem] {
            assert_eq!(by_name(&p.apply(&x, 3)), by_name(&p.apply(&y, 3)));
        }
    }

    #[test]
    fn mixed_demands_fit_the_default_machine_and_follow_the_ranges() {
        let machine = ResVec::from_slice(&[16.0, 64.0, 200.0, 1250.0]);
        let mut seen_cores = std::collections::BTreeSet::new();
        let dags = tpch_2g();
        if dags.is_empty() {
            return; // the shared data is missing (`shared` said so)
        }
        for dag in dags {
            let d = Profile::Mixed.apply(&dag, 1);
            for s in &d.stages {
                let tasks: Vec<_> = s.tasks().map(|t| d.tasks[t as usize].demand.0).collect();
                let cpu = tasks[0][0];
                seen_cores.insert(cpu as u32);
                for v in &tasks {
                    assert!(ResVec(*v).fits_in(&machine), "{} {:?}", d.name, v);
                    // Alike tasks: the same cores, mem within the jitter of cores x U(1,6).
                    assert_eq!(v[0], cpu);
                    assert!(v[1] >= cpu * 0.9 && v[1] <= cpu * 6.0 * 1.1, "{v:?}");
                    if s.parents.is_empty() {
                        assert!(v[2] >= 18.0 && v[2] <= 132.0 && v[3] <= 33.0, "source {v:?}");
                    } else {
                        assert!(v[2] <= 44.0 && v[3] >= 45.0 && v[3] <= 440.0, "reader {v:?}");
                    }
                }
                // Alike but not identical.
                if tasks.len() > 1 {
                    assert!(tasks.iter().any(|v| v[1] != tasks[0][1]));
                    let spread = tasks.iter().map(|v| v[3]).fold(0.0, f64::max)
                        / tasks.iter().map(|v| v[3]).fold(f64::INFINITY, f64::min);
                    assert!(spread <= 1.1 / 0.9 + 1e-9, "{spread}");
                }
            }
            // The whole DAG fits a default cluster.
            let cluster = ClusterSpec::uniform(10, ClusterSpec::default_capacity()).resolve(&d.resources).unwrap();
            cluster.check_fits(&d).unwrap();
        }
        assert_eq!(seen_cores.into_iter().collect::<Vec<_>>(), [1, 2, 4]);
    }

    #[test]
    fn wfcommons_task_types_share_a_base_vector() {
        let dag = wfcommons::parse(&shared_or_skip!("wfcommons-generated/montage-1000-seed42.json"), "m").unwrap();
        let d = Profile::Mixed.apply(&dag, 0);
        let cluster = ClusterSpec::uniform(50, ClusterSpec::default_capacity()).resolve(&d.resources).unwrap();
        cluster.check_fits(&d).unwrap();
        for g in 0..d.groups.len() as u32 {
            let cores: std::collections::BTreeSet<u64> = d
                .stages
                .iter()
                .filter(|s| s.group == g)
                .map(|s| d.tasks[s.first as usize].demand.0[0] as u64)
                .collect();
            assert_eq!(cores.len(), 1, "group {}", d.groups[g as usize]);
        }
        // Same file, different stem: the draws hang on the DAG name from the file.
        let again = Profile::Mixed.apply(
            &wfcommons::parse(&shared_or_skip!("wfcommons-generated/montage-1000-seed42.json"), "other").unwrap(),
            0,
        );
        assert_eq!(demands(&d), demands(&again));
    }

    #[test]
    fn mixed_keeps_cores_and_memory_the_file_gives() {
        let text = r#"{"name":"w","schemaVersion":"1.6","workflow":{
            "specification":{"tasks":[
                {"name":"big","id":"b","parents":[],"children":[]},
                {"name":"huge","id":"h","parents":[],"children":[]},
                {"name":"small","id":"s","parents":[],"children":[]}]},
            "execution":{"tasks":[
                {"id":"b","runtimeInSeconds":1,"coreCount":8,"memoryInBytes":5000000000},
                {"id":"h","runtimeInSeconds":1,"coreCount":64,"memoryInBytes":900000000000},
                {"id":"s","runtimeInSeconds":1,"coreCount":1}]}}}"#;
        let dag = wfcommons::parse(text, "w").unwrap();
        let d = Profile::Mixed.apply(&dag, 0);
        let v = |id: &str| d.tasks[d.stage_by_name(id).unwrap() as usize].demand.0;
        assert_eq!(v("b")[..2], [8.0, 5.0]);
        // Capped at one default machine.
        assert_eq!(v("h")[..2], [16.0, 64.0]);
        assert!(v("s")[1] > 0.0 && v("s")[2] > 0.0);
        assert!([1.0, 2.0, 4.0].contains(&v("s")[0]));
        // `none` keeps everything as read.
        assert_eq!(demands(&Profile::Keep.apply(&dag, 0)), demands(&dag));
    }

    #[test]
    fn cpu_mem_matches_mixed_without_bandwidth_and_uniform_is_flat() {
        for dag in tpch_2g().iter().take(5) {
            let mixed = Profile::Mixed.apply(dag, 11);
            let cm = Profile::CpuMem.apply(dag, 11);
            for (m, c) in mixed.tasks.iter().zip(&cm.tasks) {
                assert_eq!(m.demand.0[..2], c.demand.0[..2]);
                assert_eq!(c.demand.0[2..4], [0.0, 0.0]);
            }
            let u = Profile::Uniform.apply(&mixed, 11);
            assert!(u.tasks.iter().all(|t| t.demand.0[..4] == [1.0, 2.0, 0.0, 0.0]));
        }
    }

    #[test]
    fn profiles_only_touch_resources_the_dag_names() {
        let mut b = DagBuilder::new("g", vec!["gpu".into(), "cpu".into()]);
        b.stage(StageSpec {
            name: "train".into(),
            group: None,
            tasks: vec![TaskSpec { duration: 2.0, demand: ResVec::from_slice(&[1.0, 1.0]) }; 2],
            parents: vec![],
        });
        let dag = b.build().unwrap();
        for p in [Profile::Mixed, Profile::Uniform] {
            let d = p.apply(&dag, 5);
            assert!(d.tasks.iter().all(|t| t.demand.0[0] == 1.0 && t.demand.0[2..].iter().all(|&x| x == 0.0)));
            assert!([1.0, 2.0, 4.0].contains(&d.tasks[0].demand.0[1]));
        }
    }
}
