"""spark-sched-sim's pretrained Decima and fair scheduler on the job sequences of graphene traces.

Takes traces written by `graphene gen-trace --style spark-sched-sim --executors 10` and replays
each one's jobs in spark-sched-sim (ArchieGertsman/spark-sched-sim): the same TPC-H (query,
input size) per job, in the same order, at the same arrival times, on 10 executors, under its
pretrained Decima (`models/decima/model.pt`; greedy and sampled) and its fair scheduler
(`RoundRobinScheduler(dynamic_partition=True)`). Prints and writes the mean JCT per trace and
agent. BENCHMARKS.md, "spark-sched-sim's pretrained Decima on identical sequences".

Why this lives outside CI and imports rather than vendors: spark-sched-sim and the 50g-100g
TPC-H files are fetched from public repositories for the measurement only; neither is part of
this repository. Pass the checkout with --sss and the directory of Decima's npy files (one
sub-directory per size: 2g/ ... 100g/) with --npy.

How the sequence is carried over. A trace row is one stage (its task count, parents and the
mean task duration at --executors), not the query's name, so each job is identified by
matching those against every (query, size) in --npy, with the same key rule as graphene's
TPC-H reader (formats::tpch); a job must match exactly one. spark-sched-sim's sampler is then
patched at run time: `job_sequence` returns those jobs at the trace's arrival times, each built
by spark-sched-sim's own `_sample_job` with its query and size draws forced. Task durations are
still spark-sched-sim's (drawn per task by wave and executor count, with its moving and warm-up
delays); that is the point of running it beside ours. `--log-jobs` writes both sides' job lists.

The pieces of torch_scatter / torch_sparse that Decima's forward pass uses (segment_csr,
SparseTensor, matmul) are compiled extensions without wheels on PyPI; small pure-torch stand-ins
are installed at run time (sums over the same index sets; the unit check at start-up compares
them with dense arithmetic).

    python python/bench/sss_pretrained.py --sss /tmp/sss --npy /tmp/tpch-npy \\
        --agents decima-greedy,decima-sampled,fair --out /tmp/sss.csv TRACE.csv...
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import sys
import types
from collections import OrderedDict

import numpy as np

SIZES = ["2g", "5g", "10g", "20g", "50g", "80g", "100g"]
NUM_QUERIES = 22

ENV_CFG = {
    # examples.py's environment (the one its README runs the pretrained model in).
    "num_executors": 10,
    "job_arrival_cap": 50,
    "job_arrival_rate": 4.0e-5,
    "moving_delay": 2000.0,
    "warmup_delay": 1000.0,
    "data_sampler_cls": "TPCHDataSampler",
}


# --- the trace side -----------------------------------------------------------------------


def read_trace(path: str) -> list[dict]:
    """Jobs of a native trace in file order: name, arrival (s), stages [(name, tasks, duration, parents)]."""
    jobs: OrderedDict[str, dict] = OrderedDict()
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            j = jobs.setdefault(row["job"], {"job": row["job"], "arrival": float(row["arrival"]), "stages": []})
            parents = tuple(sorted(int(p[1:]) for p in row["parents"].split(";") if p)) if row["parents"] else ()
            j["stages"].append((int(row["stage"][1:]), int(row["tasks"]), float(row["duration"]), parents))
    out = list(jobs.values())
    for j in out:
        j["stages"].sort()
    return out


def stage_mean_ms(stage: dict, executors: int) -> float:
    """graphene's key rule (formats::tpch): largest key <= executors (else the smallest); samples
    first_wave[E] + rest_wave[E], else fresh_durations[E]; if empty, the other keys nearest first
    (the smaller on a tie). StageMean: their mean."""
    keys = sorted({int(k) for w in ("first_wave", "rest_wave", "fresh_durations") for k in stage[w]})
    below = [k for k in keys if k <= executors]
    e = below[-1] if below else keys[0]
    for k in sorted(keys, key=lambda k: (abs(k - e), k)):
        s = list(stage["first_wave"].get(k, [])) + list(stage["rest_wave"].get(k, []))
        if not s:
            s = list(stage["fresh_durations"].get(k, []))
        if s:
            return float(np.mean(np.asarray(s, dtype=float)))
    raise ValueError("stage without samples")


def catalogue(npy: str, executors: int) -> dict:
    """(size, query) -> [(stage, tasks, mean duration s, parents)] from Decima's npy files."""
    cat = {}
    for size in SIZES:
        d = os.path.join(npy, size)
        if not os.path.isdir(d):
            continue
        for q in range(1, NUM_QUERIES + 1):
            adj = np.load(os.path.join(d, f"adj_mat_{q}.npy"), allow_pickle=True)
            td = np.load(os.path.join(d, f"task_duration_{q}.npy"), allow_pickle=True).item()
            stages = []
            for s in range(adj.shape[0]):
                data = td[s]
                e0 = next(iter(data["first_wave"]))
                tasks = len(data["first_wave"][e0]) + len(data["rest_wave"][e0])
                parents = tuple(sorted(int(p) for p in np.flatnonzero(adj[:, s])))
                stages.append((s, tasks, stage_mean_ms(data, executors) / 1000.0, parents))
            cat[(size, q)] = stages
    return cat


