//! Helpers shared by the test modules: running the `graphene` binary, temporary files, and
//! loading DAGs and clusters through the library the same way the CLI does.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use graphene::formats::{self, LoadOptions};
use graphene::model::{Cluster, Dag};
use graphene::Scheduler;

/// The binary cargo built for this test run.
pub const BIN: &str = env!("CARGO_BIN_EXE_graphene");

/// A path inside the repository (the workspace root: traces and test fixtures live there).
pub fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(rel)
}

/// What one CLI run produced.
pub struct Run {
    /// Exit code; None when a signal killed the process (never acceptable in these tests).
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Run {
    pub fn stdout_str(&self) -> String {
        String::from_utf8(self.stdout.clone()).expect("stdout is UTF-8")
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}\nstderr:\n{}", self.stdout_str(), self.stderr))
    }

    /// Asserts exit 0, showing stderr otherwise.
    pub fn ok(self) -> Run {
        assert_eq!(self.code, Some(0), "expected success; stderr:\n{}", self.stderr);
        self
    }
}

/// Runs the binary with `args` (stdin closed) and collects its output.
pub fn run<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Run {
    let out = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("the graphene binary starts");
    Run { code: out.status.code(), stdout: out.stdout, stderr: String::from_utf8_lossy(&out.stderr).into_owned() }
}

/// `gen-trace --style spark-sched-sim --dags DAGS --jobs N --arrival A --executors 10 --seed S -q
/// --out OUT [--waves-out W]`; the run must succeed.
pub fn sss_trace(dags: &Path, jobs: u32, arrival: &str, seed: u64, out: &Path, waves_out: Option<&Path>) {
    let (jobs, seed) = (jobs.to_string(), seed.to_string());
    let mut args = vec!["gen-trace", "--style", "spark-sched-sim", "--dags", dags.to_str().unwrap(), "--jobs", &jobs];
    args.extend(["--arrival", arrival, "--executors", "10", "--seed", &seed, "-q", "--out", out.to_str().unwrap()]);
    if let Some(w) = waves_out {
        args.extend(["--waves-out", w.to_str().unwrap()]);
    }
    run(&args).ok();
}

/// A fresh temporary directory, removed when dropped.
/// `build-schedule DAG --machines N --capacity cpu=10,mem=10 -q --no-timing EXTRA...` (the
/// small-DAG set's cluster), as parsed JSON; the run must succeed.
pub fn build_small_json(dag: &Path, machines: usize, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "build-schedule".to_string(),
        dag.display().to_string(),
        "--machines".into(),
        machines.to_string(),
        "--capacity".into(),
        "cpu=10,mem=10".into(),
        "-q".into(),
        "--no-timing".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    run(&args).ok().json()
}

pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("graphene-it-").tempdir().expect("a temporary directory")
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write a test file");
    p
}

/// Loads a DAG file with the CLI's default options.
pub fn load_dag(path: &Path) -> Dag {
    formats::load_dag(path, &LoadOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Resolves a cluster file for `dag` and checks every task fits, as the CLI does.
pub fn load_cluster(path: &Path, dag: &Dag) -> Cluster {
    let spec = formats::cluster::load(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let cluster = spec.resolve(&dag.resources).expect("cluster resolves");
    cluster.check_fits(dag).expect("every task fits some machine");
    cluster
}

pub fn scheduler(name: &str) -> Scheduler {
    Scheduler::parse(name).unwrap_or_else(|| panic!("scheduler '{name}' exists"))
}

/// Makespan of `which` on `dag`, after checking the schedule is valid (a makespan of an invalid
/// schedule means nothing).
pub fn makespan_of(which: Scheduler, dag: &Dag, cluster: &Cluster) -> f64 {
    makespan_with(which, dag, cluster, &graphene::OfflineConfig::default())
}

/// [`makespan_of`] with the offline constructor's configuration `cfg`.
pub fn makespan_with(which: Scheduler, dag: &Dag, cluster: &Cluster, cfg: &graphene::OfflineConfig) -> f64 {
    let built = graphene::build(which, dag, cluster, cfg, 0);
    let violations = graphene::validate::validate_schedule(dag, cluster, &built.schedule);
    assert!(violations.is_empty(), "{} produced an invalid schedule for {}: {violations:?}", which.name(), dag.name);
    built.schedule.makespan()
}

/// `a >= b` up to a relative tolerance of 1e-9 (and an absolute one near zero), the slack the
/// issue allows for floating-point sums in bounds and schedules.
pub fn geq(a: f64, b: f64) -> bool {
    a >= b - 1e-9 * b.abs().max(1.0)
}

/// Asserts that stderr shows no panic: bad input must be reported, never crash the program.
pub fn assert_no_panic(r: &Run) {
    assert!(!r.stderr.contains("panicked"), "the program panicked:\n{}", r.stderr);
    assert!(r.code.is_some(), "the program was killed by a signal:\n{}", r.stderr);
}

/// `../shared/<rel>` beside the checkout (the real data sets), or None with a note on stderr
/// when it is missing: tests that need it skip rather than fail on a machine without it,
/// unless `GRAPHENE_REQUIRE_SHARED` is set (`.ci/run` sets it, so a lost data set is an error).
pub fn shared(rel: &str) -> Option<PathBuf> {
    let path = repo("../shared").join(rel);
    if path.exists() {
        return Some(path);
    }
    if std::env::var_os("GRAPHENE_REQUIRE_SHARED").is_some() {
        panic!("{} is missing and GRAPHENE_REQUIRE_SHARED is set", path.display());
    }
    eprintln!("skipped: {} is missing; this test needs ../shared beside the checkout", path.display());
    None
}

/// The path of `../shared/<rel>`, or return from the test (skip) when it is missing.
macro_rules! shared_or_skip {
    ($rel:expr) => {
        match crate::util::shared($rel) {
            Some(path) => path,
            None => return,
        }
    };
}
pub(crate) use shared_or_skip;

/// Asserts a clean refusal: exit 1, no panic, and `want` in the message.
pub fn refused(r: &Run, want: &str) {
    assert_no_panic(r);
    assert_eq!(r.code, Some(1), "expected a refusal; stdout {}\nstderr {}", r.stdout_str(), r.stderr);
    assert!(r.stderr.contains(want), "expected '{want}' in:\n{}", r.stderr);
}

/// The bundled example DAG's path, as an argument.
pub fn example() -> String {
    repo("traces/example.json").display().to_string()
}

/// A path as an argument.
pub fn p(path: &Path) -> String {
    path.display().to_string()
}
