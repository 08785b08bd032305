"""``waves=`` and ``moving_delay=`` (the CLI's ``replay --waves FILE --moving-delay S``):
spark-sched-sim's wave- and parallelism-dependent durations from Python, with the CLI's bytes
and the CLI's messages."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphene_sched
from conftest import cli_error, write_trace

# spark-sched-sim's setting: one-slot executors.
CLUSTER = ["--machines", "10", "--capacity", "cpu=1,mem=1,disk=1,net=1"]
KW = dict(machines=10, capacity="cpu=1,mem=1,disk=1,net=1")


@pytest.fixture(scope="module")
def sss(cli, tmp_path_factory):
    """A small spark-sched-sim trace (TPC-H Q6 at 2g, 6 jobs) and its waves sidecar, written by
    the CLI as the integration tests' `sss_trace` does."""
    d = tmp_path_factory.mktemp("sss")
    trace, side = d / "t.csv", d / "w.json"
    cli("gen-trace", "--style", "spark-sched-sim", "--dags", "tests/data/tpch-2g-q6.json", "--jobs", "6",
        "--arrival", "poisson:5", "--executors", "10", "--seed", "3", "-q", "--out", str(trace),
        "--waves-out", str(side))
    assert trace.exists() and side.exists()
    return trace, side


def _cli_replay(cli, out: Path, trace: Path, scheduler: str, *extra: str) -> Path:
    cli("replay", str(trace), "--scheduler", scheduler, *CLUSTER, "--no-timing", "-q", "--seed", "1",
        "--out", str(out), *extra)
    return out


@pytest.mark.parametrize("scheduler", ["fifo", "graphene", "cs"])
def test_waves_give_the_clis_bytes_and_other_jcts(cli, tmp_path, sss, scheduler):
    trace, side = sss
    plain = graphene_sched.replay(str(trace), scheduler=scheduler, no_timing=True, seed=1, **KW)
    for waves in (str(side), side):  # a str or an os.PathLike
        got = graphene_sched.replay(str(trace), scheduler=scheduler, no_timing=True, seed=1, waves=waves, **KW)
        out = _cli_replay(cli, tmp_path / f"w-{type(waves).__name__}", trace, scheduler, "--waves", str(side))
        assert got.summary_json == (out / "summary.json").read_bytes()
        assert got.jobs_csv == (out / "jobs.csv").read_text()
        assert got.schedule_csv == (out / "schedule.csv").read_text()
    # The sidecar's durations are not the trace's: the JCTs move (and so does the mean).
    assert len(got.jobs) == len(plain.jobs) == 6
    assert [j["job"] for j in got.jobs] == [j["job"] for j in plain.jobs]
    assert [j["jct"] for j in got.jobs] != [j["jct"] for j in plain.jobs]
    assert got.mean_jct != plain.mean_jct
    # Without waves, Python still gives the CLI's run without them.
    out = _cli_replay(cli, tmp_path / "plain", trace, scheduler)
    assert plain.summary_json == (out / "summary.json").read_bytes()


def test_moving_delay_matches_the_cli_and_changes_the_run(cli, tmp_path, sss):
    trace, side = sss
    base = graphene_sched.replay(str(trace), scheduler="fifo", no_timing=True, seed=1, waves=side, **KW)
    slow = graphene_sched.replay(str(trace), scheduler="fifo", no_timing=True, seed=1, waves=side, moving_delay=30.0, **KW)
    out = _cli_replay(cli, tmp_path / "slow", trace, "fifo", "--waves", str(side), "--moving-delay", "30")
    assert slow.jobs_csv == (out / "jobs.csv").read_text()
    assert slow.summary_json == (out / "summary.json").read_bytes()
    # Executors moving between jobs for 30 s instead of 2 s: jobs take longer.
    assert slow.mean_jct > base.mean_jct
    # The default moving delay is the CLI's default.
    out = _cli_replay(cli, tmp_path / "default", trace, "fifo", "--waves", str(side), "--moving-delay", "2")
    assert base.jobs_csv == (out / "jobs.csv").read_text()