def identify(job: dict, cat: dict) -> tuple[str, int]:
    """The one (size, query) whose stages equal the job's: task counts and parents exactly,
    durations to 1e-9 relative (the trace prints shortest round-trip floats)."""
    hits = []
    for key, stages in cat.items():
        if len(stages) != len(job["stages"]):
            continue
        if all(
            a[0] == b[0] and a[1] == b[1] and a[3] == b[3] and abs(a[2] - b[2]) <= 1e-9 * max(1.0, abs(b[2]))
            for a, b in zip(job["stages"], stages)
        ):
            hits.append(key)
    if len(hits) != 1:
        raise SystemExit(f"job {job['job']}: {len(hits)} (size, query) matches {hits}; is --npy the data the trace was drawn from?")
    return hits[0]


# --- the spark-sched-sim side -------------------------------------------------------------


def _install_torch_ext_standins() -> None:
    """Pure-torch stand-ins for the torch_scatter / torch_sparse calls Decima makes."""
    import torch
    import torch_geometric  # noqa: F401  (imported first so that it does not pick up the stand-ins)

    def segment_csr(src, indptr, reduce="sum"):
        assert reduce == "sum"
        counts = indptr[1:] - indptr[:-1]
        idx = torch.repeat_interleave(torch.arange(counts.numel()), counts)
        out = torch.zeros((counts.numel(),) + tuple(src.shape[1:]), dtype=src.dtype)
        return out.index_add_(0, idx, src)

    class SparseTensor:
        def __init__(self, row, col, sparse_sizes, **_):
            self.row, self.col, self.sizes = row, col, sparse_sizes

        def t(self):
            return SparseTensor(self.col, self.row, (self.sizes[1], self.sizes[0]))

    def matmul(a, x):
        out = torch.zeros((a.sizes[0],) + tuple(x.shape[1:]), dtype=x.dtype)
        return out.index_add_(0, a.row, x[a.col])

    ts = types.ModuleType("torch_scatter")
    ts.segment_csr = segment_csr
    sp = types.ModuleType("torch_sparse")
    sp.SparseTensor, sp.matmul = SparseTensor, matmul
    sys.modules.setdefault("torch_scatter", ts)
    sys.modules.setdefault("torch_sparse", sp)

    # Check against dense arithmetic once.
    g = torch.Generator().manual_seed(0)
    x = torch.randn(7, 3, generator=g)
    ptr = torch.tensor([0, 2, 2, 7])
    dense = torch.stack([x[0:2].sum(0), torch.zeros(3), x[2:7].sum(0)])
    assert torch.allclose(segment_csr(x, ptr), dense)
    row, col = torch.tensor([0, 0, 3, 5]), torch.tensor([1, 2, 4, 6])
    adj = torch.zeros(7, 7)
    adj[row, col] = 1
    assert torch.allclose(matmul(SparseTensor(row, col, (7, 7)), x), adj @ x)
    assert torch.allclose(matmul(SparseTensor(row, col, (7, 7)).t(), x), adj.t() @ x)


