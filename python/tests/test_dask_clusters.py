"""graphene_sched.dask on clusters as users run them: the Dask dashboard answers while graphene's
order runs, and the GrapheneOrder plugin plans with heterogeneous workers as the scheduler sees
them (a small graph whose order must change with the cluster, derived by hand below)."""

from __future__ import annotations

import json
import time
from urllib.request import urlopen

import pytest

pytest.importorskip("distributed")

import dask  # noqa: E402
from distributed import Client, LocalCluster, Scheduler, SpecCluster, Worker  # noqa: E402

import graphene_sched  # noqa: E402
import graphene_sched.dask as gd  # noqa: E402

from test_dask_collections import recorder  # noqa: E402


def nap(seconds, *deps):
    time.sleep(seconds)
    return seconds + sum(deps)


def get(url: str):
    with urlopen(url, timeout=30) as r:
        return r.status, r.read().decode("utf-8", "replace")


def held(name, value, *deps):
    """Returns once the test sets the Dask Event `name` (so the run lasts until the test has read
    the dashboard, however slow the machine)."""
    from distributed import Event

    assert Event(name).wait(timeout=120), f"event {name} never set"
    return value + sum(deps)


def slow_graph():
    """A chain of 4 beside 6 independent tasks; the chain's last task waits for the test."""
    d = dask.delayed
    chain = d(nap)(0.1, dask_key_name="chain-0")
    for i in range(1, 3):
        chain = d(nap)(0.1, chain, dask_key_name=f"chain-{i}")
    chain = d(held)("graphene-dashboard-compute", 0.1, chain, dask_key_name="chain-3")
    wide = [d(nap)(0.1, dask_key_name=("wide", i)) for i in range(6)]
    return d(sum)([chain, *wide], dask_key_name="total")


def test_the_dashboard_answers_during_a_prioritized_compute_and_an_execute():
    pytest.importorskip("bokeh")
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address="127.0.0.1:0", resources={"cpu": 1, "mem": 4}
    ) as lc, Client(lc) as client:
        base = f"http://127.0.0.1:{client.scheduler_info()['services']['dashboard']}"
        x = slow_graph()
        (y,) = gd.prioritize(x, client=client)
        fut = client.compute(y)
        from distributed import Event

        # Until chain-3 runs (and waits for the test), poll the scheduler's counts.
        deadline = time.monotonic() + 120
        while json.loads(get(base + "/json/counts.json")[1])["processing"] < 1:
            assert time.monotonic() < deadline and not fut.done()
            time.sleep(0.05)
        # Bokeh's server builds each page's document from the live scheduler when it is
        # requested: a 200 is the page working on graphene's priorities.
        for page in ("/status", "/individual-task-stream", "/individual-progress", "/individual-graph"):
            status, body = get(base + page)
            assert status == 200 and "Bokeh" in body, page
        status, body = get(base + "/info/task/chain-2.html")
        assert status == 200 and "chain-2" in body
        assert not fut.done()
        Event("graphene-dashboard-compute", client=client).set()
        assert fut.result(timeout=120) == pytest.approx(0.1 * 10)

        # graphene's execute on the same cluster, the dashboard read from the main thread while
        # execute waits in another.
        import threading

        dag = {
            "name": "naps",
            "resources": ["cpu", "mem"],
            "stages": [
                {"id": "a", "tasks": 4, "duration": 1, "demands": {"cpu": 1}},
                {"id": "b", "tasks": 1, "duration": 1, "demands": {"cpu": 1}, "parents": ["a"]},
            ],
        }
        box: dict = {}
        t = threading.Thread(
            target=lambda: box.update(
                e=gd.execute(
                    dag,
                    client=client,
                    payload={"a": lambda: held("graphene-dashboard-execute", 0.4), "b": lambda *xs: sum(xs)},
                    machines=2,
                    capacity="cpu=1,mem=4",
                    timeout=120,
                )
            )
        )
        t.start()
        deadline = time.monotonic() + 120
        while json.loads(get(base + "/json/counts.json")[1])["processing"] < 1:
            assert time.monotonic() < deadline and t.is_alive()
            time.sleep(0.05)
        status, body = get(base + "/status")
        assert status == 200 and "Bokeh" in body and t.is_alive()
        Event("graphene-dashboard-execute", client=client).set()
        t.join(timeout=120)
        assert box["e"].results["b[0]"] == pytest.approx(1.6) and box["e"].validation.startswith("valid")

    # execute's own LocalCluster has a dashboard too: a task of the run reads it.
    def read_dashboard():
        from distributed import get_client

        link = get_client().dashboard_link
        counts = json.loads(get(link.rsplit("/", 1)[0] + "/json/counts.json")[1])
        status, body = get(link)
        return counts["processing"], status, "Bokeh" in body

    one = {"name": "one", "resources": ["cpu"], "stages": [{"id": "s", "tasks": 1, "duration": 1, "demands": {"cpu": 1}}]}
    e = gd.execute(one, payload=read_dashboard, machines=1, capacity="cpu=1")
    assert e.results["s[0]"] == (1, 200, True)  # itself processing, the status page served


