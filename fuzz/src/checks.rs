//! One check per fuzz target: feed the bytes to a reader and assert what must hold of whatever it
//! accepts, beyond "no panic". Shared by the cargo-fuzz targets (fuzz/fuzz_targets/) and by the
//! stable integration test that replays the seed corpora and every kept crash
//! (crates/graphene-cli/tests/integration/fuzz.rs includes this file), so a regression input runs
//! through exactly the checks that found it.
//!
//! Properties, per reader:
//! * every DAG that parses is well formed: tasks numbered stage by stage, stages in topological
//!   order (every parent stage before its child, so task ids are a topological order), parent and
//!   child edge lists mirror each other, one-to-one edges join equal stages, names resolve back,
//!   durations and demands finite and >= 0 (durations at most `limits::MAX_SECONDS`), sizes within
//!   the limits in force; and it round-trips through graphene's own DAG JSON unchanged;
//! * a cluster that parses resolves (or refuses with an error) and never exceeds the machine limit;
//! * a schedule file that parses goes through the validator against a fixed DAG without panicking,
//!   and the validator is consistent with `check_tasks` on bad machines and times;
//! * a trace that reads (native CSV or Alibaba) holds well-formed job DAGs in arrival order within
//!   the limits, and what `native_csv::write` writes reads back equal;
//! * a request body the service accepts yields a DAG as above and a cluster that fits it; one it
//!   refuses maps to 400/413/422, never 500; accepted lower-bound and validate requests (and
//!   schedule requests on small DAGs) are answered with JSON.
//!
//! No reader may answer with an "internal error".

use graphene::error::Error;
use graphene::formats::{self, cluster, hetero, native, schedule_file, tpch, wfcommons, LoadOptions};
use graphene::limits;
use graphene::model::EdgeKind;
use graphene::model::{ClusterSpec, Dag, Workload};
use graphene::trace::{alibaba, native_csv};

fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// A refusal must be a message for the user, never the tool's own fault.
/// (Only the error's own kind counts: input text quoted in a message may say anything, e.g. a
/// resource named "internal error", the first thing the fuzzer found.)
fn refused(e: &Error) {
    fn internal(e: &Error) -> bool {
        match e {
            Error::InFile { source, .. } | Error::AtLine { source, .. } => internal(source),
            Error::Usage(m) => m.starts_with("internal error"),
            _ => false,
        }
    }
    assert!(!internal(e), "a reader reported an internal error: {e}");
    assert!(!e.to_string().is_empty(), "an error without a message: {e:?}");
}

/// Every structural invariant of a DAG the rest of the library relies on.
pub fn check_dag(dag: &Dag) {
    let lim = limits::current();
    assert!(!dag.resources.is_empty() && dag.dims() <= graphene::model::MAX_RESOURCES);
    assert!(dag.len() as u64 <= lim.tasks, "{} tasks over the limit {}", dag.len(), lim.tasks);
    assert!(dag.stages.len() as u64 <= lim.stages);
    assert!(!dag.is_empty(), "an accepted DAG has tasks");
    let mut next = 0u32;
    for (s, st) in dag.stages.iter().enumerate() {
        let sid = s as u32;
        assert_eq!(st.first, next, "stage {s} ('{}') does not start where the previous ended", st.name);
        next = next.checked_add(st.len).expect("task ids fit in u32");
        assert!((st.group as usize) < dag.groups.len());
        assert_eq!(dag.stage_by_name(&st.name), Some(sid), "stage name '{}' does not resolve", st.name);
        for t in st.tasks() {
            let task = &dag.tasks[t as usize];
            assert_eq!(task.stage, sid);
            assert_eq!(task.index, t - st.first);
            assert!(task.duration.is_finite() && task.duration >= 0.0 && task.duration <= limits::MAX_SECONDS);
            for r in 0..graphene::model::MAX_RESOURCES {
                let v = task.demand.0[r];
                assert!(v.is_finite() && v >= 0.0, "demand {v}");
                if r >= dag.dims() {
                    assert_eq!(v, 0.0, "a demand beyond the DAG's resources");
                }
            }
        }
        if st.len > 0 {
            for t in [st.first, st.first + st.len - 1] {
                assert_eq!(
                    dag.task_by_name(&dag.task_name(t)),
                    Some(t),
                    "task name {} does not resolve",
                    dag.task_name(t)
                );
                dag.for_each_parent(t, |p| assert!(p < t, "parent {p} of task {t} is not before it"));
                dag.for_each_child(t, |c| assert!(c > t, "child {c} of task {t} is not after it"));
            }
        }
        let mut seen = std::collections::HashSet::new();
        for e in &st.parents {
            assert!(e.stage < sid, "parent stage {} of stage {s} is not before it", e.stage);
            assert!(seen.insert(e.stage), "parent stage listed twice");
            let p = &dag.stages[e.stage as usize];
            assert!(p.children.iter().any(|c| c.stage == sid && c.kind == e.kind), "edge lists do not mirror");
            if e.kind == EdgeKind::OneToOne {
                assert_eq!(p.len, st.len, "one-to-one edge between stages of different sizes");
            }
            let d = dag.edge_data(e.stage, sid);
            assert!(d.is_finite() && d >= 0.0);
        }
        for c in &st.children {
            assert!(c.stage > sid);
            assert!(dag.stages[c.stage as usize].parents.iter().any(|p| p.stage == sid && p.kind == c.kind));
        }
    }
    assert_eq!(next as usize, dag.len(), "stages do not cover the tasks");
}

