"""Trains a small policy against graphene_sched.gym with plain numpy (REINFORCE with a per-step
baseline) for a few iterations, then shows its mean JCT next to the built-in policies on the
same held-out workloads.

The policy scores each candidate stage with a linear function of its 8 features (Decima's
node features) and picks by softmax; the limit is unlimited. It is deliberately tiny: the point
is the loop (reset with a seed, observe, act, reward = minus job-seconds) and how fast the
Rust simulator turns it.

    pip install ./python && python examples/train_gym_policy.py --iterations 20
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import graphene_sched.gym as gg

HERE = os.path.dirname(os.path.abspath(__file__))


def softmax(x: np.ndarray) -> np.ndarray:
    z = np.exp(x - x.max())
    return z / z.sum()


def episode(env: gg.ClusterEnv, w: np.ndarray, seed: int, rng: np.random.Generator, greedy: bool):
    obs, info = env.reset(seed=seed)
    grads, rewards = [], []
    while True:
        cand = np.flatnonzero(obs["action_mask"])
        x = obs["nodes"][cand].astype(np.float64)
        p = softmax(x @ w)
        i = int(np.argmax(p)) if greedy else int(rng.choice(len(cand), p=p))
        grads.append(x[i] - p @ x)  # d log p_i / d w
        obs, r, term, trunc, info = env.step({"stage": int(cand[i]), "limit": 19})
        rewards.append(r)
        if term or trunc:
            return np.array(grads), np.array(rewards), info


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--rollouts", type=int, default=4)
    ap.add_argument("--jobs", type=int, default=20)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    root = os.path.join(HERE, "..")
    dags = [os.path.join(root, "tests/data/tpch-2g-q6.json"), os.path.join(root, "traces/example.json")]
    shared = os.path.join(root, "../shared/data/decima-tpch/json/tpch-2g.json")
    if os.path.exists(shared):
        dags = [shared]
    env = gg.ClusterEnv(dags=dags, jobs=a.jobs, arrival="poisson:15", machines=4, demands="cpu-mem")
    rng = np.random.default_rng(a.seed)
    w = np.zeros(8)
    t0, steps = time.perf_counter(), 0
    for it in range(a.iterations):
        seed = int(rng.integers(1 << 31))
        runs = [episode(env, w, seed, rng, greedy=False) for _ in range(a.rollouts)]
        steps += sum(len(r[1]) for r in runs)
        # Reward-to-go, baseline = mean over rollouts at the same step index.
        rtg = [np.cumsum(r[1][::-1])[::-1] for r in runs]
        n = max(len(x) for x in rtg)
        base = np.array([np.mean([x[k] for x in rtg if k < len(x)]) for k in range(n)])
        adv = [x - base[: len(x)] for x in rtg]
        scale = np.std(np.concatenate(adv)) + 1e-9
        g = sum((r[0] * (ad / scale)[:, None]).sum(0) for r, ad in zip(runs, adv)) / sum(len(x) for x in adv)
        w += a.lr * g
        jct = np.mean([r[2]["mean_jct"] for r in runs])
        print(f"iter {it:3d}  mean JCT {jct:8.2f} s  weights {np.round(w, 3)}", flush=True)
    dt = time.perf_counter() - t0
    print(f"trained on {steps} env steps in {dt:.1f} s ({steps / dt:.0f} steps/s)")
    # Held-out workloads: the learned policy (greedy) and the built-in ones, same episodes.
    print(f"\n{'policy':<12} mean JCT over 5 held-out workloads")
    held = [10_000 + k for k in range(5)]
    learned = [episode(env, w, s, rng, greedy=True)[2]["mean_jct"] for s in held]
    print(f"{'learned':<12} {np.mean(learned):8.2f} s")
    for name in ["graphene", "tetris", "cs", "fifo", "decima"]:
        jcts = []
        for s in held:
            env.reset(seed=s)
            jcts.append(np.mean(env.baseline(name)))
        print(f"{name:<12} {np.mean(jcts):8.2f} s")


if __name__ == "__main__":
    main()