# A small graph whose best order depends on the cluster. Durations (seconds) are given the way a
# Dask user gives them to the scheduler (its default-task-durations config, what it assumes for a
# prefix it has never run), so the plugin plans with exactly these:
#
#   train (GPU, 3) -> calibrate (GPU, 1) -> publish (1)      render (GPU, 3)      load (2)
#
# Heterogeneous: a worker of 1 thread with GPU=1 and a worker of 2 threads without one. The one
# GPU slot runs train, calibrate and render one after another: 7 s at least. If render ran
# before calibrate, publish would end at 3 + 3 + 1 + 1 = 8; so the only 7 s order is train at 0,
# calibrate at 3, render at 4 (publish at 4 on the other worker): calibrate outranks render.
# Homogeneous: 3 workers of 1 thread and GPU=1 each (the same 3 threads). The chain train ->
# calibrate -> publish takes 5 s and render runs on a GPU of its own: for 5 s, render must start
# by 2 while calibrate cannot start before 3: render outranks calibrate.
DURATIONS = {"train": "3s", "calibrate": "1s", "publish": "1s", "render": "3s", "load": "2s"}


def gpu_graph():
    d = dask.delayed
    with dask.annotate(resources={"GPU": 1}):
        train = d(nap)(0.0, dask_key_name="train")
        calibrate = d(nap)(0.0, train, dask_key_name="calibrate")
        render = d(nap)(0.0, dask_key_name="render")
    publish = d(nap)(0.0, calibrate, dask_key_name="publish")
    load = d(nap)(0.0, dask_key_name="load")
    return publish, render, load


def plugin_priorities(cluster):
    """The graph computed on `cluster` with the GrapheneOrder plugin: the priorities the
    scheduler held when each task started, and the plan made from the client for comparison."""
    with Client(cluster) as client:
        client.wait_for_workers(len(cluster.workers))
        client.register_plugin(gd.GrapheneOrder())
        graph = gpu_graph()
        plan = gd.plan(*graph, client=client, improve=0)  # what the plugin plans, seen from here
        read = recorder(client)
        assert dask.compute(*graph) == (0.0, 0.0, 0.0)
        seen = read()
        summary = client.run_on_scheduler(lambda dask_scheduler=None: dask_scheduler.plugins["graphene-order"].plans[-1])
    assert summary["tasks"] == 5 and summary["estimated"] == []
    assert plan.estimated == [] and {s for _, s in plan.durations.values()} == {"config"}
    assert set(seen) == set(plan.priorities)
    for k, pr in seen.items():
        assert pr[0] == -plan.priorities[k], (k, pr, plan.priorities)
    return {k: -pr[0] for k, pr in seen.items()}, plan


