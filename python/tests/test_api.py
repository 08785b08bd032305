"""The Python API against the CLI: the same inputs give the same bytes, the same verdicts and
the same error messages."""

from __future__ import annotations

import json

import pytest

import graphene_sched
from conftest import cli_error, shared, write_trace

EXAMPLES = [
    ("traces/example.json", []),
    ("traces/motivating.json", ["--cluster", "traces/motivating-cluster.json"]),
    ("tests/data/tpch-2g-q6.json", []),
    ("tests/data/wfcommons-1.4-example.json", []),
]


def _kw(flags):
    kw = {}
    it = iter(flags)
    for f in it:
        key = f.lstrip("-").replace("-", "_")
        kw[key] = next(it)
    return kw


@pytest.mark.parametrize("scheduler", ["graphene", "cp", "tetris", "random"])
@pytest.mark.parametrize("path,flags", EXAMPLES)
def test_bundled_examples_give_the_clis_bytes(cli, path, flags, scheduler):
    want = cli("build-schedule", path, "--no-timing", "-q", "--scheduler", scheduler, "--seed", "3", *flags).stdout
    kw = _kw(flags)
    got = graphene_sched.build_schedule(path, kw.pop("cluster", None), scheduler, no_timing=True, seed=3, **kw)
    assert got.json == want
    assert got.scheduler == scheduler
    assert got.makespan >= max(got.lower_bounds.values()) - 1e-9
    assert len(got.tasks) == len(got.order) > 0


REAL = [
    ("wfcommons-generated/montage-100-seed42.json", []),
    ("wfcommons-generated/epigenomics-1000-seed42.json", []),
    ("wfcommons-generated/blast-1000-seed42.json", ["--demands", "mixed"]),
    ("decima-tpch/json/tpch-10g.json", ["--query", "9"]),
    ("decima-tpch/json/tpch-2g.json", ["--query", "2", "--executors", "10"]),
]


@pytest.mark.parametrize("rel,flags", REAL)
def test_real_dags_give_the_clis_bytes(cli, rel, flags):
    path = str(shared(rel))
    want = cli("build-schedule", path, "--no-timing", "-q", *flags).stdout
    kw = _kw(flags)
    for k in ("query", "executors"):
        if k in kw:
            kw[k] = int(kw[k])
    got = graphene_sched.build_schedule(path, no_timing=True, **kw)
    assert got.json == want
    # The same schedule passes the validator, from Python and from the CLI.
    assert graphene_sched.validate(path, got, **kw).startswith(f"valid: {len(got.tasks)} tasks")


def test_dicts_and_typed_classes_give_the_files_bytes(cli, tmp_path):
    text = open("traces/example.json").read()
    want = graphene_sched.build_schedule("traces/example.json", no_timing=True).json
    as_dict = json.loads(text)
    assert graphene_sched.build_schedule(as_dict, no_timing=True).json == want
    assert graphene_sched.build_schedule(graphene_sched.Dag.from_dict(as_dict), no_timing=True).json == want
    # A cluster as a typed class, a dict and the flags that describe it: same bytes as the CLI.
    cluster = graphene_sched.Cluster.uniform(3, {"cpu": 16, "mem": 64, "disk": 200, "net": 1250})
    cli_bytes = cli("build-schedule", "traces/example.json", "--no-timing", "-q", "--machines", "3").stdout
    assert graphene_sched.build_schedule(as_dict, cluster, no_timing=True).json == cli_bytes
    assert graphene_sched.build_schedule(as_dict, cluster.to_dict(), no_timing=True).json == cli_bytes
    assert graphene_sched.build_schedule(as_dict, machines=3, no_timing=True).json == cli_bytes
    assert graphene_sched.build_schedule(as_dict, machines=3, capacity={"cpu": 16, "mem": 64, "disk": 200, "net": 1250}, no_timing=True).json == cli_bytes


