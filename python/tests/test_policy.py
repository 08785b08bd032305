"""Policies written in Python (graphene_sched.policy): run by the same simulator, checked by
the same rules, with the same outputs as the built-in policies."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import graphene_sched as gs
from graphene_sched.policy import View

CLUSTER = "traces/small-cluster.json"


def fifo_module():
    sys.path.insert(0, str(Path("examples").resolve()))
    try:
        import python_policy  # noqa: PLC0415

        return python_policy
    finally:
        sys.path.pop(0)


def test_python_fifo_is_the_built_in_fifo(tmp_path):
    """The example's FIFO gives the built-in fifo's schedule, task by task, and its JCTs, on the
    small trace and on a misestimated one (same seed)."""
    cluster = CLUSTER
    Fifo = fifo_module().Fifo
    for opts in ({}, {"misestimate": "-0.5:0.5", "seed": 7}):
        ours = gs.replay("traces/small.csv", str(cluster), scheduler=Fifo(), **opts)
        theirs = gs.replay("traces/small.csv", str(cluster), scheduler="fifo", **opts)
        assert ours.scheduler == "python-fifo"
        assert ours.schedule_csv == theirs.schedule_csv
        assert [j["jct"] for j in ours.jobs] == [j["jct"] for j in theirs.jobs]
        assert ours.policy_calls and ours.policy_calls > 0 and ours.policy_seconds > 0


def test_the_example_writes_the_cli_replay(tmp_path, cli):
    """examples/python_policy.py TRACE CLUSTER OUTDIR writes the jobs.csv of
    `graphene replay TRACE --cluster CLUSTER --scheduler fifo`."""
    cluster = CLUSTER
    r = subprocess.run(
        [sys.executable, "examples/python_policy.py", "traces/small.csv", str(cluster), str(tmp_path / "py")],
        capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert "python-fifo: mean JCT" in r.stdout
    cli("replay", "traces/small.csv", "--cluster", str(cluster), "--scheduler", "fifo", "--out", str(tmp_path / "cli"), "-q")
    assert (tmp_path / "py" / "jobs.csv").read_text() == (tmp_path / "cli" / "jobs.csv").read_text()
    assert (tmp_path / "py" / "schedule.csv").read_text() == (tmp_path / "cli" / "schedule.csv").read_text()


class Greedy:
    """Launches every runnable task: more than a machine holds."""

    def decide(self, view: View):
        return [(t.job, t.task) for t in view.runnable]


def test_an_infeasible_launch_is_a_clear_error():
    with pytest.raises(gs.UsageError, match=r"launch \d+ \(job 0, task \d+\) at time 0: .*does not fit"):
        gs.replay("traces/small.csv", machines=3, scheduler=Greedy())

    class Twice:
        def decide(self, view):
            t = view.runnable[0]
            return [(t.job, t.task), (t.job, t.task)]

    with pytest.raises(gs.UsageError, match="launched twice"):
        gs.replay("traces/small.csv", machines=3, scheduler=Twice())

    class NotPairs:
        def decide(self, view):
            return 42

    with pytest.raises(gs.UsageError, match="must return \\(job, task\\) pairs"):
        gs.replay("traces/small.csv", machines=3, scheduler=NotPairs())
    with pytest.raises(gs.UsageError, match="decide\\(view\\) method"):
        gs.replay("traces/small.csv", machines=3, scheduler=object())


def test_the_policys_own_exception_is_raised_as_it_is():
    class Boom:
        def decide(self, view):
            raise KeyError("my policy's bug")

    with pytest.raises(KeyError, match="my policy's bug"):
        gs.replay("traces/small.csv", machines=3, scheduler=Boom())


def test_the_view_is_what_the_policy_believes():
    """The view: the machine's free resources within its capacity, runnable tasks only, jobs in
    arrival order; a policy that launches nothing until later still ends every job."""
    seen = []

    class Late:
        name = "late"

        def decide(self, view):
            seen.append(view)
            if view.now < 5:
                return []
            return fifo_module().Fifo().decide(view)

    r = gs.replay("traces/small.csv", machines=3, scheduler=Late())
    assert r.scheduler == "late" and all(j["finish"] >= 5 for j in r.jobs)
    first = seen[0]
    assert first.now == 0 and first.free == first.capacity and len(first.hard) == 4
    jobs = [t.job for t in first.runnable]
    assert jobs == sorted(jobs)
    assert all(len(t.demand) == 4 and t.duration > 0 for t in first.runnable)


def test_the_stages_and_their_tasks_are_the_runnable_tasks_in_order():
    """`view.stages` has one entry per runnable stage; each stage's tasks, read through
    `view.tasks`, are the runnable tasks of that stage in the same order as `view.runnable`, and
    the stage's demand, duration and task are its next task's. A FIFO over `view.runnable`
    alone (every task read) gives the same schedule as the example's stage-by-stage one."""
    seen = []

    class Fifo(fifo_module().FifoEveryTask):
        def decide(self, view):
            seen.append(view)
            return super().decide(view)

    ours = gs.replay("traces/small.csv", machines=3, scheduler=Fifo())
    theirs = gs.replay("traces/small.csv", machines=3, scheduler="fifo")
    assert ours.schedule_csv == theirs.schedule_csv
    assert len(seen) > 10
    multi = 0
    for view in seen:
        flat = [t for s in view.stages for t in view.tasks(s)]
        assert flat == list(view.runnable)
        for i, s in enumerate(view.stages):
            tasks = view.tasks(i)
            assert s.index == i and s.tasks == len(tasks) > 0
            assert all((t.job, t.stage) == (s.job, s.stage) for t in tasks)
            assert (s.task, s.demand, s.duration) == (tasks[0].task, tasks[0].demand, tasks[0].duration)
            multi += s.tasks > 1
    assert multi > 0  # stages of several runnable tasks were seen, not only singletons
    with pytest.raises(gs.UsageError, match=r"^stage 9999: the view has \d+ runnable stages$"):
        seen[0].tasks(9999)


def test_a_stable_idle_answer_gives_the_same_replay_with_fewer_calls():
    """`idle_is_stable = True` (the example's FIFO declares it) lets the simulator skip machines
    whose empty answer cannot change: the same schedule with fewer calls of decide(); a value
    that is not a bool is refused."""
    Fifo = fifo_module().Fifo

    class Asking(Fifo):
        idle_is_stable = False

    stable = gs.replay("traces/small.csv", machines=3, scheduler=Fifo())
    asking = gs.replay("traces/small.csv", machines=3, scheduler=Asking())
    assert stable.schedule_csv == asking.schedule_csv
    assert 0 < stable.policy_calls < asking.policy_calls

    class Bad(Fifo):
        idle_is_stable = "yes"

    with pytest.raises(gs.UsageError, match=r"^idle_is_stable: expected True or False, not str$"):
        gs.replay("traces/small.csv", machines=3, scheduler=Bad())