def test_the_plugin_plans_heterogeneous_workers_as_the_scheduler_sees_them():
    with dask.config.set({"distributed.scheduler.default-task-durations": DURATIONS}):
        spec = {
            "gpu": {"cls": Worker, "options": {"nthreads": 1, "resources": {"GPU": 1}}},
            "cpu": {"cls": Worker, "options": {"nthreads": 2}},
        }
        with SpecCluster(workers=spec, scheduler={"cls": Scheduler, "options": {"dashboard_address": None}}) as het:
            p_het, plan_het = plugin_priorities(het)
        with LocalCluster(n_workers=3, threads_per_worker=1, processes=False, dashboard_address=None, resources={"GPU": 1}) as hom:
            p_hom, plan_hom = plugin_priorities(hom)

    # The clusters as planned: per worker its threads and declared resources.
    caps = sorted((m.count, json.dumps(m.capacity, sort_keys=True)) for m in plan_het.cluster.machines)
    assert caps == [(1, '{"GPU": 1.0, "cpu": 1.0}'), (1, '{"cpu": 2.0}')]
    assert [(m.count, m.capacity) for m in plan_hom.cluster.machines] == [(3, {"GPU": 1.0, "cpu": 1.0})]
    # The hand-derived optima and orders.
    assert plan_het.schedule.makespan == pytest.approx(7.0)
    assert plan_hom.schedule.makespan == pytest.approx(5.0)
    assert p_het["train"] > p_het["calibrate"] > p_het["render"]
    assert p_het["calibrate"] > p_het["publish"]
    assert p_hom["render"] > p_hom["calibrate"]
    assert p_hom["train"] > p_hom["calibrate"] > p_hom["publish"]


# Three GPU tasks on one GPU slot, each with a chain of CPU steps after it (1 s each): g0 has
# none, g1 two, g2 one. The only 3 s order runs the GPU tasks longest tail first: g1 (ends at 1,
# its tail at 3), g2 (2, 3), g0 (3); any other order leaves a tail running past 3. With a stage
# per task group the tails' first steps (2 tasks) depend on the GPU stage (3 tasks) all-to-all,
# which hides which GPU task has the long tail: that plan waits for every GPU task (5 s).
TAIL_DURATIONS = {"g": "1s", "tail": "1s"}


def tails_graph():
    d = dask.delayed
    with dask.annotate(resources={"GPU": 1}):
        gs_ = [d(nap)(0.0, dask_key_name=("g", i)) for i in range(3)]
    ends = []
    for i, n in enumerate([0, 2, 1]):
        x = gs_[i]
        for j in range(n):
            x = d(nap)(0.0, x, dask_key_name=("tail", i, j))
        ends.append(x)
    return tuple(ends)


def test_a_stage_per_key_sees_each_gpu_tasks_own_tail():
    cluster = {"machines": [{"count": 1, "capacity": {"cpu": 4, "GPU": 1}}], "overbook": []}
    dur = {"g": 1.0, "tail": 1.0}
    keys = gd.plan(*tails_graph(), cluster=cluster, durations=dur, stages="keys")
    assert keys.schedule.makespan == pytest.approx(3.0)
    assert keys.priorities[("g", 1)] > keys.priorities[("g", 2)] > keys.priorities[("g", 0)]
    assert len(keys.stages) == 6 and keys.stages["s0"] in {str(k) for k in keys.priorities}
    groups = gd.plan(*tails_graph(), cluster=cluster, durations=dur)
    assert groups.schedule.makespan == pytest.approx(5.0)
    with pytest.raises(graphene_sched.UsageError, match=r"^stages 'tasks' must be groups or keys$"):
        gd.plan(*tails_graph(), cluster=cluster, stages="tasks")
    with pytest.raises(graphene_sched.UsageError, match=r"^stages 'tasks' must be groups or keys$"):
        gd.GrapheneOrder(stages="tasks")

    # The plugin with a stage per key, durations from Dask's config: the same priorities reach
    # the scheduler, and prioritize gives the same results.
    with dask.config.set({"distributed.scheduler.default-task-durations": TAIL_DURATIONS}):
        with LocalCluster(n_workers=1, threads_per_worker=4, processes=False, dashboard_address=None, resources={"GPU": 1}) as lc:
            with Client(lc) as client:
                client.register_plugin(gd.GrapheneOrder(stages="keys"))
                plan = gd.plan(*tails_graph(), client=client, stages="keys", improve=0)
                assert plan.priorities == keys.priorities
                read = recorder(client)
                assert dask.compute(*tails_graph()) == (0.0, 0.0, 0.0)
                seen = read()
                assert {k: -pr[0] for k, pr in seen.items()} == plan.priorities
                assert dask.compute(*gd.prioritize(*tails_graph(), plan=plan)) == (0.0, 0.0, 0.0)
