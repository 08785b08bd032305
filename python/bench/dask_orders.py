"""Realized makespan on a real Dask LocalCluster (4 workers of cpu=16, mem=64 declared as Dask
resources) of TPC-H DAGs under graphene's order, Dask's default (no priorities: first come)
and the critical-path order, each run `--reps` times. Durations are scaled so that the best
lower bound lasts `--target` wall seconds; makespans are reported in the DAG's seconds.

    python python/bench/dask_orders.py --reps 3
"""

from __future__ import annotations

import argparse
import os
import statistics

import graphene_sched
import graphene_sched.dask as gd

CAP = {"cpu": 16, "mem": 64, "disk": 200, "net": 1250}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--target", type=float, default=2.0)
    p.add_argument("--queries", default="1,3,14,17,19")
    p.add_argument("--shared", default=os.path.join(os.path.dirname(__file__), "../../../shared/data"))
    a = p.parse_args()
    path = os.path.join(os.path.abspath(a.shared), "decima-tpch/json/tpch-2g.json")
    from distributed import Client

    cluster = gd.local_cluster(graphene_sched.Cluster.uniform(4, CAP), ["cpu", "mem"])
    client = Client(cluster)
    print("| query | tasks | lower bound | order | makespans | mean | spread (max-min) |")
    print("|---|---|---|---|---|---|---|")
    try:
        for q in [int(x) for x in a.queries.split(",")]:
            kw = dict(query=q, machines=4, capacity=CAP)
            lb = graphene_sched.lower_bound(path, **kw).best
            scale = a.target / lb
            for name, sched in [("graphene", "graphene"), ("dask default", False), ("cp", "cp")]:
                ms = []
                for _ in range(a.reps):
                    e = gd.execute(path, schedule=sched, client=client, time_scale=scale, **kw)
                    assert e.validation.startswith("valid"), e.validation
                    ms.append(e.makespan)
                print(
                    f"| q{q} | {len(e.tasks)} | {lb:.1f} | {name} | {', '.join(f'{m:.1f}' for m in ms)} | "
                    f"{statistics.mean(ms):.1f} | {max(ms) - min(ms):.1f} |",
                    flush=True,
                )
    finally:
        client.close()
        cluster.close()


if __name__ == "__main__":
    main()
