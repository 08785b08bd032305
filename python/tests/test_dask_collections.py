"""graphene_sched.dask on a user's own Dask computation: prioritize, plan, the GrapheneOrder
scheduler plugin, and execute's errors (missing resources, timeouts) instead of hangs."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("distributed")

import dask  # noqa: E402
import numpy as np  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402
from distributed.diagnostics.plugin import SchedulerPlugin  # noqa: E402

import graphene_sched  # noqa: E402
import graphene_sched.dask as gd  # noqa: E402


class Recorder(SchedulerPlugin):
    """Records each task's priority as the scheduler holds it when the task starts processing."""

    name = "recorder"

    def __init__(self) -> None:
        self.seen: dict = {}
        self.started: list = []

    async def start(self, scheduler) -> None:
        self.scheduler = scheduler

    def transition(self, key, start, finish, *args, **kwargs) -> None:
        if finish == "processing":
            ts = self.scheduler.tasks.get(key)
            if ts is not None:
                self.seen[key] = tuple(ts.priority)
                self.started.append(key)


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None, resources={"GPU": 1}) as lc:
        with Client(lc) as c:
            yield c


def recorder(client) -> Recorder:
    def attach(dask_scheduler=None):
        dask_scheduler.plugins.pop("recorder", None)
        r = Recorder()
        r.scheduler = dask_scheduler
        dask_scheduler.add_plugin(r)

    def read(dask_scheduler=None):
        return dict(dask_scheduler.plugins["recorder"].seen)

    client.run_on_scheduler(attach)
    return lambda: client.run_on_scheduler(read)


def inc(x):
    return x + 1


def add(*xs):
    return sum(xs)


def delayed_graph():
    d = dask.delayed
    # A long chain beside a wide stage, joined at the end.
    chain = d(inc)(0, dask_key_name="chain-0")
    for i in range(1, 6):
        chain = d(inc)(chain, dask_key_name=f"chain-{i}")
    wide = [d(inc)(i, dask_key_name=("wide", i)) for i in range(8)]
    return d(add)(chain, *wide, dask_key_name="total")


def check_priorities(seen, plan) -> int:
    """Every planned task reached the scheduler with graphene's priority first in its tuple
    (Dask's own generation and dask.order rank after it); returns how many were checked."""
    n = 0
    for k, pr in seen.items():
        if k in plan.priorities:
            assert pr[0] == -plan.priorities[k], (k, pr, plan.priorities[k])
            n += 1
    return n


def test_prioritize_a_delayed_graph_same_result_and_the_priorities_reach_the_scheduler(client):
    x = delayed_graph()
    plan = gd.plan(x, client=client)
    # A topological order: every parent outranks its child.
    assert plan.priorities["chain-0"] > plan.priorities["chain-1"] > plan.priorities["total"]
    assert all(plan.priorities[("wide", i)] > plan.priorities["total"] for i in range(8))
    assert sorted(plan.priorities.values()) == list(range(1, len(plan.priorities) + 1))
    assert plan.dag.tasks == 15 and plan.cluster.size == 2
    assert set(plan.estimated) == {"chain", "wide", "total"}  # nothing measured yet
    (y,) = gd.prioritize(x, client=client)
    read = recorder(client)
    assert client.compute(y).result() == x.compute(scheduler="sync") == 6 + sum(range(1, 9))
    assert check_priorities(read(), plan) == 15
    # dask.compute on the distributed scheduler and the annotate() form give the same.
    assert dask.compute(y)[0] == 42
    with plan.annotate():
        assert x.compute() == 42