/// `dag` written as graphene DAG JSON reads back as the same DAG.
pub fn check_native_round_trip(dag: &Dag) {
    let json = serde_json::to_string(&native::to_file(dag)).expect("a DAG serializes");
    let back = native::parse(&json, "x").unwrap_or_else(|e| panic!("written DAG does not read back: {e}\n{json}"));
    assert_same_dag(dag, &back);
}

fn assert_same_dag(a: &Dag, b: &Dag) {
    assert_eq!(a.name, b.name);
    assert_eq!(a.resources, b.resources);
    assert_eq!(a.stages.len(), b.stages.len());
    assert_eq!(a.len(), b.len());
    for (x, y) in a.stages.iter().zip(&b.stages) {
        assert_eq!((&x.name, x.first, x.len), (&y.name, y.first, y.len));
        assert_eq!(x.parents, y.parents, "stage '{}' parents", x.name);
        assert_eq!(a.groups[x.group as usize], b.groups[y.group as usize]);
    }
    for (s, st) in a.stages.iter().enumerate() {
        for e in &st.parents {
            assert_eq!(a.edge_data(e.stage, s as u32), b.edge_data(e.stage, s as u32));
        }
    }
    for (x, y) in a.tasks.iter().zip(&b.tasks) {
        assert_eq!(x.duration, y.duration);
        assert_eq!(x.demand, y.demand);
    }
}

fn accepted_dag(dag: &Dag) {
    check_dag(dag);
    check_native_round_trip(dag);
}

/// Returns whether the reader accepted `data`.
pub fn dag_native(data: &[u8]) -> bool {
    let Some(t) = text(data) else { return false };
    match native::parse(t, "fuzz") {
        Ok(dag) => {
            accepted_dag(&dag);
            true
        }
        Err(e) => {
            refused(&e);
            false
        }
    }
}

/// Returns whether the reader accepted `data`.
pub fn dag_wfcommons(data: &[u8]) -> bool {
    let Some(t) = text(data) else { return false };
    let accepted = match wfcommons::parse(t, "fuzz") {
        Ok(dag) => {
            accepted_dag(&dag);
            true
        }
        Err(e) => {
            refused(&e);
            false
        }
    };
    // As the CLI reads it: with the default demand profile applied; accepted exactly when the
    // bare reader accepts.
    let opts = LoadOptions { format: Some(formats::Format::Wfcommons), ..LoadOptions::default() };
    match formats::parse_dags(t, "fuzz", &opts) {
        Ok(dags) => {
            assert!(accepted, "accepted only with the demand profile");
            dags.iter().for_each(check_dag);
        }
        Err(e) => {
            assert!(!accepted, "refused only with the demand profile: {e}");
            refused(&e);
        }
    }
    accepted
}

/// STG, DAX and DOT, each as its format is detected from the text. Returns whether accepted.
pub fn dag_task_graph(data: &[u8]) -> bool {
    let Some(t) = text(data) else { return false };
    let format = match formats::detect(t) {
        Ok(f @ (formats::Format::Stg | formats::Format::Dax | formats::Format::Dot)) => f,
        _ => return false,
    };
    let opts = LoadOptions { format: Some(format), ..LoadOptions::default() };
    match formats::parse_dags(t, "fuzz", &opts) {
        Ok(dags) => {
            dags.iter().for_each(accepted_dag);
            true
        }
        Err(e) => {
            refused(&e);
            false
        }
    }
}

