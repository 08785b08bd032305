"""Trains a scheduling policy on graphene_sched.gym with sb3-contrib's MaskablePPO, then compares
it with a random agent and the built-in policies (the per-job fair share, Decima, ...) on
held-out job sequences: seeds no training episode used.

The setting is Decima's kind: 10 machines that each run one task, sequences of 10 TPC-H jobs
(2g-20g inputs, the shared data) arriving Poisson 25 s apart. The env is ClusterEnv through FlatMaskedEnv (a flat Box observation, Discrete stages at a fixed
parallelism limit, the mask of the candidate stages). The policy is MaskablePPO's actor-critic
with one change: the actor scores every node slot with the same small network (the node's
features, its job's, and the mean of all real nodes'), so a stage's score does not depend on
which slot it landed in, as Decima's per-node scores do; `--policy mlp` uses MaskablePPO's plain
MlpPolicy instead (one logit per slot from the whole vector).

Needs torch, stable-baselines3 and sb3-contrib beside the package:

    pip install torch sb3-contrib
    python examples/train_maskable_ppo.py --timesteps 61440 --out results/maskable-ppo

Writes OUT/summary.json (per held-out seed: every policy's mean JCT; training steps and wall
time) and OUT/model.zip, and prints the table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from typing import Any, Dict, List, Optional, Tuple

import gymnasium
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.callbacks import BaseCallback
from torch import nn

import graphene_sched.gym as gg

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
TRAIN_SEED_BASE = 1_000_000  # training episodes use seeds 1_000_000, 1_000_001, ...
BASELINES = ["fair", "decima", "fifo", "tetris", "graphene"]


def make_env(a: argparse.Namespace) -> gg.ClusterEnv:
    shared = [os.path.join(ROOT, f"../shared/data/decima-tpch/json/tpch-{z}.json") for z in a.sizes.split(",")]
    dags = shared if all(map(os.path.exists, shared)) else [os.path.join(ROOT, "tests/data/tpch-2g-q6.json")]
    # One queue per job (spread_queues): drf over them is the per-job fair share ("fair" below).
    return gg.ClusterEnv(
        dags=dags, jobs=a.jobs, arrival=a.arrival, spread_queues=a.jobs, machines=a.machines, demands=a.demands,
        capacity=a.capacity, reward_scale=a.reward_scale,
    )


class TrainingSeeds(gymnasium.Wrapper):
    """Every reset draws the next training seed (TRAIN_SEED_BASE + k); records them."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        self.used: List[int] = []

    def reset(self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None) -> Tuple[Any, Dict[str, Any]]:
        s = TRAIN_SEED_BASE + len(self.used)
        self.used.append(s)
        return self.env.reset(seed=s, options=options)


# Counts, durations and work (node features 0, 1, 3 and the job's remaining work) on a log
# scale: jobs of 10 and of 100 task-seconds differ by 0.0009 in the raw features.
LOG_COLUMNS = [0, 1, 3, 9]


def squash(f: Any) -> Any:
    """(node, job) features with LOG_COLUMNS as log(1 + 1000 x); torch or numpy."""
    f = f.clone() if isinstance(f, torch.Tensor) else f.copy()
    f[..., LOG_COLUMNS] = (torch.log1p if isinstance(f, torch.Tensor) else np.log1p)(1000.0 * f[..., LOG_COLUMNS])
    return f


