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
}

impl Profile {
    pub const NAMES: [&'static str; 4] = ["none", "mixed", "cpu-mem", "uniform"];

    pub fn by_name(name: &str) -> Result<Profile> {
        match name.trim().to_ascii_lowercase().as_str() {
            "none" => Ok(Profile::Keep),
            "mixed" => Ok(Profile::Mixed),
            "cpu-mem" | "cpumem" | "cpu_mem" => Ok(Profile::CpuMem),
            "uniform" => Ok(Profile::Uniform),
            _ => Err(Error::Usage(format!(
                "unknown demand profile '{name}' (known: {})",
                Profile::NAMES.join(", ")
            ))),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Profile::Keep => "none",
            Profile::Mixed => "mixed",
            Profile::CpuMem => "cpu-mem",
            Profile::Uniform => "uniform",
        }
    }

    pub fn default_for(f: Format) -> Profile {
        match f {
            Format::Native => Profile::Keep,
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
            Profile::Mixed | Profile::CpuMem => {
                for s in &dag.stages {
                    let base = GroupDraw::new(seed, &dag.name, &dag.groups[s.group as usize]);
                    let source = s.parents.is_empty();
                    let mut jitter = rng_for(seed, &dag.name, "stage", &s.name);
                    for t in s.tasks() {
                        let demand = &mut out.tasks[t as usize].demand.0;
                        // Drawn for every task, used or not, so the stream never depends on data.
                        let j: [f64; 3] = [jitter.gen_range(0.9..1.1), jitter.gen_range(0.9..1.1), jitter.gen_range(0.9..1.1)];
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
