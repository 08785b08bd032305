//! STG, Pegasus DAX and DOT task graphs: detected from their content, read to the DAG the
//! fixture describes (hand-computed), and read to the same DAG as the WfCommons reader gives
//! for the same real workflow (converted by `scripts/convert-wfcommons`, written apart from
//! graphene's readers).

use std::collections::BTreeMap;
use std::path::Path;

use graphene::formats::{self, LoadOptions};
use graphene::model::Dag;

use crate::util::{repo, run, shared, tempdir, write};

fn dag(path: &Path) -> Dag {
    formats::load_dag(path, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// Per task name: (duration, cpu, sorted parent names).
fn shape(d: &Dag) -> BTreeMap<String, (f64, f64, Vec<String>)> {
    d.stages
        .iter()
        .map(|s| {
            let t = &d.tasks[s.first as usize];
            let mut ps: Vec<String> = s.parents.iter().map(|p| d.stages[p.stage as usize].name.clone()).collect();
            ps.sort();
            (s.name.clone(), (t.duration, t.demand.0[0], ps))
        })
        .collect()
}

#[test]
fn the_fork_join_fixtures_are_detected_and_read_alike() {
    let mut makespans = Vec::new();
    for ext in ["stg", "dax", "dot"] {
        let path = repo(&format!("tests/data/task-graphs/fork-join.{ext}"));
        let d = dag(&path);
        assert_eq!(d.len(), 4, "{ext}");
        let edges: usize = d.stages.iter().map(|s| s.parents.len()).sum();
        assert_eq!(edges, 4, "{ext}");
        let mut durations: Vec<f64> = d.tasks.iter().map(|t| t.duration).collect();
        durations.sort_by(f64::total_cmp);
        assert_eq!(durations, [2.0, 3.0, 5.0, 7.0], "{ext}");
        let out =
            run(&["build-schedule".as_ref(), path.as_os_str(), "--machines".as_ref(), "2".as_ref(), "-q".as_ref()])
                .ok()
                .json();
        makespans.push(out["makespan"].as_f64().unwrap());
    }
    // split 5, then the two workers side by side (7 the longer), then merge 2.
    assert_eq!(makespans, [14.0, 14.0, 14.0]);
    // Edge data: DAX from the files the worker reads (2 MB), DOT from the edge's size.
    for ext in ["dax", "dot"] {
        let d = dag(&repo(&format!("tests/data/task-graphs/fork-join.{ext}")));
        let heavy = d.stages.iter().find(|s| d.tasks[s.first as usize].duration == 7.0).unwrap();
        let p = heavy.parents[0].stage;
        let c = d.stage_by_name(&heavy.name).unwrap();
        assert_eq!(d.edge_data(p, c), 2.0, "{ext}");
        assert_eq!(d.tasks[heavy.first as usize].demand.0[0], 2.0, "{ext}");
    }
}

fn convert(workflow: &Path, to: &str, out: &Path) {
    let st = std::process::Command::new("python3")
        .arg(repo("scripts/convert-wfcommons"))
        .arg(workflow)
        .args(["--to", to, "--out"])
        .arg(out)
        .status()
        .expect("python3 runs");
    assert!(st.success());
}

#[test]
fn dax_and_dot_of_a_real_workflow_read_as_the_wfcommons_file_does() {
    let Some(wf) = shared("data/wfcommons-generated/montage-1000-seed42.json") else { return };
    let text = std::fs::read_to_string(&wf).unwrap();
    let want = shape(&formats::wfcommons::parse(&text, "m").unwrap());
    let dir = tempdir();
    for to in ["dax", "dot"] {
        let out = dir.path().join(format!("montage.{to}"));
        convert(&wf, to, &out);
        let got = shape(&dag(&out));
        assert_eq!(got.len(), want.len(), "{to}");
        for (name, w) in &want {
            assert_eq!(got.get(name), Some(w), "{to}: task {name}");
        }
    }
    // STG renumbers tasks and rounds runtimes to integers (at least 1): same counts, and the
    // work is the sum of the rounded runtimes.
    let out = dir.path().join("montage.stg");
    convert(&wf, "stg", &out);
    let got = dag(&out);
    assert_eq!(got.len(), want.len());
    let edges = |d: &Dag| d.stages.iter().map(|s| s.parents.len()).sum::<usize>();
    assert_eq!(edges(&got), want.values().map(|w| w.2.len()).sum::<usize>());
    let work: f64 = got.tasks.iter().map(|t| t.duration).sum();
    let rounded: f64 = want.values().map(|w| w.0.round().max(1.0)).sum();
    assert_eq!(work, rounded);
}

fn fails(dir: &Path, name: &str, text: &str, want: &[&str]) {
    let p = write(dir, name, text);
    let r = run(&["build-schedule".as_ref(), p.as_os_str()]);
    assert_eq!(r.code, Some(1), "{name}: {}", r.stderr);
    assert!(r.stderr.contains(&p.display().to_string()), "{}", r.stderr);
    for w in want {
        assert!(r.stderr.contains(w), "{name}: missing '{w}' in {}", r.stderr);
    }
}

#[test]
fn malformed_task_graphs_are_clear_errors() {
    let dir = tempdir();
    let d = dir.path();
    fails(d, "cut.stg", "3\n0 0 0\n1 4 1 0\n", &["ends where a task id", "truncated"]);
    fails(d, "back.stg", "2\n0 0 0\n1 4 1 2\n2 1 1 0\n3 0 1 1\n", &["line 3", "predecessor 2 does not come before"]);
    fails(
        d,
        "dup.dax",
        "<adag><job id=\"a\" runtime=\"1\"/><job id=\"a\" runtime=\"2\"/></adag>",
        &["duplicate task 'a'"],
    );
    fails(d, "nort.dax", "<adag>\n<job id=\"a\" name=\"x\"/>\n</adag>", &["line 2 (job a)", "no runtime"]);
    fails(d, "badxml.dax", "<adag>\n<job id=\"a\" runtime=\"1\">\n</adag>", &["line 3", "not well-formed XML"]);
    fails(
        d,
        "parent.dax",
        "<adag><job id=\"a\" runtime=\"1\"/><child ref=\"a\"><parent ref=\"zz\"/></child></adag>",
        &["unknown task 'zz'"],
    );
    fails(d, "nosize.dot", "digraph {\n a [size=1e9]\n a -> b\n}", &["node b", "no runtime (seconds) or size"]);
    fails(d, "syntax.dot", "digraph {\n a [size=1e9\n}", &["line 3, column 1", "expected"]);
    fails(d, "cycle.dot", "digraph { a [runtime=1]; b [runtime=1]; a -> b -> a }", &["cycle"]);
    fails(
        d,
        "undirected-edge.dot",
        "digraph {\n a [runtime=1]\n b [runtime=1]\n a -- b\n}",
        &["line 4, column 4: '--' is an undirected edge; a digraph's edges are written '->'"],
    );
}