def test_bad_waves_and_moving_delay_raise_naming_the_file_or_field(cli, tmp_path, sss):
    trace, side = sss
    # A negative moving delay: the CLI's message, naming the field.
    r = cli("replay", str(trace), *CLUSTER, "-q", "--out", str(tmp_path / "x"), "--waves", str(side),
            "--moving-delay", "-1", check=False)
    assert r.returncode == 1
    with pytest.raises(graphene_sched.FieldError) as e:
        graphene_sched.replay(str(trace), waves=side, moving_delay=-1.0, **KW)
    assert str(e.value) == cli_error(r)
    assert "--moving-delay" in str(e.value)
    with pytest.raises(graphene_sched.FieldError, match="--moving-delay"):
        graphene_sched.replay(str(trace), waves=side, moving_delay=float("inf"), **KW)
    # A moving delay without waves (the CLI's parser refuses it before any run).
    with pytest.raises(graphene_sched.UsageError, match="--moving-delay needs --waves"):
        graphene_sched.replay(str(trace), moving_delay=1.0, **KW)
    # A missing sidecar: the CLI's message, naming the file.
    missing = tmp_path / "nowhere" / "w.json"
    r = cli("replay", str(trace), *CLUSTER, "-q", "--out", str(tmp_path / "y"), "--waves", str(missing), check=False)
    assert r.returncode == 1
    with pytest.raises(graphene_sched.GrapheneIOError) as e:
        graphene_sched.replay(str(trace), waves=missing, **KW)
    assert str(e.value) == cli_error(r)
    assert str(missing) in str(e.value)
    # A sidecar of another trace's jobs: the file and the field named.
    other = tmp_path / "other.json"
    other.write_text(side.read_text().replace('"j0000"', '"zz"'))
    with pytest.raises(graphene_sched.FieldError) as e:
        graphene_sched.replay(str(trace), waves=other, **KW)
    assert str(other) in str(e.value) and "jobs.j0000" in str(e.value)


def test_gym_env_takes_waves_with_a_trace(sss):
    gym = pytest.importorskip("gymnasium")  # noqa: F841
    import graphene_sched.gym as gg

    trace, side = sss
    env = gg.ClusterEnv(str(trace), waves=side, **KW)
    env.reset(seed=0)
    plain = gg.ClusterEnv(str(trace), **KW)
    plain.reset(seed=0)
    # The env's built-in replay draws the durations with the replay seed (0), as replay does.
    want = graphene_sched.replay(str(trace), scheduler="fifo", waves=side, seed=0, **KW)
    assert env.baseline("fifo") == pytest.approx([j["jct"] for j in want.jobs], abs=1e-9)
    assert env.baseline("fifo") != plain.baseline("fifo")
    r = gg.run_agent(env, lambda o, i: {"stage": int(o["action_mask"].argmax()), "limit": 19}, seed=0)
    assert r["complete"] and len(r["jct"]) == 6
    with pytest.raises(graphene_sched.UsageError, match="waves"):
        gg.ClusterEnv(dags=["tests/data/tpch-2g-q6.json"], jobs=2, waves=side, **KW)
    with pytest.raises(graphene_sched.FieldError, match="--moving-delay"):
        gg.ClusterEnv(str(trace), waves=side, moving_delay=-2.0, **KW)



def test_sticky_matches_the_cli_and_keeps_a_machine_on_its_job(cli, tmp_path):
    """``sticky=True`` is ``replay --sticky``. One one-slot machine; A: two 10 s tasks at 0, B:
    one 1 s task at 5. Tetris (least remaining work first) moves the machine to B when A's first
    task ends at 10 (JCTs 21 and 6 s); kept on its job, it finishes A first (20 and 16 s)."""
    trace = tmp_path / "t.csv"
    write_trace(trace, "A,0,q,s,2,10,1,1,0,0,,", "B,5,q,s,1,1,1,1,0,0,,")
    kw = dict(machines=1, capacity="cpu=1,mem=1,disk=1,net=1", no_timing=True)
    free = graphene_sched.replay(str(trace), scheduler="tetris", **kw)
    kept = graphene_sched.replay(str(trace), scheduler="tetris", sticky=True, **kw)
    assert [j["jct"] for j in free.jobs] == [21.0, 6.0]
    assert [j["jct"] for j in kept.jobs] == [20.0, 16.0]
    out = tmp_path / "cli"
    cli("replay", str(trace), "--scheduler", "tetris", "--machines", "1", "--capacity", "cpu=1,mem=1,disk=1,net=1",
        "--no-timing", "-q", "--sticky", "--out", str(out))
    assert kept.summary_json == (out / "summary.json").read_bytes()
    assert kept.schedule_csv == (out / "schedule.csv").read_text()
