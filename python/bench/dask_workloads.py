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
  (resources={"GPU": 1}) -> a report, beside a chain of 8 dependent model-update steps;
* gpu: the scarce resource binds: 8 partitions of dask.datasets.timeseries, each through a
  GPU-annotated step (numpy's SVD of a 300x300 matrix, then 0.4 s waiting for the device, which
  this machine does not have; one GPU slot in the cluster) and then a
  tail of 0-7 dependent pandas steps (rolling means, groupby), beside a wide stage of 16
  groupby-aggregates of another timeseries; all into one sum.

    python python/bench/dask_workloads.py --reps 5 --workloads gpu --orders dask.order,graphene,graphene-keys

runs it under Dask's order, graphene's with a stage per task group, and graphene's with a stage
per key (stages="keys": each partition's tail seen on its own), interleaved.
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


#: Seconds the GPU step waits for its device: on this machine there is no accelerator, and a
#: thread driving one waits while it computes, leaving the cores to the other tasks.
DEVICE_SECONDS = 0.4


def svd_features(part) -> np.ndarray:
    """The GPU step: the singular values of a 300x300 matrix filled from the partition (LAPACK),
    then the device's time (DEVICE_SECONDS of waiting)."""
    a = np.resize(part[["x", "y"]].to_numpy(), (300, 300))
    out = np.linalg.svd(a, compute_uv=False)
    time.sleep(DEVICE_SECONDS)
    return out


def refine(features: np.ndarray, part, step: int) -> np.ndarray:
    """One CPU step of a partition's tail: pandas rolling means and groupbys over the partition."""
    acc = 0.0
    for w in (50 + 10 * step, 200, 500 + 10 * step, 1000, 2000, 5000):
        roll = part[["x", "y"]].rolling(w).mean()
        acc += float(part.assign(r=roll.x).groupby("name").r.mean().mean())
    return features * 0.5 + acc


def summarize(part) -> float:
    """A task of the wide stage: a filtered groupby-aggregate of one partition."""
    g = part[part.y > 0].groupby("name").agg({"x": "sum", "y": "max", "id": "count"})
    return float(g.x.sum() + g.y.sum() + g.id.sum())


def collect(*xs) -> float:
    return float(sum(np.sum(x) for x in xs))


#: The number of refine steps after each partition's GPU step: shuffled, so neither order is
#: favoured by key names (partition i's tail is TAILS[i] steps long).
TAILS = [3, 0, 6, 1, 7, 2, 5, 4]


def gpu():
    d = dask.delayed
    feats = dask.datasets.timeseries(start="2000-01-01", end="2000-01-09", freq="1s", partition_freq="1D", seed=5)
    parts = feats.to_delayed()
    with dask.annotate(resources={"GPU": 1}):
        emb = [d(svd_features)(p, dask_key_name=("svd_features", i)) for i, p in enumerate(parts)]
    tails = []
    for i, (e, p) in enumerate(zip(emb, parts)):
        x = e
        for j in range(TAILS[i]):
            x = d(refine)(x, p, j, dask_key_name=("refine", i, j))
        tails.append(x)
    other = dask.datasets.timeseries(start="2000-02-01", end="2000-02-17", freq="2s", partition_freq="1D", seed=6)
    wide = [d(summarize)(p, dask_key_name=("summarize", i)) for i, p in enumerate(other.to_delayed())]
    return (d(collect)(*tails, *wide, dask_key_name="collect"),)


WORKLOADS = {"dataframe": dataframe, "array": array, "etl": etl, "gpu": gpu}


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
    p.add_argument("--orders", default="dask.order,graphene",
                   help="dask.order, graphene (a stage per task group) and graphene-keys (a stage per key)")
    a = p.parse_args()
    orders = a.orders.split(",")
    for o in orders:
        if o not in ("dask.order", "graphene", "graphene-keys"):
            p.error(f"order '{o}' must be dask.order, graphene or graphene-keys")
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
                plans: dict = {}
                plan_s: dict = {}
                for order in orders:
                    if order != "dask.order":
                        t = time.perf_counter()
                        plans[order] = gd.plan(*colls, client=client, stages="keys" if order == "graphene-keys" else "groups")
                        plan_s[order] = time.perf_counter() - t
                ms: dict = {o: [] for o in orders}
                mem: dict = {o: [] for o in orders}
                for r in range(a.reps):
                    # A, B, C, then C, B, A: each order runs first as often as last.
                    for order in (orders if r % 2 == 0 else orders[::-1]):
                        sampler = MemorySampler()
                        secs, out = run(client, colls, plans.get(order), sampler, order)
                        assert _same(out, want), (name, order)
                        ms[order].append(secs)
                        mem[order].append(float(sampler.to_pandas().max().iloc[0]) / 2**20)
                n_tasks = len(gd.plan(*colls, client=client, improve=0).priorities)
                for order in orders:
                    m, s = statistics.mean(ms[order]), statistics.stdev(ms[order]) if a.reps > 1 else 0.0
                    mm, ss = statistics.mean(mem[order]), statistics.stdev(mem[order]) if a.reps > 1 else 0.0
                    planning = f"{plan_s[order]:.2f}" if order in plan_s else ""
                    print(f"| {name} | {n_tasks} | {order} | {m:.2f} +- {s:.2f} | {min(ms[order]):.2f}-{max(ms[order]):.2f} | "
                          f"{mm:.0f} +- {ss:.0f} | {planning} |", flush=True)
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
