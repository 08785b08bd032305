"""The cost of a policy written in Python: the same replay under the built-in ``fifo``, under
``examples/python_policy.py``'s FIFO (stage by stage: it reads a stage's tasks only when the
stage's next task fits), and under the same FIFO reading ``view.runnable`` (every runnable task,
every call), all giving the same schedule (checked), interleaved, in one process. Prints the wall
time of each, the calls of ``decide()``, and the time per call, which includes building what
the policy reads of the view on the Rust and the Python side.

    python python/bench/policy_overhead.py [--jobs 200] [--machines 20] [--reps 3]

The workload: ``gen_trace`` of Decima's TPC-H DAGs (../shared/data/decima-tpch/json, 2g), Poisson
arrivals at 70% load, seed 1.
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import sys
import time

import graphene_sched as gs

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
from python_policy import Fifo, FifoEveryTask  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--machines", type=int, default=20)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    dags = sorted(glob.glob("../shared/data/decima-tpch/json/tpch-2g.json"))
    if not dags:
        sys.exit("needs ../shared/data/decima-tpch/json/tpch-2g.json (run from the repository root)")
    trace = gs.gen_trace(dags, jobs=a.jobs, arrival="poisson:10", load=0.7, seed=1, machines=a.machines)
    opts = dict(machines=a.machines, no_timing=True)
    walls = {"fifo": [], "python": [], "all": []}
    calls = {"python": 0, "all": 0}
    per_call = {"python": 0.0, "all": 0.0}
    for _ in range(a.reps):
        t = time.perf_counter()
        builtin = gs.replay(trace, scheduler="fifo", **opts)
        walls["fifo"].append(time.perf_counter() - t)
        for key, policy in (("python", Fifo()), ("all", FifoEveryTask())):
            t = time.perf_counter()
            ours = gs.replay(trace, scheduler=policy, **opts)
            walls[key].append(time.perf_counter() - t)
            assert ours.schedule_csv == builtin.schedule_csv, "a Python FIFO must give fifo's schedule"
            calls[key] = ours.policy_calls or 0
            per_call[key] = (ours.policy_seconds or 0.0) / max(calls[key], 1)
    tasks = builtin.summary["tasks"]
    f = statistics.median(walls["fifo"])
    print(f"{a.jobs} jobs, {tasks} tasks, {a.machines} machines; median of {a.reps} interleaved runs")
    print(f"fifo (Rust)                        {f:8.3f} s")
    for key, what in (("python", "fifo (Python, stage by stage)"), ("all", "fifo (Python, every task)")):
        p = statistics.median(walls[key])
        print(f"{what:<34} {p:8.3f} s   ({p / f:.1f}x); {int(calls[key])} calls of decide(), {1e6 * per_call[key]:.0f} us each")

if __name__ == "__main__":
    main()
