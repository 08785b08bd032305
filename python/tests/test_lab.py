"""graphene-lab: a spec's grid on a 2-worker LocalCluster gives the CLI's figures, resumes
without rerunning finished units, and refuses bad specs naming the key."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("distributed")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import graphene_sched.lab as lab  # noqa: E402

from conftest import ROOT, shared  # noqa: E402

SPEC = """
title = "small"

[scheduler.tetris-fair]
scheduler = "tetris"
options = {{tetris-kappa = 0.1}}

[[workload]]
name = "small"
trace = "{root}/traces/small.csv"
machines = 4
schedulers = ["graphene", "tetris-fair", "fifo"]
baseline = "fifo"

[[workload]]
name = "gen-{{demands}}"
family = "example"
machines = 3
schedulers = ["graphene", "cs"]
seeds = [1, 2]
gen-trace = {{dags = ["{root}/traces/example.json"], jobs = 4, queues = 2, arrival = "poisson:10"}}
grid = {{demands = ["mixed", "single"]}}

[[gain]]
scheduler = "graphene"
baseline = "cs"

[[compare]]
name = "example"
dags = ["{root}/traces/example.json"]
machines = 3
schedulers = ["graphene", "bfs"]
seeds = [1]
"""


def write_spec(tmp_path: Path, text: str = SPEC) -> Path:
    p = tmp_path / "spec.toml"
    p.write_text(text.format(root=ROOT))
    return p


def summary(cli, tmp: Path, *args: str) -> dict:
    out = tmp / "cli"
    shutil.rmtree(out, ignore_errors=True)
    cli("replay", *args, "-q", "--no-timing", "--out", str(out))
    return json.loads((out / "summary.json").read_text())["summary"]


def test_two_workers_reproduce_the_cli_and_resume_skips_finished_units(tmp_path, cli):
    spec = lab.load_spec(write_spec(tmp_path))
    out = tmp_path / "out"
    counts = lab.run(spec, out, workers=2, log=lambda s: None)
    # 4 generated traces, 3 + 4 x 2 replays, 1 comparison.
    assert counts == {"units": 16, "skipped": 0, "ran": 16, "failed": 0}
    t = pq.read_table(out / "results.parquet").to_pylist()
    assert [(r["workload"], r["scheduler"]) for r in t] == [("small", "graphene"), ("small", "tetris-fair"), ("small", "fifo")] + [
        (f"gen-{d}-s{s}", x) for d in ("mixed", "single") for s in (1, 2) for x in ("graphene", "cs")
    ]
    for r in t[:3]:
        flags = ["--tetris-kappa", "0.1"] if r["scheduler"] == "tetris-fair" else []
        s = summary(cli, tmp_path, "traces/small.csv", "--machines", "4", "--scheduler", r["command"], *flags)
        assert (r["mean_jct"], r["median_jct"], r["p90_jct"], r["makespan"], r["tasks"]) == (
            s["jct"]["mean"], s["jct"]["median"], s["jct"]["p90"], s["makespan"], s["tasks"])
    for r in t[3:]:
        trace = tmp_path / f"{r['workload']}.csv"
        cli("gen-trace", "--dags", "traces/example.json", "--jobs", "4", "--queues", "2", "--arrival", "poisson:10", "--machines", "3",
            "--demands", r["profile"], "--seed", str(r["seed"]), "-q", "--out", str(trace))
        s = summary(cli, tmp_path, str(trace), "--machines", "3", "--scheduler", r["scheduler"])
        assert (r["mean_jct"], r["median_jct"], r["makespan"], r["jobs"]) == (s["jct"]["mean"], s["jct"]["median"], s["makespan"], 4)
    # The tables and charts.
    assert (out / "charts" / "small.svg").read_text().startswith("<svg")
    assert (out / "cdf-graphene.svg").exists() and "| example | vs cs | fair | 4 |" in (out / "summary.md").read_text()
    gains = (out / "gains.csv").read_text().splitlines()
    assert len(gains) == 1 + 4 and gains[1].startswith("gen-mixed-s1,example,mixed,,1,graphene,fair,cs,")
    cmp_rows = pq.read_table(out / "compare.parquet").to_pylist()
    assert {r["scheduler"] for r in cmp_rows} == {"graphene", "bfs"} and all(r["ratio"] >= 1 for r in cmp_rows)

    # Run again: nothing to do. Lose two replays and a trace: exactly those run again (the
    # trace's two replays are kept, so they are not).
    assert lab.run(spec, out, workers=2, log=lambda s: None) == {"units": 16, "skipped": 16, "ran": 0, "failed": 0}
    shutil.rmtree(out / "runs" / t[0]["key"])
    shutil.rmtree(out / "runs" / t[4]["key"])
    shutil.rmtree(next((out / "traces").iterdir()))
    assert lab.run(spec, out, workers=2, log=lambda s: None) == {"units": 16, "skipped": 13, "ran": 3, "failed": 0}
    again = pq.read_table(out / "results.parquet").to_pylist()
    assert [{**r, "wall_seconds": 0} for r in again] == [{**r, "wall_seconds": 0} for r in t]


@pytest.mark.parametrize(
    "edit, message",
    [
        (("machines = 4", "machine = 4"), "workload[0] (small).machine: unknown key"),
        (("machines = 4", 'machines = "4"'), "workload[0] (small).machines: expected a positive integer, not string"),
        (("traces/small.csv", "traces/missing.csv"), "workload[0] (small).trace: "),
        (("tetris-kappa = 0.1", "tetris-kapa = 0.1"), "scheduler.tetris-fair.options.tetris-kapa: not a flag of the command"),
        (('"fifo"]', '"fifoo"]'), "workload[0] (small).schedulers[2]: unknown scheduler 'fifoo'"),
        (("jobs = 4", "jobs = [5, 2]"), "workload[1] (gen-{demands}).gen-trace.jobs: expected a positive integer or a range"),
        (('grid = {demands = ["mixed", "single"]}', 'grid = {demands = ["mixed", "single"]}\nseed = 3'),
         "workload[1] (gen-{demands}).seed: unknown key"),
        (('name = "gen-{demands}"', 'name = "gen"'), "workload[1] (gen).name: 'gen' gives the name 'gen' to several points"),
        (("baseline = \"fifo\"", "baseline = \"cs\""), "workload[0] (small).baseline: 'cs' is not one of the workload's schedulers"),
        (('title = "small"', 'title = "small'), "line 2"),
    ],
)
def test_spec_errors_name_the_file_and_the_key(tmp_path, edit, message):
    text = SPEC.replace(edit[0].replace("{", "{{").replace("}", "}}"), edit[1].replace("{", "{{").replace("}", "}}"), 1)
    assert text != SPEC
    p = write_spec(tmp_path, text)
    with pytest.raises(lab.SpecError) as e:
        lab.load_spec(p)
    assert str(e.value).startswith(f"{p}: ") and message in str(e.value), str(e.value)


def test_the_command_reports_a_bad_spec_and_runs_nothing(tmp_path):
    p = write_spec(tmp_path, SPEC.replace("machines = 4", "machine = 4"))
    r = subprocess.run([sys.executable, "-m", "graphene_sched.lab", "run", str(p), "--out", str(tmp_path / "o")], capture_output=True, text=True)
    assert r.returncode == 1 and r.stderr == f"error: {p}: workload[0] (small).machine: unknown key (expected one of: {', '.join(sorted(lab._WORKLOAD))})\n"
    assert not (tmp_path / "o").exists()
    p = write_spec(tmp_path)
    r = subprocess.run([sys.executable, "-m", "graphene_sched.lab", "check", str(p)], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == f"{p}: 5 workloads, 4 traces to generate, 11 replays, 1 comparisons\n", r.stderr


def test_the_families_grid_spec_is_the_scripts_default(root):
    r = subprocess.run([sys.executable, str(root / "scripts" / "bench-online-robust"), "--print-spec"], capture_output=True, text=True, check=True)
    assert r.stdout == (root / "experiments" / "online-robust.toml").read_text()
    spec = lab.load_spec(root / "experiments" / "online-robust.toml")
    # 3 families x 2 profiles x 3 loads and the Alibaba sample at 3 loads, 5 seeds each; 12 schedulers.
    assert len(spec.workloads) == (3 * 2 * 3 + 3) * 5 and all(len(w.schedulers) == 12 for w in spec.workloads)


def test_scheduler_names_read_from_help_skip_descriptions():
    """An item of replay --help's scheduler list may describe itself after its name; the spec
    accepts the name (graphene-plan, and its options after colons)."""
    text = ("      --scheduler <SCHEDULER>\n          Online scheduler (see README): graphene, cs, graphene+cs, "
            "graphene-plan (a plan across jobs; options after colons: graphene-plan:every=S:budget=N)\n")
    assert lab._scheduler_names(text) == {"graphene", "cs", "graphene+cs", "graphene-plan"}
    assert lab._scheduler_names("no such flag") is None


def test_a_value_starting_with_a_dash_is_joined_to_its_flag(tmp_path, cli):
    """--misestimate -0.5:-0.25 would read the value as a flag: the lab passes
    --misestimate=-0.5:-0.25, and the replay runs."""
    text = SPEC.replace('options = {{tetris-kappa = 0.1}}', 'options = {{tetris-kappa = 0.1}}\n\n[scheduler.mis]\nscheduler = "graphene"\n'
                        'options = {{misestimate = "-0.5:-0.25", seed = 1}}').replace('"tetris-fair", "fifo"]', '"mis", "fifo"]')
    spec = lab.load_spec(write_spec(tmp_path, text))
    assert spec.variants["mis"].args == ["--misestimate=-0.5:-0.25", "--seed", "1"]
    spec.workloads = spec.workloads[:1]
    spec.compares, spec.gains = [], []
    out = tmp_path / "out"
    assert lab.run(spec, out, workers=1, log=lambda s: None)["failed"] == 0
    r = next(r for r in pq.read_table(out / "results.parquet").to_pylist() if r["scheduler"] == "mis")
    s = summary(cli, tmp_path, "traces/small.csv", "--machines", "4", "--scheduler", "graphene", "--misestimate=-0.5:-0.25", "--seed", "1")
    assert (r["mean_jct"], r["makespan"]) == (s["jct"]["mean"], s["makespan"])


@pytest.mark.parametrize("quick", [True, False])
def test_the_experiment_suite_specs_are_the_scripts(root, quick):
    # scripts/experiments runs exactly the committed spec of its size; the quick one has every
    # online scheduler, the 2 one-queue, 14 sweep and 4 misestimation variants.
    shared("decima-tpch")
    args = [str(root / "scripts" / "experiments"), "--print-spec", "--python", sys.executable] + (["--quick"] if quick else [])
    r = subprocess.run(args, capture_output=True, text=True, check=True)
    path = root / "experiments" / ("experiments-quick.toml" if quick else "experiments.toml")
    assert r.stdout == path.read_text()
    spec = lab.load_spec(path)
    tpch = next(w for w in spec.workloads if w.name.startswith("tpch-poisson"))
    assert len(tpch.schedulers) == 11 + 2 + 14 + 4
    assert len(spec.workloads) == (3 if quick else 4) and len(spec.compares) == (4 if quick else 5)