def test_durations_come_from_the_scheduler_after_a_run(client):
    x = delayed_graph()
    x.compute()

    def scheduler_averages():
        return client.run_on_scheduler(
            lambda dask_scheduler: {n: tp.duration_average for n, tp in dask_scheduler.task_prefixes.items()}
        )

    # Every prefix the scheduler holds an average for is planned with it; Dask drops a prefix's
    # average when one of its tasks runs over twice the average (TaskPrefix.add_exec_time), which
    # a loaded machine can cause within a run (or, from a late worker heartbeat, just after it):
    # only such a prefix may be estimated. Planned again if the averages moved meanwhile.
    for _ in range(5):
        before = scheduler_averages()
        plan = gd.plan(x, client=client)
        averages = scheduler_averages()
        if averages == before:
            break
    prefixes = {"chain", "wide", "total"}
    assert set(plan.durations) == prefixes
    dropped = sorted(p for p in prefixes if averages.get(p, -1) < 0)
    assert sorted(plan.estimated) == dropped and len(dropped) < len(prefixes)
    for p in prefixes - set(dropped):
        assert plan.durations[p] == (max(averages[p], 1e-6), "scheduler"), p
    # Result sizes as Dask measured them (reported, not planned): the results still held.
    held = client.persist(x)
    held.compute()
    assert gd.plan(x, client=client).nbytes.get("total", 0) > 0
    del held
    # A run's task stream instead of the scheduler's averages.
    from distributed import get_task_stream

    with get_task_stream(client=client) as ts:
        x.compute()
    streamed = gd.plan(x, task_stream=ts, cluster=gd._workers_cluster(client.scheduler_info(n_workers=-1)["workers"]))
    assert streamed.estimated == [] and {s for _, s in streamed.durations.values()} == {"task-stream"}
    given = gd.plan(x, client=client, durations={"chain": 5.0})
    assert given.durations["chain"] == (5.0, "given")
    assert {s for k, (_, s) in given.durations.items() if k != "chain"} == {"scheduler"}
    # The long chain starts at once when it is long (two threads: it and one wide task). Every
    # prefix is given here: the scheduler's own averages (microseconds that vary from run to run)
    # may break the plan's ties another way.
    fixed = gd.plan(x, client=client, durations={"chain": 5.0, "wide": 1e-3, "total": 1e-3})
    assert fixed.priorities["chain-0"] >= len(fixed.priorities) - 1
    assert fixed.schedule.makespan == pytest.approx(30.0, rel=1e-3)


def test_a_dataframe_and_an_array_give_the_same_results_in_graphenes_order(client):
    import pandas as pd

    da = pytest.importorskip("dask.array")
    df = dask.datasets.timeseries(start="2000-01-01", end="2000-01-05", freq="1h", partition_freq="1d", seed=1)
    q = df[df.x > 0].groupby("name").y.mean()
    want = q.compute(scheduler="sync")
    plan = gd.plan(q, client=client)
    read = recorder(client)
    with plan.annotate():
        got = q.compute()
    pd.testing.assert_series_equal(got.sort_index(), want.sort_index())
    assert check_priorities(read(), plan) >= 4
    with pytest.warns(UserWarning, match="ignores annotations"):
        assert gd.prioritize(q, client=client)[0] is q

    a = da.random.RandomState(0).random((40, 40), chunks=(10, 10))
    b = (a @ a.T).sum(axis=0)
    want_b = b.compute(scheduler="sync")
    plan_b = gd.plan(b, client=client)
    (pb,) = gd.prioritize(b, plan=plan_b)
    assert isinstance(pb, da.Array) and pb.shape == b.shape
    read = recorder(client)
    np.testing.assert_allclose(client.compute(pb).result(), want_b)
    assert check_priorities(read(), plan_b) == len(plan_b.priorities) - 1  # all but finalize
    read = recorder(client)
    np.testing.assert_allclose(pb.persist().compute(), want_b)
    assert check_priorities(read(), plan_b) >= len(plan_b.priorities) - 2


def test_a_bag_keeps_its_type_and_results(client):
    import dask.bag as db

    b = db.from_sequence(range(100), npartitions=4).map(abs).filter(bool)
    total = b.sum()
    pb, pt = gd.prioritize(b, total, client=client)
    assert isinstance(pb, db.Bag) and isinstance(pt, db.Item)
    assert client.compute(pt).result() == total.compute(scheduler="sync") == 4950
    assert sorted(pb.compute()) == list(range(1, 100))