def test_readers_round_trip_every_format(root):
    # Every input format reads into graphene's layout, and scheduling what was read gives the
    # file's own schedule (names aside).
    for path, kw in [
        ("traces/example.json", {}),
        ("tests/data/wfcommons-1.4-example.json", {}),
        ("tests/data/tpch-2g-q6.json", {}),
    ]:
        dag = graphene_sched.read_dag(path, **kw)
        a = graphene_sched.build_schedule(path, no_timing=True, **kw).to_dict()
        b = graphene_sched.build_schedule(dag, no_timing=True).to_dict()
        assert a["makespan"] == b["makespan"] and a["order"] == b["order"]
    tpch = graphene_sched.read_dags(str(shared("decima-tpch/json/tpch-2g.json")))
    assert len(tpch) == 22
    assert graphene_sched.read_cluster("traces/motivating-cluster.json").size == 1
    assert graphene_sched.read_cluster(machines=4).size == 4
    trace = graphene_sched.read_trace("traces/small.csv")
    assert trace.csv.startswith("job,arrival,queue,stage,")
    ali = graphene_sched.read_trace(str(shared("alibaba-v2018-spar/sample_tasks.csv")))
    assert len(ali.jobs) > 10


def test_lower_bound_and_validate_match_the_cli(cli, tmp_path):
    want = cli("lower-bound", "traces/example.json", "--json").stdout.decode().rstrip("\n")
    lb = graphene_sched.lower_bound("traces/example.json")
    assert lb.json == want
    assert lb.best == max(lb.critical_path, lb.total_work, lb.stage_aware)
    s = graphene_sched.build_schedule("traces/example.json")
    path = tmp_path / "s.json"
    s.save(path)
    assert graphene_sched.read_schedule(path).json == s.json
    want = cli("validate", "traces/example.json", str(path)).stdout.decode().rstrip("\n")
    assert graphene_sched.validate("traces/example.json", path) == want
    # A broken schedule: one task moved before its parent ends.
    d = s.to_dict()
    late = max(d["tasks"], key=lambda t: t["start"])
    late["end"] -= late["start"]
    late["start"] = 0.0
    with pytest.raises(graphene_sched.InvalidScheduleError) as e:
        graphene_sched.validate("traces/example.json", graphene_sched.Schedule(json.dumps(d).encode()))
    assert len(e.value.violations) >= 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    r = cli("validate", "traces/example.json", str(bad), check=False)
    assert r.returncode == 1
    for v in e.value.violations:
        assert v in r.stderr.decode()


def test_compare_matches_the_cli(cli):
    want = json.loads(cli("compare", "traces/example.json", "tests/data/tpch-2g-q6.json", "--json").stdout)
    got = graphene_sched.compare(["traces/example.json", "tests/data/tpch-2g-q6.json"])
    strip = lambda rows: [{k: v for k, v in r.items() if k != "elapsed_ms"} for r in rows]  # noqa: E731
    assert strip(got.rows) == strip(want["rows"])
    assert len(got.rows) == len(want["rows"]) > 2
    assert [s["scheduler"] for s in got.summary] == [s["scheduler"] for s in want["summary"]]


def test_gen_trace_and_replay_match_the_cli(cli, tmp_path):
    want = cli("gen-trace", "--dags", "traces/example.json", "tests/data/tpch-2g-q6.json", "--jobs", "12",
               "--arrival", "poisson:20", "--queues", "2", "--seed", "7", "-q").stdout.decode()
    trace = graphene_sched.gen_trace(["traces/example.json", "tests/data/tpch-2g-q6.json"], 12, "poisson:20", 2, seed=7)
    assert trace.csv == want
    path = tmp_path / "t.csv"
    trace.save(path)
    for scheduler in ["graphene", "cs", "tetris", "decima"]:
        out = tmp_path / scheduler
        cli("replay", str(path), "--scheduler", scheduler, "--out", str(out), "--no-timing", "-q", "--seed", "1")
        r = graphene_sched.replay(str(path), scheduler=scheduler, no_timing=True, seed=1)
        assert r.summary_json == (out / "summary.json").read_bytes()
        assert r.jobs_csv == (out / "jobs.csv").read_text()
        assert r.schedule_csv == (out / "schedule.csv").read_text()
        assert len(r.jobs) == 12 and all(j["jct"] > 0 for j in r.jobs)


def test_graphene_rm_replay_matches_the_cli(cli, tmp_path):
    # The replay of graphene's ResourceManager scheduler (memory-only refusal, YARN priorities,
    # remaining work by container size): the keyword gives the CLI flag's files, which differ
    # from the plain graphene replay's.
    path = tmp_path / "t.csv"
    graphene_sched.gen_trace(["traces/example.json", "tests/data/tpch-2g-q6.json"], 12, "poisson:20", 2, seed=7).save(path)
    out = tmp_path / "rm"
    cli("replay", str(path), "--scheduler", "graphene", "--graphene-rm", "--out", str(out), "--no-timing", "-q", "--seed", "1")
    r = graphene_sched.replay(str(path), scheduler="graphene", graphene_rm=True, no_timing=True, seed=1)
    assert r.summary_json == (out / "summary.json").read_bytes()
    assert r.jobs_csv == (out / "jobs.csv").read_text()
    plain = graphene_sched.replay(str(path), scheduler="graphene", no_timing=True, seed=1)
    assert plain.jobs_csv != r.jobs_csv