class NodeScorer(nn.Module):
    """MaskablePPO's mlp_extractor: the actor's latent is one score per node slot (the same
    network on each node), the critic's a pooled summary."""

    def __init__(self, layout: Dict[str, slice], n: int, k: int, mean: np.ndarray, std: np.ndarray, hidden: int = 64) -> None:
        super().__init__()
        self.layout, self.n, self.k = layout, n, k
        self.register_buffer("mean", torch.as_tensor(mean, dtype=torch.float32))
        self.register_buffer("std", torch.as_tensor(std, dtype=torch.float32))
        d = 8 + 2  # node features, its job's features
        self.embed = nn.Sequential(nn.Linear(d, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.score = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.critic = nn.Sequential(nn.Linear(hidden + 1, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.latent_dim_pi, self.latent_dim_vf = n, hidden

    def _parts(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        L, n, k = self.layout, self.n, self.k
        nodes = x[:, L["nodes"]].view(-1, n, 8)
        jobs = x[:, L["jobs"]].view(-1, k, 2)
        slot = torch.round(x[:, L["node_job"]] * k - 1).long().clamp(min=0)  # padding reads job 0
        job = torch.gather(jobs, 1, slot.unsqueeze(-1).expand(-1, -1, 2))
        feats = (squash(torch.cat([nodes, job], -1)) - self.mean) / self.std
        real = x[:, L["node_mask"]].unsqueeze(-1)
        h = self.embed(feats) * real
        pooled = h.sum(1) / real.sum(1).clamp(min=1.0)
        return h, pooled, real.sum(1)

    def forward_actor(self, x: torch.Tensor) -> torch.Tensor:
        h, pooled, _ = self._parts(x)
        return self.score(torch.cat([h, pooled.unsqueeze(1).expand(-1, self.n, -1)], -1)).squeeze(-1)

    def forward_critic(self, x: torch.Tensor) -> torch.Tensor:
        _, pooled, count = self._parts(x)
        return self.critic(torch.cat([pooled, torch.log1p(count)], -1))

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(x), self.forward_critic(x)


class NodeScorePolicy(MaskableActorCriticPolicy):
    """MaskableActorCriticPolicy whose action logits are NodeScorer's per-node scores."""

    def __init__(self, *args: Any, scorer: Dict[str, Any], **kwargs: Any) -> None:
        self._scorer = scorer
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = NodeScorer(**self._scorer)

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        self.action_net = nn.Identity()  # the scores are the logits
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)


class WallClock(BaseCallback):
    """Stops training once `limit` seconds have passed."""

    def __init__(self, limit: float) -> None:
        super().__init__()
        self.limit, self.t0 = limit, time.perf_counter()

    def _on_step(self) -> bool:
        return time.perf_counter() - self.t0 < self.limit


def feature_stats(env: gg.FlatMaskedEnv, seeds: List[int]) -> Tuple[np.ndarray, np.ndarray]:
    """Mean and spread of every node's (node, job) features over random-agent episodes."""
    rows = []
    env.action_space.seed(0)
    for s in seeds:
        x, info = env.reset(seed=s)
        while True:
            p = env.unflatten(x)
            real = p["node_mask"] > 0
            rows.append(np.concatenate([p["nodes"][real], p["jobs"][p["node_job"][real]]], 1))
            x, _, term, trunc, info = env.step(env.action_space.sample(mask=info["action_mask"]))
            if term or trunc:
                break
    data = squash(np.concatenate(rows))
    return data.mean(0), data.std(0) + 1e-6


def mean_jct(info: Dict[str, Any]) -> float:
    return float(info["mean_jct"])


def play(env: gg.FlatMaskedEnv, act: Any, seed: int) -> Dict[str, Any]:
    x, info = env.reset(seed=seed)
    while True:
        x, _, term, trunc, info = env.step(act(x, info))
        if term or trunc:
            return info


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timesteps", type=int, default=61_440, help="env steps (decisions) to train on")
    ap.add_argument("--jobs", type=int, default=10)
    ap.add_argument("--machines", type=int, default=10)
    ap.add_argument("--arrival", default="poisson:25")
    ap.add_argument("--sizes", default="2g,5g,10g,20g", help="TPC-H input sizes of the shared data to draw from")
    ap.add_argument("--demands", default="uniform", help="demand profile (uniform: cpu=1, mem=2 per task)")
    ap.add_argument("--capacity", default="cpu=1,mem=2,disk=1,net=1", help="machine capacity (one task per machine)")
    ap.add_argument("--reward-scale", type=float, default=0.01)
    ap.add_argument("--max-minutes", type=float, default=20.0, help="stop training after this wall time")
    ap.add_argument("--gamma", type=float, default=0.99)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--limit", type=int, default=19, help="parallelism limit level of every decision (19: none)")
    ap.add_argument("--policy", choices=["nodes", "mlp"], default="nodes")
    ap.add_argument("--held-out", type=int, default=20, help="evaluate on seeds 0..N-1")
    ap.add_argument("--seed", type=int, default=0, help="torch's and the random agent's seed")
    ap.add_argument("--threads", type=int, default=1, help="torch threads")
    ap.add_argument("--out", default="results/maskable-ppo")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    os.makedirs(a.out, exist_ok=True)
    held = list(range(a.held_out))

    train_env = TrainingSeeds(gg.FlatMaskedEnv(make_env(a), limit=a.limit))
    flat = train_env.env
    inner = flat.unwrapped
    kwargs: Dict[str, Any] = {}
    policy: Any = "MlpPolicy"
    if a.policy == "nodes":
        mean, std = feature_stats(gg.FlatMaskedEnv(make_env(a), limit=a.limit), [TRAIN_SEED_BASE - 1 - i for i in range(5)])
        policy = NodeScorePolicy
        kwargs = {"scorer": dict(layout=flat.layout, n=inner.max_nodes, k=inner.max_jobs, mean=mean, std=std)}
    model = MaskablePPO(
        policy, train_env, n_steps=2048, batch_size=256, n_epochs=5, gamma=a.gamma, gae_lambda=0.95, learning_rate=a.lr,
        ent_coef=0.01, seed=a.seed, policy_kwargs=kwargs, verbose=1, device="cpu",
    )
    t0 = time.perf_counter()
    model.learn(total_timesteps=a.timesteps, callback=WallClock(a.max_minutes * 60))
    train_s = time.perf_counter() - t0
    assert not set(train_env.used) & set(held), "a held-out seed was used in training"
    model.save(os.path.join(a.out, "model.zip"))

    # Held-out sequences: the same workload (seed) for every policy.
    env = gg.FlatMaskedEnv(make_env(a), limit=a.limit)
    env.action_space.seed(a.seed)
    rows: Dict[str, List[float]] = {k: [] for k in ["learned", "random"] + BASELINES}
    invalid = 0
    for s in held:
        info = play(env, lambda x, i: int(model.predict(x, action_masks=env.action_masks(), deterministic=True)[0]), s)
        invalid += info["invalid_actions"]
        rows["learned"].append(mean_jct(info))
        rows["random"].append(mean_jct(play(env, lambda x, i: env.action_space.sample(mask=i["action_mask"]), s)))
        env.reset(seed=s)
        for b in BASELINES:
            rows[b].append(float(np.mean(env.unwrapped.baseline("drf" if b == "fair" else b))))

    print(f"\ntrained on {model.num_timesteps} steps ({len(train_env.used)} episodes) in {train_s:.0f} s; held-out seeds {held[0]}..{held[-1]}")
    print("mean JCT (s) per held-out seed:")
    print(f"{'seed':>5} " + " ".join(f"{k:>9}" for k in rows))
    for i, s in enumerate(held):
        print(f"{s:>5} " + " ".join(f"{v[i]:9.2f}" for v in rows.values()))
    print(f"\n{'policy':<10} {'mean':>8} {'min':>8} {'median':>8} {'max':>8}  seeds where it is below learned")
    for k, v in rows.items():
        w = sum(x < y for x, y in zip(v, rows["learned"]))
        print(f"{k:<10} {np.mean(v):8.2f} {np.min(v):8.2f} {np.median(v):8.2f} {np.max(v):8.2f}  {w}/{len(v)}")
    summary = {
        "command": "python examples/train_maskable_ppo.py " + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in vars(a).items()),
        "setting": {k: getattr(a, k) for k in ["sizes", "jobs", "machines", "capacity", "arrival", "demands", "limit", "policy"]},
        "train_steps": int(model.num_timesteps),
        "train_episodes": len(train_env.used),
        "train_wall_s": round(train_s, 1),
        "train_seeds": [train_env.used[0], train_env.used[-1]],
        "held_out_seeds": held,
        "learned_invalid_actions": int(invalid),
        "mean_jct": rows,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, torch threads {a.threads}",
    }
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