def load_sss(root: str, npy: str):
    sys.path.insert(0, root)
    _install_torch_ext_standins()
    import gymnasium as gym
    import spark_sched_sim  # noqa: F401
    from spark_sched_sim import metrics
    from spark_sched_sim.data_samplers import tpch

    # Read the npy files from --npy, never download (its sampler fetches a zip when data/tpch
    # is missing from the working directory).
    def load_query(cls, query_num, query_size):
        d = os.path.join(npy, str(query_size))
        adj = np.load(os.path.join(d, f"adj_mat_{query_num}.npy"), allow_pickle=True)
        td = np.load(os.path.join(d, f"task_duration_{query_num}.npy"), allow_pickle=True).item()
        assert adj.shape[0] == adj.shape[1] == len(td)
        return adj, td

    def no_download(cls):
        pass

    tpch.TPCHDataSampler._load_query = classmethod(load_query)
    tpch.TPCHDataSampler._download_tpch_dataset = classmethod(no_download)
    return gym, metrics, tpch


class _Forced:
    """Stands in for the sampler's numpy Generator during one `_sample_job` call: its query and
    size draws return the given ones (everything else goes to the real generator)."""

    def __init__(self, rng, query: int, size: str):
        self.rng, self.query, self.size = rng, query, size

    def integers(self, n, *a, **k):
        assert n == NUM_QUERIES and not a and not k
        return self.query - 1

    def choice(self, options, *a, **k):
        assert self.size in list(options) and not a and not k
        return self.size

    def __getattr__(self, name):
        return getattr(self.rng, name)


def patch_sequence(env, seq: list[tuple[float, str, int]]) -> None:
    """Make the env's sampler return `seq` ([(arrival ms, size, query)]) as its job sequence."""
    sampler = env.unwrapped.data_sampler

    def job_sequence(max_time):
        out = []
        real = sampler.np_random
        try:
            for i, (t, size, q) in enumerate(seq):
                sampler.np_random = _Forced(real, q, size)
                out.append((t, sampler._sample_job(i, t)))
        finally:
            sampler.np_random = real
        return out

    sampler.job_sequence = job_sequence


def sss_jobs(env) -> list[tuple]:
    """The env's jobs after reset: (id, arrival s, size, query, [(tasks, parents)])."""
    out = []
    for jid, job in sorted(env.unwrapped.jobs.items()):
        stages = [(s.num_tasks, tuple(sorted(int(p) for p in job.dag.predecessors(s.id_)))) for s in job.stages]
        out.append((jid, job.t_arrival / 1000.0, job.query_size, int(job.query_num), stages))
    return out


def make_agent(name: str, root: str):
    import schedulers
    from schedulers import RoundRobinScheduler, make_scheduler
    from schedulers.decima import utils as dutils
    from cfg_loader import load

    if name == "fair":
        return RoundRobinScheduler(ENV_CFG["num_executors"], dynamic_partition=True)
    import torch

    cfg = load(filename=os.path.join(root, "config", "decima_tpch.yaml"))
    agent_cfg = cfg["agent"] | {
        "num_executors": ENV_CFG["num_executors"],
        "state_dict_path": os.path.join(root, "models", "decima", "model.pt"),
    }
    agent = make_scheduler(agent_cfg)
    agent.eval()
    if not hasattr(dutils, "_sample_orig"):
        dutils._sample_orig = dutils.sample

    def greedy(logits):
        pi = torch.softmax(logits, 0).numpy()
        idx = int(np.argmax(pi))
        return idx, float(np.log(pi[idx]))

    # DecimaScheduler.schedule calls utils.sample for both of its choices; it always samples.
    # Greedy swaps in the argmax (the first on ties); sampled keeps its own function.
    agent._sample_fn = greedy if name == "decima-greedy" else dutils._sample_orig
    del schedulers
    return agent


def run_episode(gym, metrics, agent, seq, seed: int, trace_jobs=None):
    from schedulers.decima import utils as dutils

    env = gym.make("spark_sched_sim:SparkSchedSimEnv-v0", env_cfg=dict(ENV_CFG, job_arrival_cap=len(seq)))
    if agent.env_wrapper_cls:
        env = agent.env_wrapper_cls(env)
    patch_sequence(env, seq)
    if hasattr(agent, "_sample_fn"):
        dutils.sample = agent._sample_fn
    random.seed(seed)  # Decima's sampling draws from Python's random
    obs, _ = env.reset(seed=seed, options=None)
    jobs = sss_jobs(env)
    if trace_jobs is not None:
        check_same(trace_jobs, seq, jobs)
    steps = 0
    term = trunc = False
    while not (term or trunc):
        action, _ = agent.schedule(obs)
        obs, _, term, trunc, _ = env.step(action)
        steps += 1
    assert env.unwrapped.all_jobs_complete
    mean = float(metrics.avg_job_duration(env)) / 1000.0
    env.close()
    return mean, steps, jobs