def test_to_pandas_where_installed():
    pd = pytest.importorskip("pandas")
    s = graphene_sched.build_schedule("traces/example.json")
    df = s.to_pandas()
    assert isinstance(df, pd.DataFrame) and len(df) == len(s.tasks)
    assert (df["end"] > df["start"]).all()
    r = graphene_sched.replay("traces/small.csv")
    assert len(r.to_pandas()) == len(r.jobs)


# --------------------------------------------------------------------------------------------
# Errors: every class, with the CLI's message


def _both(cli, tmp_path, content, *, suffix=".json", args=()):
    path = tmp_path / f"in{suffix}"
    path.write_text(content)
    r = cli("build-schedule", str(path), *args, check=False)
    assert r.returncode == 1
    return str(path), cli_error(r)


@pytest.mark.parametrize(
    "content,cls",
    [
        ('{"stages": [', graphene_sched.ParseError),
        ('{"stages": [{"id": "a", "tasks": 1, "duration": -3}]}', graphene_sched.FieldError),
        ('{"stages": [{"id": "a", "tasks": 1, "duration": 1, "parents": ["b"]}, {"id": "b", "tasks": 1, "duration": 1, "parents": ["a"]}]}', graphene_sched.CycleError),
        ('{"stages": [{"id": "a", "tasks": 1, "duration": 1, "demands": {"cpu": 99}}]}', graphene_sched.TaskTooBigError),
    ],
)
def test_bad_inputs_raise_the_clis_message(cli, tmp_path, content, cls):
    path, msg = _both(cli, tmp_path, content)
    with pytest.raises(cls) as e:
        graphene_sched.build_schedule(path)
    assert str(e.value) == msg
    assert isinstance(e.value, graphene_sched.GrapheneError)


def test_hostile_task_graphs_raise_the_clis_message(cli, tmp_path):
    # 100,000 nested DAX elements overflowed the stack (the interpreter died); a DOT edge product
    # of 8,000 x 8,000 nodes (100 KB) asked for 64 million edges before the limit was checked.
    n = 100_000
    names = lambda p: " ".join(f"{p}{i}" for i in range(8000))
    cases = [
        ("deep.dax", "<adag>" + "<a>" * n + "</a>" * n + "</adag>", graphene_sched.ParseError),
        ("product.dot", f"digraph {{\n node [runtime=1]\n {{{names('a')}}} -> {{{names('b')}}}\n}}\n", graphene_sched.TooLargeError),
    ]
    for name, text, cls in cases:
        path = tmp_path / name
        path.write_text(text)
        r = cli("lower-bound", str(path), check=False)
        assert r.returncode == 1, name
        with pytest.raises(cls) as e:
            graphene_sched.read_dags(str(path))
        assert str(e.value) == cli_error(r)


def test_io_and_usage_errors(cli):
    r = cli("build-schedule", "missing.json", check=False)
    with pytest.raises(graphene_sched.GrapheneIOError) as e:
        graphene_sched.build_schedule("missing.json")
    assert str(e.value) == cli_error(r)
    r = cli("build-schedule", "traces/example.json", "--scheduler", "nope", check=False)
    with pytest.raises(graphene_sched.UsageError) as e:
        graphene_sched.build_schedule("traces/example.json", scheduler="nope")
    assert str(e.value) == cli_error(r)
    with pytest.raises(graphene_sched.UsageError, match="unknown option 'bogus'"):
        graphene_sched.build_schedule("traces/example.json", bogus=1)
    with pytest.raises(graphene_sched.UsageError):
        graphene_sched.build_schedule(42)
    r = cli("replay", "traces/small.csv", "--scheduler", "nope", "--out", "/tmp/x-never", check=False)
    with pytest.raises(graphene_sched.UsageError) as e:
        graphene_sched.replay("traces/small.csv", scheduler="nope")
    assert str(e.value) == cli_error(r)


