"""Makespan and peak memory of three Dask workloads written the way Dask's own documentation
writes them, under graphene's priorities (graphene_sched.dask.plan(...).annotate()) against
Dask's own order (dask.order), on a Dask scheduler with two separate worker processes of two
threads each (one of them declaring GPU=1). Runs alternate between the two orders (A, B, A, B,
...) so that load from elsewhere hits both; each order runs --reps times after one warm-up run
whose task durations (the scheduler's per-prefix averages) feed graphene's plan.

    python python/bench/dask_workloads.py --reps 5

Workloads:
* dataframe: dask.datasets.timeseries -> filter, groupby-mean, shuffle on `id`, join back;
* array: a random 3000x3000 matrix in 500x500 chunks, (x @ x.T).sum(axis=0) and the mean of
  each row of x;
* etl: a delayed graph: 16 loads -> 16 CPU transforms -> 8 GPU-annotated scoring tasks
  (resources={"GPU": 1}) -> a report, beside a chain of 8 dependent model-update steps.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

import dask
import numpy as np
from distributed import Client, LocalCluster
from distributed.diagnostics import MemorySampler

import graphene_sched.dask as gd


def work(seconds: float, size: int = 200_000) -> np.ndarray:
    """Real CPU work (numpy) for about `seconds`."""
    end = time.perf_counter() + seconds
    x = np.arange(size, dtype="float64")
    while time.perf_counter() < end:
        np.sqrt(x * x + 1.0)
    return x  # the same whatever the speed, so every run's results can be compared


def load(i: int) -> np.ndarray:
    return work(0.05) + i


def transform(x: np.ndarray) -> np.ndarray:
    return work(0.15) + x[:1].sum()


def score(*xs: np.ndarray) -> float:
    return float(work(0.3)[:10].sum() + sum(x[:1].sum() for x in xs))


def step(state: float, i: int) -> float:
    work(0.25)
    return state + i


def report(*xs: float) -> float:
    return float(sum(xs))


def dataframe():
    df = dask.datasets.timeseries(start="2000-01-01", end="2000-01-21", freq="2s", partition_freq="1d", seed=7)
    pos = df[df.x > 0]
    means = pos.groupby("name").y.mean().rename("mean_y").to_frame()
    shuffled = pos.shuffle("id", npartitions=10)
    joined = shuffled.merge(means, left_on="name", right_index=True)
    return (joined.groupby("id").mean_y.sum(),)


def array():
    import dask.array as da

    x = da.random.RandomState(3).random((3000, 3000), chunks=(500, 500))
    return (x @ x.T).sum(axis=0), x.mean(axis=1)


def etl():
    d = dask.delayed
    loaded = [d(load)(i, dask_key_name=("load", i)) for i in range(16)]
    clean = [d(transform)(x, dask_key_name=("transform", i)) for i, x in enumerate(loaded)]
    with dask.annotate(resources={"GPU": 1}):
        scores = [d(score)(clean[2 * i], clean[2 * i + 1], dask_key_name=("score", i)) for i in range(8)]
    state = d(step)(0.0, 0, dask_key_name=("step", 0))
    for i in range(1, 8):
        state = d(step)(state, i, dask_key_name=("step", i))
    return (d(report)(state, *scores, dask_key_name="report"),)


WORKLOADS = {"dataframe": dataframe, "array": array, "etl": etl}


def run(client: Client, colls, plan, sampler: MemorySampler, label: str):
    t0 = time.perf_counter()
    with sampler.sample(label, interval=0.05):
        if plan is None:
            out = dask.compute(*colls)
        else:
            with plan.annotate():
                out = dask.compute(*colls)
    return time.perf_counter() - t0, out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--workloads", default="dataframe,array,etl")
    a = p.parse_args()
    dask.config.set({"distributed.worker.daemon": False})
    dask_bin = shutil.which("dask") or os.path.join(os.path.dirname(sys.executable), "dask")
    with LocalCluster(n_workers=0, dashboard_address=None) as lc, Client(lc) as client:
        procs = [
            subprocess.Popen([dask_bin, "worker", lc.scheduler_address, "--nthreads", "2", "--no-dashboard", *extra],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for extra in (["--resources", "GPU=1"], [])
        ]
        try:
            client.wait_for_workers(2, timeout=120)
            print(f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; machine: {os.cpu_count()} cores (shared)")
            print("| workload | tasks | order | makespan s (mean +- sd) | min-max | peak cluster memory MiB (mean +- sd) | graphene's plan s |")
            print("|---|---|---|---|---|---|---|")
            for name in a.workloads.split(","):
                colls = WORKLOADS[name]()
                _, want = run(client, colls, None, MemorySampler(), "warm-up")
                t = time.perf_counter()
                plan = gd.plan(*colls, client=client)
                plan_s = time.perf_counter() - t
                ms: dict = {"dask.order": [], "graphene": []}
                mem: dict = {"dask.order": [], "graphene": []}
                for r in range(a.reps):
                    for order in (("dask.order", "graphene") if r % 2 == 0 else ("graphene", "dask.order")):
                        sampler = MemorySampler()
                        secs, out = run(client, colls, plan if order == "graphene" else None, sampler, order)
                        assert _same(out, want), (name, order)
                        ms[order].append(secs)
                        mem[order].append(float(sampler.to_pandas().max().iloc[0]) / 2**20)
                for order in ("dask.order", "graphene"):
                    m, s = statistics.mean(ms[order]), statistics.stdev(ms[order]) if a.reps > 1 else 0.0
                    mm, ss = statistics.mean(mem[order]), statistics.stdev(mem[order]) if a.reps > 1 else 0.0
                    print(f"| {name} | {len(plan.priorities)} | {order} | {m:.2f} +- {s:.2f} | {min(ms[order]):.2f}-{max(ms[order]):.2f} | "
                          f"{mm:.0f} +- {ss:.0f} | {plan_s:.2f} |" if order == "graphene" else
                          f"| {name} | {len(plan.priorities)} | {order} | {m:.2f} +- {s:.2f} | {min(ms[order]):.2f}-{max(ms[order]):.2f} | "
                          f"{mm:.0f} +- {ss:.0f} | |", flush=True)
        finally:
            for pr in procs:
                pr.terminate()
            for pr in procs:
                pr.wait(timeout=60)


def _same(a, b) -> bool:
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if hasattr(a, "equals"):
        return bool(a.sort_index().equals(b.sort_index())) or bool(np.allclose(a.sort_index().values, b.sort_index().values))
    return bool(np.allclose(a, b))


if __name__ == "__main__":
    main()