def check_same(trace_jobs, seq, jobs) -> None:
    """Both sides' job lists agree: count, order, arrival, (size, query), stage task counts and parents."""
    assert len(jobs) == len(trace_jobs) == len(seq), (len(jobs), len(trace_jobs))
    for tj, (t, size, q), sj in zip(trace_jobs, seq, jobs):
        _, arr, ssize, sq, stages = sj
        assert abs(arr - tj["arrival"]) < 1e-9 and (ssize, sq) == (size, q), (tj["job"], sj[:4])
        assert stages == [(s[1], s[3]) for s in tj["stages"]], tj["job"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("traces", nargs="+", help="traces from `gen-trace --style spark-sched-sim --executors 10`")
    p.add_argument("--sss", required=True, help="spark-sched-sim checkout (not part of this repository)")
    p.add_argument("--npy", required=True, help="Decima TPC-H npy directory with one sub-directory per size")
    p.add_argument("--agents", default="decima-greedy,decima-sampled,fair")
    p.add_argument("--executors", type=int, default=10, help="the --executors the traces were written with")
    p.add_argument("--seed", type=int, default=1, help="env seed (task durations) and Decima's sampling seed")
    p.add_argument("--out", help="append rows (trace, agent, seed, mean_jct_s, steps) to this CSV")
    p.add_argument("--log-jobs", help="write both sides' job lists of the first trace here")
    a = p.parse_args()

    import torch

    torch.set_num_threads(1)
    root, npy = os.path.abspath(a.sss), os.path.abspath(a.npy)
    cat = catalogue(npy, a.executors)
    gym, metrics, _ = load_sss(root, npy)
    agents = {n: make_agent(n, root) for n in a.agents.split(",")}

    rows = []
    for ti, path in enumerate(a.traces):
        tjobs = read_trace(path)
        seq = []
        for j in tjobs:
            size, q = identify(j, cat)
            seq.append((round(j["arrival"] * 1000.0, 6), size, q))
        logged = False
        for name, agent in agents.items():
            mean, steps, jobs = run_episode(gym, metrics, agent, seq, a.seed, trace_jobs=tjobs)
            if a.log_jobs and ti == 0 and not logged:
                with open(a.log_jobs, "w") as f:
                    f.write(f"# {path}\n# trace: job, arrival s, stages, tasks, (size, query) identified"
                            " || spark-sched-sim after reset: job, arrival s, (size, query), stages, tasks\n")
                    for tj, (t, size, q), sj in zip(tjobs, seq, jobs):
                        f.write(f"{tj['job']} {tj['arrival']:.3f} {len(tj['stages'])} {sum(s[1] for s in tj['stages'])} {size} q{q}"
                                f" || {sj[0]} {sj[1]:.3f} {sj[2]} q{sj[3]} {len(sj[4])} {sum(s[0] for s in sj[4])}\n")
                logged = True
            row = {"trace": os.path.basename(path), "agent": name, "seed": a.seed, "mean_jct_s": round(mean, 4), "steps": steps}
            rows.append(row)
            print(f"{row['trace']}\t{name}\t{mean:.2f} s\t{steps} steps", flush=True)
            if a.out:
                new = not os.path.exists(a.out)
                with open(a.out, "a", newline="") as f:
                    w = csv.DictWriter(f, fieldnames=list(row))
                    if new:
                        w.writeheader()
                    w.writerow(row)

    print("\n| trace | " + " | ".join(agents) + " |")
    print("|---|" + "---|" * len(agents))
    for path in a.traces:
        b = os.path.basename(path)
        vals = {r["agent"]: r["mean_jct_s"] for r in rows if r["trace"] == b}
        print(f"| {b} | " + " | ".join(f"{vals[n]:.2f}" for n in agents) + " |")


if __name__ == "__main__":
    main()