def test_limit_timeout_and_panic_errors_map_to_their_classes():
    with pytest.raises(graphene_sched.TooLargeError, match=r"dag.json: tasks: 20000001 exceeds the limit of 10000000"):
        graphene_sched._core._error_for_test("too-large")
    with pytest.raises(graphene_sched.TimedOutError, match=r"time limit of 0.5s reached"):
        graphene_sched._core._error_for_test("timed-out")
    with pytest.raises(graphene_sched.TimedOutError, match="cancelled"):
        graphene_sched._core._error_for_test("cancelled")
    # A panic inside the library is caught at the boundary: an exception, not a crash.
    with pytest.raises(graphene_sched.InternalError, match="test panic"):
        graphene_sched._core._panic_for_test()
    assert issubclass(graphene_sched.InternalError, graphene_sched.GrapheneError)


def test_long_calls_release_the_gil():
    # While one thread schedules a 1,000-task DAG, another thread keeps running Python code.
    import threading

    path = str(shared("wfcommons-generated/montage-1000-seed42.json"))
    done = threading.Event()
    ticks = []

    def spin():
        while not done.is_set():
            ticks.append(1)

    t = threading.Thread(target=spin)
    t.start()
    try:
        graphene_sched.build_schedule(path, scheduler="graphene")
    finally:
        done.set()
        t.join()
    # With the GIL held for the whole call, the spinner would get at most a switch interval's
    # worth of turns; released, it runs throughout.
    assert len(ticks) > 10_000


def test_tetris_srpt_scale_and_cs_tez_order_match_the_cli(cli, tmp_path):
    """``tetris_srpt_scale`` and ``cs_tez_order`` are the CLI's ``--tetris-srpt-scale`` and
    ``--cs-tez-order``. Tetris, one 4-core machine: X (ten 100 s tasks filling it) aligns better
    but has 4,000x Y's work left (one 1-core, 1 s task); scaled by the largest work left, X's
    alignment wins every pass and Y waits for all of X (JCTs 1000, 1001); scaled by the mean (the
    default), Y goes first (1001, 1). cs, two cores: chain a -> b -> e (1, 1, 5 s) beside root c (three 1 s
    tasks): by stage index e starts at 2 (JCT 7), by depth c's tasks go before b (JCT 8)."""
    ts = tmp_path / "ts.csv"
    write_trace(ts, "X,0,q,s,10,100,4,4,0,0,,", "Y,0,q,s,1,1,1,1,0,0,,")
    kw = dict(machines=1, capacity="cpu=4,mem=4", no_timing=True)
    by_max = graphene_sched.replay(str(ts), scheduler="tetris", tetris_srpt_scale="max", **kw)
    by_mean = graphene_sched.replay(str(ts), scheduler="tetris", tetris_srpt_scale="mean", **kw)
    by_default = graphene_sched.replay(str(ts), scheduler="tetris", **kw)
    assert [j["jct"] for j in by_max.jobs] == [1000.0, 1001.0]
    assert [j["jct"] for j in by_mean.jobs] == [1001.0, 1.0]
    assert by_default.schedule_csv == by_mean.schedule_csv
    out = tmp_path / "cli-max"
    cli("replay", str(ts), "--scheduler", "tetris", "--machines", "1", "--capacity", "cpu=4,mem=4", "--no-timing",
        "-q", "--tetris-srpt-scale", "max", "--out", str(out))
    assert by_max.schedule_csv == (out / "schedule.csv").read_text()
    with pytest.raises(graphene_sched.UsageError, match="tetris-srpt-scale"):
        graphene_sched.replay(str(ts), scheduler="tetris", tetris_srpt_scale="median", **kw)

    tz = tmp_path / "tz.csv"
    write_trace(
        tz, "J,0,q0,a,1,1,1,1,0,0,,", "J,0,q0,b,1,1,1,1,0,0,a,", "J,0,q0,e,1,5,1,1,0,0,b,", "J,0,q0,c,3,1,1,1,0,0,,"
    )
    kw = dict(machines=1, capacity="cpu=2,mem=8", no_timing=True)
    assert [j["jct"] for j in graphene_sched.replay(str(tz), scheduler="cs", **kw).jobs] == [7.0]
    tez = graphene_sched.replay(str(tz), scheduler="cs", cs_tez_order=True, **kw)
    assert [j["jct"] for j in tez.jobs] == [8.0]
    out = tmp_path / "cli-tez"
    cli("replay", str(tz), "--scheduler", "cs", "--machines", "1", "--capacity", "cpu=2,mem=8", "--no-timing", "-q",
        "--cs-tez-order", "--out", str(out))
    assert tez.schedule_csv == (out / "schedule.csv").read_text()
