"""Gym env steps per second: graphene_sched.gym vs spark-sched-sim on the same TPC-H workload shape
(10 executors, 50 jobs, Poisson arrivals with a 25 s mean gap, Decima's 22 TPC-H queries at
2g/5g/10g/20g). Both envs are driven by a fair-share agent (the first schedulable stage, with
a parallelism limit of the cluster / active jobs). spark-sched-sim is NOT part of this
repository: pass the directory of a checkout (with its data/tpch pointing at the .npy files of
../shared/data/decima-tpch/npy); its 50g-100g sizes are left out because the shared data set
does not have them.

    python python/bench/gym_steps.py --sss /tmp/sss --episodes 3
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time
import types

import numpy as np


def ours(episodes: int, shared: str) -> dict:
    import graphene_sched.gym as gg

    dags = sorted(glob.glob(os.path.join(shared, "decima-tpch/json/tpch-*.json")))
    env = gg.ClusterEnv(dags=dags, jobs=50, arrival="poisson:25", machines=10, capacity="cpu=1,mem=2,disk=1,net=1", demands="uniform")
    steps, secs, jcts = 0, 0.0, []
    for ep in range(episodes):
        t = time.perf_counter()
        obs, info = env.reset(seed=ep)
        n = 0
        while True:
            cand = np.flatnonzero(obs["action_mask"])
            active = max(1, int(obs["job_mask"].sum()))
            level = min(19, max(0, int(np.ceil(20 / active)) - 1))
            obs, r, term, trunc, info = env.step({"stage": int(cand[0]), "limit": level})
            n += 1
            if term or trunc:
                break
        secs += time.perf_counter() - t
        steps += n
        jcts.append(info["mean_jct"])
    return {"steps": steps, "seconds": secs, "steps_per_s": steps / secs, "mean_jct_s": float(np.mean(jcts))}


def sss(episodes: int, root: str) -> dict:
    os.chdir(root)
    sys.path.insert(0, root)
    # Import the heuristic schedulers without the package __init__ (which imports torch).
    pkg = types.ModuleType("schedulers")
    pkg.__path__ = [os.path.join(root, "schedulers")]
    sys.modules["schedulers"] = pkg
    if "torch" not in sys.modules:
        try:
            import torch  # noqa: F401
        except ImportError:
            # The heuristic schedulers name torch.Tensor in type hints only.
            stub = types.ModuleType("torch")
            stub.__path__ = []
            stub.Tensor = stub.device = object
            for sub, names in [("nn", ["Module"]), ("optim", ["Optimizer"])]:
                m = types.ModuleType(f"torch.{sub}")
                for n in names:
                    setattr(m, n, object)
                setattr(stub, sub, m)
                sys.modules[f"torch.{sub}"] = m
            stub.nn.utils = types.SimpleNamespace(clip_grad_norm_=None)
            sys.modules["torch"] = stub
    import gymnasium as gym
    import spark_sched_sim  # noqa: F401
    from spark_sched_sim.data_samplers import tpch
    from schedulers.heuristics.round_robin import RoundRobinScheduler

    tpch.QUERY_SIZES = ["2g", "5g", "10g", "20g"]
    cfg = {
        "num_executors": 10,
        "job_arrival_cap": 50,
        "job_arrival_rate": 4.0e-5,
        "moving_delay": 2000.0,
        "warmup_delay": 1000.0,
        "data_sampler_cls": "TPCHDataSampler",
    }
    env = gym.make("spark_sched_sim:SparkSchedSimEnv-v0", env_cfg=cfg)
    agent = RoundRobinScheduler(10, dynamic_partition=True)
    steps, secs, jcts = 0, 0.0, []
    for ep in range(episodes):
        t = time.perf_counter()
        obs, info = env.reset(seed=ep, options={"time_limit": np.inf})
        n = 0
        while True:
            action, _ = agent.schedule(obs)
            obs, r, term, trunc, info = env.step(action)
            n += 1
            if term or trunc:
                break
        secs += time.perf_counter() - t
        steps += n
        from spark_sched_sim import metrics

        jcts.append(metrics.avg_job_duration(env) / 1000)
    return {"steps": steps, "seconds": secs, "steps_per_s": steps / secs, "mean_jct_s": float(np.mean(jcts))}


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--sss", help="spark-sched-sim checkout (omit to measure graphene_sched.gym only)")
    p.add_argument("--episodes", type=int, default=3)
    p.add_argument("--shared", default=os.path.join(os.path.dirname(__file__), "../../../shared/data"))
    a = p.parse_args()
    shared = os.path.abspath(a.shared)
    g = ours(a.episodes, shared)
    print("graphene_sched.gym   ", g, flush=True)
    if a.sss:
        s = sss(a.episodes, os.path.abspath(a.sss))
        print("spark-sched-sim", s)
        print(f"ratio {g['steps_per_s'] / s['steps_per_s']:.1f}x")