/// A plain Spark event log: every job read is a well-formed DAG, and as a workload its jobs
/// arrive in order. Returns whether accepted.
pub fn dag_spark(data: &[u8]) -> bool {
    let Some(t) = text(data) else { return false };
    match formats::spark::parse(t, "fuzz") {
        Ok(app) => {
            app.jobs.iter().for_each(|j| accepted_dag(&j.dag));
            if let Ok(w) = app.workload() {
                assert!(w.jobs.windows(2).all(|p| p[0].arrival <= p[1].arrival), "jobs out of arrival order");
                assert!(w.jobs.iter().all(|j| j.arrival.is_finite() && j.arrival >= 0.0));
            }
            true
        }
        Err(e) => {
            refused(&e);
            false
        }
    }
}

/// Returns whether the reader accepted `data`.
pub fn dag_tpch(data: &[u8]) -> bool {
    let Some(t) = text(data) else { return false };
    match tpch::parse(t, "fuzz", None, 20) {
        Ok(dags) => {
            dags.iter().for_each(accepted_dag);
            true
        }
        Err(e) => {
            refused(&e);
            false
        }
    }
}

/// Returns whether the reader accepted `data`.
pub fn dag_hetero(data: &[u8]) -> bool {
    let Some(t) = text(data) else { return false };
    match hetero::parse(t, "fuzz") {
        Ok((dag, spec)) => {
            accepted_dag(&dag);
            accepted_cluster(&spec, &dag);
            true
        }
        Err(e) => {
            refused(&e);
            false
        }
    }
}

/// A fixed small DAG to resolve clusters and validate schedules against.
fn example_dag() -> Dag {
    native::parse(
        r#"{"name":"fixed","resources":["cpu","mem"],"stages":[
            {"id":"a","tasks":2,"duration":1,"demands":{"cpu":1,"mem":1}},
            {"id":"b","tasks":2,"duration":2,"demands":{"cpu":2},"parents":[{"stage":"a","kind":"one-to-one"}]},
            {"id":"c","tasks":1,"duration":1,"demands":{"mem":3},"parents":["a","b"]}]}"#,
        "fixed",
    )
    .expect("the fixed DAG parses")
}

fn accepted_cluster(spec: &ClusterSpec, dag: &Dag) {
    assert!(spec.machine_count() as u64 <= limits::current().machines, "cluster over the machine limit");
    let _ = spec.network();
    match spec.resolve(&dag.resources) {
        Ok(c) => {
            assert_eq!(c.len(), spec.machine_count());
            assert_eq!(c.resources, dag.resources);
            for m in &c.machines {
                assert!(m.0.iter().all(|v| v.is_finite() && *v >= 0.0));
            }
            // Either every task fits some machine, or the error names a task.
            if let Err(e) = c.check_fits(dag) {
                assert!(matches!(e, Error::TaskTooBig { .. }), "{e:?}");
            }
        }
        Err(e) => refused(&e),
    }
}

/// Returns whether the reader accepted `data`.
pub fn cluster(data: &[u8]) -> bool {
    let Some(t) = text(data) else { return false };
    match cluster::parse(t) {
        Ok(spec) => {
            accepted_cluster(&spec, &example_dag());
            true
        }
        Err(e) => {
            refused(&e);
            false
        }
    }
}

/// Returns whether the reader accepted `data`.
pub fn schedule(data: &[u8]) -> bool {
    let Some(t) = text(data) else { return false };
    let file = match schedule_file::parse(t) {
        Ok(f) => f,
        Err(e) => {
            refused(&e);
            return false;
        }
    };
    let dag = example_dag();
    let spec = ClusterSpec::uniform(3, ClusterSpec::default_capacity());
    let cluster = spec.resolve(&dag.resources).expect("fixed cluster");
    let net = spec.network();
    let verdict = graphene::api::validate_entries(&dag, &cluster, &net, &file.tasks, &file.copies, &file.order);
    if verdict.is_ok() {
        // A valid schedule places every task once, on a real machine, at sane times.
        assert_eq!(file.tasks.len(), dag.len());
        for e in &file.tasks {
            assert!(e.machine >= 0 && (e.machine as usize) < cluster.len(), "valid with machine {}", e.machine);
            assert!(e.start.is_finite() && e.end.is_finite() && 0.0 <= e.start && e.start <= e.end);
            assert!(dag.task_by_name(&e.id).is_some(), "valid with unknown task {}", e.id);
        }
    }
    true
}