def test_a_task_graph_dict_and_annotated_resources(client):
    graph = {"a": (inc, 1), "b": (inc, "a"), "c": (add, "a", "b")}
    plan = gd.plan(graph, client=client)
    assert plan.priorities["a"] > plan.priorities["b"] > plan.priorities["c"]
    d = dask.delayed
    with dask.annotate(resources={"GPU": 1}):
        g = d(inc)(1, dask_key_name="gpu-task")
    assert gd.plan(g, client=client).dag.resources == ["GPU", "cpu"]
    with dask.annotate(resources={"TPU": 1}):
        t = d(inc)(1, dask_key_name="tpu-task")
    with pytest.raises(gd.DaskRunError, match=r"task 'tpu-task' needs resource TPU=1 but no worker of the cluster holds that much \(none\)"):
        gd.prioritize(t, client=client)
    with pytest.raises(graphene_sched.UsageError, match=r"collections\[0\]: expected a Dask collection"):
        gd.plan(5)


def test_the_scheduler_plugin_orders_every_graph(client):
    plugin = gd.GrapheneOrder()
    client.register_plugin(plugin)
    try:
        read = recorder(client)
        x = delayed_graph()
        plan = gd.plan(x, client=client, improve=0)  # what the plugin plans when the graph arrives
        assert x.compute() == 42
        seen = read()
        assert check_priorities(seen, plan) == 15
        n = client.run_on_scheduler(lambda dask_scheduler=None: dask_scheduler.plugins["graphene-order"].plans[-1]["tasks"])
        assert n == 15
    finally:
        client.run_on_scheduler(lambda dask_scheduler=None: dask_scheduler.plugins.pop("graphene-order", None))


def test_execute_passes_outputs_keeps_results_and_refuses_missing_resources(client):
    dag = {
        "name": "sums",
        "resources": ["cpu", "mem"],
        "stages": [
            {"id": "a", "tasks": 2, "duration": 1, "demands": {"cpu": 1}},
            {"id": "b", "tasks": 1, "duration": 1, "demands": {"cpu": 1}, "parents": ["a"]},
        ],
    }
    e = gd.execute(dag, payload={"a": lambda: 20, "b": lambda *xs: sum(xs) + 2}, machines=2, capacity="cpu=2,mem=4")
    assert e.results == {"a[0]": 20, "a[1]": 20, "b[0]": 42}
    assert e.validation.startswith("valid")
    # The module's client declares GPU only: cpu is missing, refused before anything runs.
    t0 = time.monotonic()
    with pytest.raises(gd.DaskRunError, match=r"task a\[0\] needs Dask resource cpu=1 but no worker holds that much \(none of them declares it\)"):
        gd.execute(dag, client=client, machines=2, capacity="cpu=2,mem=4")
    assert time.monotonic() - t0 < 10


def test_a_timeout_fires_instead_of_a_hang():
    dag = {"name": "slow", "resources": ["cpu"], "stages": [{"id": "s", "tasks": 1, "duration": 1, "demands": {"cpu": 1}}]}
    with pytest.raises(gd.DaskRunError, match=r"^timed out after 0.5 s: 1 of 1 tasks unfinished \(e.g. s\[0\]\)$"):
        gd.execute(dag, payload=lambda: time.sleep(2), machines=1, capacity="cpu=1", timeout=0.5)
    with pytest.raises(graphene_sched.UsageError, match=r"^timeout: -1.0 must be a number > 0 or None$"):
        gd.execute(dag, timeout=-1)


def _die(*inputs):
    import os

    os._exit(1)


def test_a_lost_worker_is_reported_not_a_hang():
    # Separate worker processes (a nanny restarts a dead one under a new address); the result
    # of "ok" may have died with the worker, so 1 or 2 tasks are left.
    dag = {
        "name": "crash",
        "resources": ["cpu"],
        "stages": [
            {"id": "ok", "tasks": 1, "duration": 1, "demands": {"cpu": 1}},
            {"id": "crash", "tasks": 1, "duration": 1, "demands": {"cpu": 1}, "parents": ["ok"]},
        ],
    }
    t0 = time.monotonic()
    with pytest.raises(gd.DaskRunError, match=r"^worker\(s\) tcp://127\.0\.0\.1:\d+ lost during the run; [12] of 2 tasks unfinished$"):
        gd.execute(dag, payload={"ok": lambda: 1, "crash": _die}, machines=1, capacity="cpu=1", processes=True, timeout=120)
    assert time.monotonic() - t0 < 120
