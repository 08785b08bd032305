//! What a schedule says about itself and what the list schedulers make of machine capacity:
//! `validate` checks every figure a schedule file states against its tasks, and HEFT runs as
//! many tasks on a machine at once as its capacity holds.

use crate::util::{assert_no_panic, example, p, run, tempdir, Run};

/// Asserts `validate` found the schedule invalid (exit 1) and listed `want`.
fn invalid(r: &Run, want: &str) {
    assert_no_panic(r);
    assert_eq!(r.code, Some(1), "expected invalid; stdout {}\nstderr {}", r.stdout_str(), r.stderr);
    assert!(r.stderr.contains(want), "expected '{want}' in:\n{}", r.stderr);
}

/// A schedule whose stated makespan (1) contradicts its tasks (50.5) was called valid; every
/// stated figure is now checked against the tasks, the DAG and the cluster.
#[test]
fn validate_checks_the_figures_a_schedule_states() {
    let dir = tempdir();
    let s = dir.path().join("s.json");
    run(&["build-schedule", &example(), "-q", "--no-timing", "--out", &p(&s)]).ok();
    let ok = run(&["validate", &example(), &p(&s)]).ok();
    assert_eq!(ok.stdout_str(), "valid: 52 tasks of example on 10 machines, makespan 50.5\n");
    let text = std::fs::read_to_string(&s).unwrap();
    let edited = |name: &str, f: &dyn Fn(&mut serde_json::Value)| {
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        f(&mut v);
        let path = dir.path().join(name);
        std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
        run(&["validate", &example(), &p(&path)])
    };
    let r = edited("m.json", &|v| v["makespan"] = 1.0.into());
    invalid(&r, "1 violation(s)");
    invalid(&r, "makespan is 1 in the file, but its tasks end at 50.5");
    let r = edited("b.json", &|v| {
        v["lower_bounds"]["critical_path"] = 2.0.into();
        v["ratio"] = 3.0.into();
        v["machines"] = 4.into();
    });
    invalid(&r, "3 violation(s)");
    invalid(&r, "lower_bounds.critical_path is 2 in the file, but the DAG and the cluster give 50.5");
    invalid(&r, "ratio is 3 in the file, but its tasks' makespan over the best lower bound is 1");
    invalid(&r, "machines is 4 in the file, but the cluster has 10");
    // A hand-written file without the figures has nothing to contradict.
    let r = edited("bare.json", &|v| {
        let o = v.as_object_mut().unwrap();
        for k in ["makespan", "lower_bounds", "ratio", "machines", "resources", "order"] {
            o.remove(k);
        }
    });
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}
