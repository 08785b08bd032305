"""graphene_sched.dask: graphene's order executed by Dask, checked by graphene's validator."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

pytest.importorskip("distributed")

import graphene_sched  # noqa: E402
import graphene_sched.dask as gd  # noqa: E402

CAP = {"cpu": 4, "mem": 16, "disk": 200, "net": 1250}


def check_annotations(e: gd.Execution, dag) -> None:
    """Every task reached the scheduler with the priority and resources it was submitted with."""
    tasks = gd.expand(graphene_sched.read_dag(dag))
    assert set(e.annotations) == {t.id for t in tasks}
    for t in tasks:
        a = e.annotations[t.id]
        if e.priorities:
            assert a["priority"][0] == -e.priorities[t.id], t.id
        want = {r: float(v) for r, v in t.demands.items() if r in ("cpu", "mem") and v > 0}
        assert a["resources"] == want, t.id


def test_local_cluster_runs_graphenes_order_and_the_validator_accepts_it():
    e = gd.execute("traces/example.json", machines=2, capacity=CAP, time_scale=0.002)
    assert e.validation.startswith("valid: 52 tasks of example on 2 machines")
    assert len(e.workers) == 2 and {t["machine"] for t in e.tasks} <= {0, 1}
    check_annotations(e, "traces/example.json")
    # graphene's order: the most urgent task has the highest Dask priority.
    s = graphene_sched.build_schedule("traces/example.json", machines=2, capacity=CAP)
    assert e.priorities[s.order[0]] == len(s.order)
    # The realized schedule honours every dependency and the capacities Dask enforced (the
    # validator re-checks what execute() already did, from the schedule itself).
    assert e.makespan >= graphene_sched.lower_bound("traces/example.json", machines=2, capacity=CAP).critical_path
    # Each task ran at least its duration (sleep payload).
    durs = {t.id: t.duration for t in gd.expand(graphene_sched.read_dag("traces/example.json"))}
    for t in e.tasks:
        assert t["end"] - t["start"] >= durs[t["id"]] * 0.999


def test_baseline_orders_default_order_and_callables():
    e = gd.execute("traces/example.json", schedule="cp", machines=2, capacity=CAP, time_scale=0.001)
    assert e.order == "cp" and e.validation.startswith("valid")
    cp = graphene_sched.build_schedule("traces/example.json", scheduler="cp", machines=2, capacity=CAP)
    assert e.priorities[cp.order[0]] == len(cp.order)
    d = gd.execute("traces/example.json", schedule=False, machines=2, capacity=CAP, time_scale=0.001)
    assert d.order is None and d.priorities == {} and d.validation.startswith("valid")
    check_annotations(d, "traces/example.json")
    # A callable gets its parents' outputs: here each task counts the tasks upstream of it.
    u = gd.execute("traces/example.json", payload=lambda *xs: 1 + sum(xs), machines=2, capacity=CAP)
    assert u.validation.startswith("valid") and len(u.tasks) == 52 and len(u.results) == 52
    g = graphene_sched.read_dag("traces/example.json")
    parents = {t.id: t.parents for t in gd.expand(g)}
    for tid, v in u.results.items():
        assert v == 1 + sum(u.results[p] for p in parents[tid]), tid
    with pytest.raises(graphene_sched.UsageError):
        gd.execute("traces/example.json", payload="nope")


def test_a_real_dask_scheduler_and_two_worker_processes_on_loopback(tmp_path):
    dask = shutil.which("dask") or os.path.join(os.path.dirname(sys.executable), "dask")
    sched_file = tmp_path / "scheduler.json"
    procs = []
    try:
        procs.append(subprocess.Popen(
            [dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(sched_file)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        ))
        for _ in range(600):
            if sched_file.exists() and sched_file.stat().st_size > 0:
                break
            time.sleep(0.1)
        addr = json.loads(sched_file.read_text())["address"]
        for _ in range(2):
            procs.append(subprocess.Popen(
                [dask, "worker", addr, "--nthreads", "4", "--resources", "cpu=4,mem=16", "--no-dashboard", "--no-nanny"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            ))
        from distributed import Client

        with Client(addr) as client:
            client.wait_for_workers(2, timeout=120)
            e = gd.execute("traces/example.json", client=client, machines=2, capacity=CAP, time_scale=0.002)
        assert e.validation.startswith("valid: 52 tasks of example on 2 machines")
        assert len(e.workers) == 2 and all(w.startswith("tcp://127.0.0.1:") for w in e.workers)
        assert len({t["worker"] for t in e.tasks}) == 2
        check_annotations(e, "traces/example.json")
    finally:
        # The workers first, while the scheduler still answers their goodbye: a worker that
        # lost its scheduler retries the connection until its 30 s timeout before it exits.
        for group in (procs[1:], procs[:1]):
            for p in group:
                p.terminate()
            for p in group:
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


def test_bad_arguments_raise_before_anything_starts():
    for kw, msg in [
        (dict(time_scale="fast"), r"^time_scale: expected a number, not str$"),
        (dict(time_scale=0), r"^time_scale: 0.0 must be a finite number > 0$"),
        (dict(payload=5), r"^payload: expected sleep, cpu-burn, a callable or a dict of them, not int$"),
        (dict(schedule=3), r"^schedule: expected a scheduler's name, a graphene_sched.Schedule or False, not int$"),
        (dict(client=5), r"^client: expected a distributed.Client, an address or None, not int$"),
        (dict(processes="yes"), r"^processes: expected True, False or None, not str$"),
    ]:
        with pytest.raises(graphene_sched.UsageError, match=msg):
            gd.execute("traces/example.json", **kw)
    import dask

    with pytest.raises(graphene_sched.UsageError, match=r"^dag: execute runs a graphene DAG .* not a Dask Delayed: .*prioritize"):
        gd.execute(dask.delayed(sum)([1, 2]))
    with pytest.raises(graphene_sched.UsageError, match=r"^cluster: expected a graphene_sched.Cluster"):
        gd.local_cluster({"machines": []}, ["cpu"])
    with pytest.raises(graphene_sched.UsageError, match=r"^dag: expected a graphene_sched.Dag \(read_dag reads one\), not str$"):
        gd.expand("traces/example.json")
