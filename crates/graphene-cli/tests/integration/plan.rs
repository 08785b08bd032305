//! `--scheduler graphene-plan`: byte-identical replays for a seed (misestimated, every option
//! set), checked by the replay checker (`replay` writes nothing it has not validated), its
//! options refused clearly, and its name with options inside `replay-compare`'s list.

use crate::util::{p, refused, repo, run, tempdir};

#[test]
fn plan_replays_are_byte_identical_and_valid() {
    let dir = tempdir();
    let trace = p(&repo("traces/small.csv"));
    for (k, scheduler) in
        ["graphene-plan", "graphene-plan:every=5:budget=500:objective=span:hold=0", "graphene-plan:objective=fifo"]
            .iter()
            .enumerate()
    {
        for i in 0..2 {
            let out = p(&dir.path().join(format!("{k}-{i}")));
            let args = ["replay", &trace, "--scheduler", scheduler, "--misestimate=-0.5:0.5", "--seed", "9"];
            run(&[&args[..], &["--no-timing", "-q", "--out", &out]].concat()).ok();
        }
        for f in ["jobs.csv", "schedule.csv", "summary.json"] {
            let a = std::fs::read(dir.path().join(format!("{k}-0")).join(f)).unwrap();
            let b = std::fs::read(dir.path().join(format!("{k}-1")).join(f)).unwrap();
            assert!(a == b, "{scheduler}: {f} differs between two runs with the same seed");
        }
        let jobs = std::fs::read_to_string(dir.path().join(format!("{k}-0")).join("jobs.csv")).unwrap();
        assert!(jobs.lines().count() > 1, "{scheduler}: no jobs in\n{jobs}");
    }
}

#[test]
fn plan_options_are_checked() {
    let trace = p(&repo("traces/small.csv"));
    for (spec, want) in [
        ("graphene-plan:every=-1", "every=-1: not a finite number >= 0"),
        ("graphene-plan:objective=best", "objective=best: known are srpt, span, fifo"),
        ("graphene-plan:speed=2", "unknown option 'speed'"),
        ("graphene-plan:budget", "'budget' is not key=value"),
    ] {
        refused(&run(&["replay", &trace, "--scheduler", spec, "-q"]), want);
    }
}

#[test]
fn plan_runs_in_replay_compare() {
    let trace = p(&repo("traces/small.csv"));
    let r = run(&["replay-compare", &trace, "--schedulers", "graphene-plan:every=5:objective=span,tetris", "-q"]);
    let r = r.ok();
    let text = r.stdout_str();
    assert!(text.contains("graphene-plan") && text.contains("tetris"), "{text}");
}