fn check_workload(w: &Workload) {
    let lim = limits::current();
    assert!(w.jobs.len() as u64 <= lim.jobs, "{} jobs over the limit", w.jobs.len());
    assert!(w.tasks() as u64 <= lim.tasks, "{} tasks over the limit", w.tasks());
    let mut names = std::collections::HashSet::new();
    for pair in w.jobs.windows(2) {
        assert!(pair[0].arrival <= pair[1].arrival, "jobs out of arrival order");
    }
    for j in &w.jobs {
        assert!(j.arrival.is_finite() && j.arrival >= 0.0 && j.arrival <= limits::MAX_SECONDS, "arrival {}", j.arrival);
        assert!(names.insert(j.name.as_str()), "two jobs named '{}'", j.name);
        check_dag(&j.dag);
    }
}

/// What `native_csv::write` writes reads back equal (and writes again byte for byte).
fn check_trace_round_trip(w: &Workload) {
    let csv = native_csv::write(w).unwrap_or_else(|e| panic!("a workload that was read cannot be written: {e}"));
    let back = native_csv::read(&csv).unwrap_or_else(|e| panic!("written trace does not read back: {e}\n{csv}"));
    assert_eq!(w.jobs.len(), back.jobs.len());
    for (a, b) in w.jobs.iter().zip(&back.jobs) {
        assert_eq!((&a.name, a.arrival, &a.queue), (&b.name, b.arrival, &b.queue));
        assert_eq!(a.dag.len(), b.dag.len(), "job '{}'", a.name);
        assert_eq!(a.dag.stages.len(), b.dag.stages.len(), "job '{}'", a.name);
        for (x, y) in a.dag.tasks.iter().zip(&b.dag.tasks) {
            assert_eq!((x.duration, x.demand), (y.duration, y.demand), "job '{}'", a.name);
        }
        for (x, y) in a.dag.stages.iter().zip(&b.dag.stages) {
            assert_eq!((&x.name, x.len, &x.parents), (&y.name, y.len, &y.parents), "job '{}'", a.name);
        }
    }
    assert_eq!(native_csv::write(&back).expect("writes again"), csv, "a second write differs");
}

/// Returns whether the reader accepted `data`.
pub fn trace_native(data: &[u8]) -> bool {
    let Some(t) = text(data) else { return false };
    match native_csv::read(t) {
        Ok(w) => {
            check_workload(&w);
            check_trace_round_trip(&w);
            true
        }
        Err(e) => {
            refused(&e);
            false
        }
    }
}

/// Returns whether the reader accepted `data`.
pub fn trace_alibaba(data: &[u8]) -> bool {
    let Some(t) = text(data) else { return false };
    match alibaba::read(t) {
        Ok((w, _report)) => {
            check_workload(&w);
            check_trace_round_trip(&w);
            true
        }
        Err(e) => {
            refused(&e);
            false
        }
    }
}

/// Largest DAG a fuzzed schedule request is actually scheduled for (the search is the
/// expensive part; parsing and checking run for every size).
const SCHEDULE_AT_MOST: usize = 64;

/// Returns whether the reader accepted `data`.
pub fn serve_request(data: &[u8]) -> bool {
    use graphene_serve::request::{self, Endpoint, Options};
    let mut accepted = false;
    for endpoint in [Endpoint::Schedule, Endpoint::LowerBound, Endpoint::Validate] {
        match request::parse(data, Options::default(), endpoint) {
            Ok(job) => {
                accepted = true;
                check_dag(&job.dag);
                assert!(job.cluster.len() as u64 <= limits::current().machines);
                assert!(job.cluster.check_fits(&job.dag).is_ok(), "accepted a DAG that does not fit its cluster");
                assert_eq!(job.schedule.is_some(), endpoint == Endpoint::Validate);
                let run = match endpoint {
                    Endpoint::Schedule => job.dag.len() <= SCHEDULE_AT_MOST && job.cluster.len() <= SCHEDULE_AT_MOST,
                    _ => job.dag.len() <= 5_000,
                };
                if run {
                    let deadline = graphene::Deadline::after(std::time::Duration::from_secs(10));
                    match graphene_serve::answer(data, Options::default(), endpoint, &deadline) {
                        Ok(json) => {
                            let v: serde_json::Value = serde_json::from_slice(&json).expect("the answer is JSON");
                            if endpoint == Endpoint::LowerBound {
                                let best = v["best"].as_f64().expect("a lower bound is a number");
                                assert!(best.is_finite() && best >= 0.0, "lower bound {best}");
                            }
                        }
                        Err(e) => {
                            let status = graphene_serve::status_of(&e);
                            assert!(
                                !status.is_server_error() || matches!(e, Error::TimedOut { .. }),
                                "{status} for {e}"
                            );
                        }
                    }
                }
            }
            Err(e) => {
                refused(&e);
                let status = graphene_serve::status_of(&e);
                assert!(status.is_client_error(), "a refused body answered {status}: {e}");
            }
        }
    }
    accepted
}
