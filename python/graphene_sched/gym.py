"""A Gymnasium environment over graphene's cluster simulator, with Decima's action, observation
and reward (Mao et al., SIGCOMM'19). The simulator and the decision rule live in Rust
(``graphene::env``); this module only shapes arrays.

Action
    ``{"stage": i, "limit": k}``: node ``i`` of the observation (an unfinished stage; it must be
    a candidate, ``obs["action_mask"][i] == 1``, otherwise the first candidate is taken and
    ``info["invalid_actions"]`` counts it) and limit level ``k`` in 0..19: the job may hold
    up to (k + 1) / 20 of the cluster (dominant share), 19 is unlimited. Tasks of the stage
    start lowest id first while they fit the machine and the job is under its limit (at least
    one); the stage keeps the job's freed resources later, as Decima's executors do. An
    action outside the action space (a stage past ``max_nodes - 1``, a limit past 19, a
    negative or non-integer value) raises :class:`graphene_sched.UsageError` naming it.

Observation (padded to fixed bounds; masks say what is real)
    ``nodes`` (max_nodes, 8) per-stage features (tasks left, mean duration, running, remaining
    work, runnable, fits the machine, demand share of the machine, job share), ``node_mask``,
    ``action_mask`` (candidates; also ``info["action_mask"]`` as Gymnasium's per-sub-space masks,
    ``{"stage": ..., "limit": ...}``, so ``env.action_space.sample(mask=info["action_mask"])``
    draws a valid action), ``node_job`` (job slot of each node, -1 padding), ``edges``
    (max_edges, 2) parent/child node pairs (-1 padding), ``jobs`` (max_jobs, 2) per-job
    features (dominant share of the cluster, remaining work), ``job_mask``.

Reward
    Minus the job-seconds spent in the system since the previous decision (times
    ``reward_scale``): an episode's rewards add up to minus the sum of JCTs.

Flat spaces
    :class:`FlatMaskedEnv` gives the same env a flat ``Box`` observation, a ``Discrete`` or
    ``MultiDiscrete`` action and a flat action mask, for libraries such as sb3-contrib's
    ``MaskablePPO``.

Determinism
    ``reset(seed=s)`` draws the same workload (for generated ones) and the same episode, and the
    same actions give the same observations and rewards, byte for byte.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

try:
    import gymnasium
    import numpy as np
    from gymnasium import spaces
except ImportError as e:
    from . import _missing_extra

    raise _missing_extra("graphene_sched.gym", "gymnasium and numpy", "gym", e) from e

from . import PathLike, _index, _tname, _core, _number, _opts, _src, _srcs

__all__ = ["ClusterEnv", "FlatMaskedEnv", "make_vec", "reference_agent", "run_agent"]


# Job colours of render(): Tableau's ten.
_PALETTE = np.array(
    [[31, 119, 180], [255, 127, 14], [44, 160, 44], [214, 39, 40], [148, 103, 189],
     [140, 86, 75], [227, 119, 194], [127, 127, 127], [188, 189, 34], [23, 190, 207]],
    np.uint8,
)


class ClusterEnv(gymnasium.Env):
    """``ClusterEnv(trace)`` replays one trace every episode; ``ClusterEnv(dags=[...], jobs=50,
    arrival="poisson:10", load=0.8)`` draws a workload per episode from the seed of
    ``reset``. ``cluster`` and keyword options are :func:`graphene_sched.replay`'s. ``reference``
    names a built-in online policy whose action at each decision is reported in
    ``info["reference_action"]`` (see :func:`reference_agent`). ``time_limit`` ends episodes at
    that simulated time (truncated). ``spread_queues=K`` puts each workload's jobs round-robin
    on K queues (``drf`` with one queue per job is the per-job fair share). With a trace, ``waves`` (the ``gen-trace --waves-out``
    sidecar) and ``moving_delay`` run spark-sched-sim's wave-dependent durations, drawn with the
    seed of ``reset`` (``baseline`` draws with the replay seed, 0); drawn workloads refuse them.
    ``sticky=True`` (``replay --sticky``) keeps every machine on the job of its last task while
    that job has runnable work, without a decision, as spark-sched-sim's executors continue
    their stage; the agent then places only the other machines (the reference and ``baseline``
    policies run under the same rule). ``render_mode="rgb_array"`` makes :meth:`render` return
    the episode's Gantt chart so far; :meth:`spans` gives its data."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(
        self,
        trace: Any = None,
        cluster: Any = None,
        *,
        dags: Optional[Sequence[Any]] = None,
        jobs: int = 50,
        arrival: str = "poisson:10",
        queues: int = 1,
        load: Optional[float] = None,
        time_limit: Optional[float] = None,
        reference: Optional[str] = None,
        reward_scale: float = 1.0,
        max_nodes: Optional[int] = None,
        max_edges: Optional[int] = None,
        seed: int = 0,
        waves: Optional[PathLike] = None,
        moving_delay: Optional[float] = None,
        render_mode: Optional[str] = None,
        **opts: Any,
    ) -> None:
        super().__init__()
        if render_mode not in (None, "rgb_array"):
            raise _core.UsageError(f"render_mode '{render_mode}' must be 'rgb_array' or None")
        self.render_mode = render_mode
        if waves is not None:
            opts["waves"] = waves
        if moving_delay is not None:
            opts["moving_delay"] = moving_delay
        o = _opts(cluster, opts)
        bound = {k: None if v is None else _index(k, v, 1) for k, v in (("max_nodes", max_nodes), ("max_edges", max_edges))}
        self.reward_scale = _number("reward_scale", reward_scale)
        self.default_seed = _index("seed", seed)
        self._env = _core.Env(
            None if trace is None else _src(trace, "trace"),
            None if dags is None else _srcs(dags, "dags"),
            jobs,
            arrival,
            queues,
            load,
            time_limit,
            reference,
            o,
        )
        n, e, j = self._env.bounds()
        self.max_nodes = bound["max_nodes"] or max(1, n)
        self.max_edges = bound["max_edges"] or max(1, e)
        self.max_jobs = max(1, j)
        self.reference = reference
        F, J = _core.Env.node_features, _core.Env.job_features
        self.observation_space = spaces.Dict(
            {
                "nodes": spaces.Box(0.0, np.finfo(np.float32).max, (self.max_nodes, F), np.float32),
                "node_mask": spaces.MultiBinary(self.max_nodes),
                "action_mask": spaces.MultiBinary(self.max_nodes),
                "node_job": spaces.Box(-1, self.max_jobs - 1, (self.max_nodes,), np.int64),
                "edges": spaces.Box(-1, self.max_nodes - 1, (self.max_edges, 2), np.int64),
                "jobs": spaces.Box(0.0, np.finfo(np.float32).max, (self.max_jobs, J), np.float32),
                "job_mask": spaces.MultiBinary(self.max_jobs),
            }
        )
        self.action_space = spaces.Dict(
            {"stage": spaces.Discrete(self.max_nodes), "limit": spaces.Discrete(_core.Env.limit_levels)}
        )
        self._last: Optional[Dict[str, Any]] = None
        self._resets = 0
        self._invalid = 0
        # (job, task) -> [machine, start, end (NaN while running)], for spans() and render().
        self._spans: Dict[Tuple[int, int], List[Any]] = {}
        self._now = 0.0

    # -----------------------------------------------------------------------------------------

    def _obs(self, d: Dict[str, Any]) -> Dict[str, np.ndarray]:
        F, J = _core.Env.node_features, _core.Env.job_features
        nodes = np.zeros((self.max_nodes, F), np.float32)
        node_mask = np.zeros(self.max_nodes, np.int8)
        action_mask = np.zeros(self.max_nodes, np.int8)
        node_job = np.full(self.max_nodes, -1, np.int64)
        edges = np.full((self.max_edges, 2), -1, np.int64)
        jobs = np.zeros((self.max_jobs, J), np.float32)
        job_mask = np.zeros(self.max_jobs, np.int8)
        if not d["done"]:
            n, m, k = d["n_nodes"], d["n_edges"], d["n_jobs"]
            if n > self.max_nodes or m > self.max_edges or k > self.max_jobs:
                raise _core.UsageError(
                    f"the observation has {n} nodes, {m} edges and {k} jobs, over the bounds "
                    f"({self.max_nodes}, {self.max_edges}, {self.max_jobs}); raise max_nodes / max_edges"
                )
            nodes[:n] = np.frombuffer(d["nodes"], np.float32).reshape(n, F)
            node_mask[:n] = 1
            action_mask[d["candidates"]] = 1
            node_job[:n] = np.frombuffer(d["node_job"], np.int64)
            edges[:m] = np.frombuffer(d["edges"], np.int64).reshape(m, 2)
            jobs[:k] = np.frombuffer(d["jobs"], np.float32).reshape(k, J)
            job_mask[:k] = 1
        return {
            "nodes": nodes,
            "node_mask": node_mask,
            "action_mask": action_mask,
            "node_job": node_job,
            "edges": edges,
            "jobs": jobs,
            "job_mask": job_mask,
        }

    def _info(self, d: Dict[str, Any], obs: Dict[str, np.ndarray]) -> Dict[str, Any]:
        # Gymnasium's masking convention for a Dict action space: one mask per sub-space, so
        # that env.action_space.sample(mask=info["action_mask"]) draws only valid actions.
        info: Dict[str, Any] = {
            "time": d["time"],
            "action_mask": {"stage": obs["action_mask"].copy(), "limit": np.ones(_core.Env.limit_levels, np.int8)},
        }
        if d["done"]:
            self._invalid = d["invalid_actions"]
            info.update(
                jct=list(d["jct"]),
                makespan=d["makespan"],
                complete=d["complete"],
                invalid_actions=d["invalid_actions"],
                tasks=d["tasks"],
            )
            done = [x for x in d["jct"] if x == x]
            info["mean_jct"] = float(np.mean(done)) if done else float("nan")
        else:
            info.update(
                machine=d["machine"],
                in_system=d["in_system"],
                done_jobs=d["done_jobs"],
                candidates=list(d["candidates"]),
                stage_ids=[tuple(p) for p in np.frombuffer(d["stage_ids"], np.int64).reshape(-1, 2).tolist()],
            )
            if d["reference"] is not None:
                node, level = d["reference"]
                info["reference_action"] = {"stage": int(node), "limit": int(level)}
        return info

    # -----------------------------------------------------------------------------------------

    def reset(self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None) -> Tuple[Dict[str, np.ndarray], Dict[str, Any]]:
        """Starts an episode: the same ``seed`` (0 to 2**64 - 1) gives the same workload and
        episode. Returns the first observation and info (``candidates``, ``machine``, ...)."""
        if seed is not None:
            seed = _index("seed", seed)
        super().reset(seed=seed)
        if seed is None:
            # The first reset uses the constructor's seed; later ones draw from the env's RNG,
            # itself seeded by the last explicit seed: every episode follows from the seeds.
            s = self.default_seed if self._resets == 0 else int(self.np_random.integers(0, 2**63 - 1))
        else:
            s = seed
        self._resets += 1
        d = self._env.reset(s)
        self._last = d
        self._spans, self._now = {}, 0.0
        self._record(d)
        obs = self._obs(d)
        return obs, self._info(d, obs)

    def step(self, action: Any) -> Tuple[Dict[str, np.ndarray], float, bool, bool, Dict[str, Any]]:
        """Applies ``{"stage": i, "limit": k}`` (or the pair ``(i, k)``) and runs to the next
        decision: (observation, reward, terminated, truncated, info)."""
        if self._last is None:
            raise _core.UsageError("call reset() before step()")
        if self._last["done"]:
            # The episode ended before any decision (nothing ever needed one).
            d = self._last
        else:
            node, level = self._action(action)
            d = self._env.step(node, level)
            self._record(d)
        self._last = d
        reward = -float(d["job_seconds"]) * self.reward_scale
        terminated = bool(d["done"] and d.get("complete", False))
        truncated = bool(d["done"] and not d.get("complete", False))
        obs = self._obs(d)
        return obs, reward, terminated, truncated, self._info(d, obs)

    def _record(self, d: Dict[str, Any]) -> None:
        """Folds a step's launches and ends (or, at the end, every run) into the spans."""
        self._now = float(d["time"])
        rows = lambda key: np.frombuffer(d[key], np.float64).reshape(-1, 5).tolist()  # noqa: E731
        if d["done"]:
            for j, t, m, s, e in rows("runs"):
                self._spans[(int(j), int(t))] = [int(m), s, e]
            return
        for j, t, m, s, _ in rows("started"):
            self._spans[(int(j), int(t))] = [int(m), s, float("nan")]
        for j, t, _, _, e in rows("ended"):
            if (int(j), int(t)) in self._spans:
                self._spans[(int(j), int(t))][2] = e

    def spans(self) -> List[Tuple[int, int, int, float, float]]:
        """The tasks launched so far this episode as (job, task, machine, start, end), sorted by
        start then job and task; ``end`` is NaN for a task still running. What :meth:`render`
        draws."""
        out = [(j, t, m, s, e) for (j, t), (m, s, e) in self._spans.items()]
        return sorted(out, key=lambda r: (r[3], r[0], r[1]))

    def render(self) -> Optional[np.ndarray]:
        """With ``render_mode="rgb_array"``: the episode so far as an RGB Gantt chart, a
        ``(height, 640, 3)`` uint8 array. One row per machine (top: machine 0), time from 0 at
        the left to now at the right, each task a bar in its job's colour (ten colours, by job
        number); tasks that overlap on a machine are stacked in lanes within its row. Without a
        render mode it returns None, as Gymnasium's envs do."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without render_mode: make the env with render_mode='rgb_array'")
            return None
        width, machines = 640, max(1, self.machines)
        row = max(6, min(40, 480 // machines))
        img = np.full((machines * row, width, 3), 255, np.uint8)
        img[::row, :] = 200
        spans = self.spans()
        horizon = max([self._now] + [e for *_, e in spans if e == e])
        if horizon <= 0 or not spans:
            return img
        scale = (width - 1) / horizon
        lanes: Dict[int, List[float]] = {}
        placed = []
        for j, _, m, s, e in spans:
            end = horizon if e != e else e
            ends = lanes.setdefault(m, [])
            lane = next((i for i, x in enumerate(ends) if x <= s), len(ends))
            if lane == len(ends):
                ends.append(end)
            else:
                ends[lane] = end
            placed.append((j, m, lane, s, end))
        for j, m, lane, s, end in placed:
            if not 0 <= m < machines:
                continue
            h = max(1, (row - 1) // len(lanes[m]))
            y0 = m * row + 1 + lane * h
            x0 = int(s * scale)
            x1 = max(x0 + 1, int(end * scale))
            img[y0 : y0 + h, x0:x1] = _PALETTE[j % len(_PALETTE)]
        return img

    def _action(self, action: Any) -> Tuple[int, int]:
        """An action in the action space as (node, level); anything else raises UsageError."""
        if isinstance(action, Mapping):
            if "stage" not in action or "limit" not in action:
                raise _core.UsageError(f"action: expected {{'stage': i, 'limit': k}}, got the keys {sorted(map(str, action))}")
            stage, limit = action["stage"], action["limit"]
        else:
            try:
                stage, limit = action
            except (TypeError, ValueError):
                raise _core.UsageError(f"action: expected {{'stage': i, 'limit': k}} or a pair, not {_tname(action)}") from None
        levels = _core.Env.limit_levels
        return (
            _index("action['stage']", stage, 0, self.max_nodes - 1),
            _index("action['limit']", limit, 0, levels - 1),
        )

    # -----------------------------------------------------------------------------------------

    def baseline(self, scheduler: str) -> List[float]:
        """Per-job JCTs of a built-in online policy replaying this episode's workload (the same
        simulator, run through by the policy itself)."""
        return list(self._env.baseline(scheduler))

    def workload(self) -> Any:
        """This episode's workload as a :class:`graphene_sched.Trace`."""
        from . import Trace  # noqa: PLC0415

        return Trace(self._env.workload_csv(), "episode")

    @property
    def machines(self) -> int:
        """The cluster's machine count."""
        return int(self._env.machines)



class FlatMaskedEnv(gymnasium.Wrapper):
    """:class:`ClusterEnv` with the spaces a library such as sb3-contrib's ``MaskablePPO`` takes:
    a flat ``Box`` observation, a ``Discrete`` or ``MultiDiscrete`` action and a flat action mask.

    Action
        ``limit=None``: ``MultiDiscrete([max_nodes, 20])``, ``[stage, limit level]`` as in
        :class:`ClusterEnv`. ``limit=k`` (0..19, 19 is unlimited): ``Discrete(max_nodes)``, the
        stage only, every decision at that limit level.

    Mask
        :meth:`action_masks` (the method ``MaskablePPO`` calls) returns a flat bool array: the
        candidate stages (``max_nodes``), followed for ``MultiDiscrete`` by 20 ``True`` for the
        limit levels (every level is valid for a candidate stage), so that every action the
        mask allows is a valid one and every other is not. ``info["action_mask"]`` holds the
        same in Gymnasium's convention (an int8 array for ``Discrete``, a tuple of one per
        dimension for ``MultiDiscrete``): ``env.action_space.sample(mask=info["action_mask"])``
        draws a valid action. When no decision is pending (an episode that ended at reset),
        stage 0 is marked so that the mask is never empty; stepping ends the episode.

    Observation
        One ``float32`` vector, the parts of :class:`ClusterEnv`'s observation one after the
        other, at the slices of :attr:`layout`: ``nodes`` (``max_nodes * 8``, row by row),
        ``node_mask``, ``action_mask`` (``max_nodes`` each, 0 or 1), ``node_job``
        (``max_nodes``: ``(job slot + 1) / max_jobs``, 0 for padding), ``jobs`` (``max_jobs *
        2``) and ``job_mask`` (``max_jobs``). ``edges`` is left out (a flat vector cannot use a
        graph's structure; use :class:`ClusterEnv` for a graph network). :meth:`unflatten`
        turns a vector back into the parts.
    """

    def __init__(self, env: ClusterEnv, limit: Optional[int] = None) -> None:
        if not isinstance(env, ClusterEnv):
            raise _core.UsageError(f"env: expected a graphene_sched.gym.ClusterEnv, not {_tname(env)}")
        super().__init__(env)
        self._inner: ClusterEnv = env
        levels = _core.Env.limit_levels
        self.limit = None if limit is None else _index("limit", limit, 0, levels - 1)
        n, k = env.max_nodes, env.max_jobs
        F, J = _core.Env.node_features, _core.Env.job_features
        sizes = [("nodes", n * F), ("node_mask", n), ("action_mask", n), ("node_job", n), ("jobs", k * J), ("job_mask", k)]
        self.layout: Dict[str, slice] = {}
        at = 0
        for name, size in sizes:
            self.layout[name] = slice(at, at + size)
            at += size
        self._shapes = {"nodes": (n, F), "jobs": (k, J)}
        self._size = at
        self.observation_space = spaces.Box(0.0, np.finfo(np.float32).max, (at,), np.float32)
        self.action_space = spaces.MultiDiscrete([n, levels]) if self.limit is None else spaces.Discrete(n)
        self._stages = np.zeros(n, bool)

    def _flat(self, obs: Dict[str, np.ndarray]) -> np.ndarray:
        x = np.zeros(self._size, np.float32)
        L = self.layout
        x[L["nodes"]] = obs["nodes"].reshape(-1)
        x[L["node_mask"]] = obs["node_mask"]
        x[L["action_mask"]] = obs["action_mask"]
        x[L["node_job"]] = (obs["node_job"] + 1) / self._inner.max_jobs
        x[L["jobs"]] = obs["jobs"].reshape(-1)
        x[L["job_mask"]] = obs["job_mask"]
        self._stages = obs["action_mask"].astype(bool)
        if not self._stages.any():
            self._stages[0] = True
        return x

    def _with_mask(self, info: Dict[str, Any]) -> Dict[str, Any]:
        stage = self._stages.astype(np.int8)
        if self.limit is None:
            info["action_mask"] = (stage, np.ones(_core.Env.limit_levels, np.int8))
        else:
            info["action_mask"] = stage
        return info

    def unflatten(self, x: np.ndarray) -> Dict[str, np.ndarray]:
        """A flat observation as its parts (``node_job`` back to job slots, -1 padding)."""
        x = np.asarray(x, np.float32)
        if x.shape != (self._size,):
            raise _core.UsageError(f"x: expected shape ({self._size},), not {x.shape}")
        out = {name: x[s].copy() for name, s in self.layout.items()}
        for name, shape in self._shapes.items():
            out[name] = out[name].reshape(shape)
        out["node_job"] = np.rint(out["node_job"] * self._inner.max_jobs - 1).astype(np.int64)
        return out

    def action_masks(self) -> np.ndarray:
        """The valid actions of the pending decision as one flat bool array (see the class)."""
        if self.limit is None:
            return np.concatenate([self._stages, np.ones(_core.Env.limit_levels, bool)])
        return self._stages.copy()

    def reset(self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None) -> Tuple[np.ndarray, Dict[str, Any]]:
        """:meth:`ClusterEnv.reset`, the observation flattened and the mask in ``info``."""
        obs, info = self.env.reset(seed=seed, options=options)
        return self._flat(obs), self._with_mask(info)

    def step(self, action: Any) -> Tuple[np.ndarray, float, bool, bool, Dict[str, Any]]:
        """Applies ``[stage, limit]`` (``MultiDiscrete``) or ``stage`` (``Discrete``) as
        :meth:`ClusterEnv.step` does; returns the flat observation and the mask in ``info``."""
        if self.limit is None:
            a = np.asarray(action)
            if a.shape != (2,):
                raise _core.UsageError(f"action: expected [stage, limit], not an array of shape {a.shape}")
            act = {"stage": a[0], "limit": a[1]}
        else:
            if isinstance(action, np.ndarray) and action.size == 1:
                action = action.reshape(-1)[0]
            act = {"stage": action, "limit": self.limit}
        obs, reward, terminated, truncated, info = self.env.step(act)
        return self._flat(obs), float(reward), terminated, truncated, self._with_mask(info)


def reference_agent(env: ClusterEnv) -> Callable[[Dict[str, np.ndarray], Dict[str, Any]], Dict[str, int]]:
    """The env's reference policy as an agent: ``agent(obs, info) -> action``. The env must be
    made with ``reference="graphene"`` (or tetris, decima, cs, ...)."""
    if not isinstance(env, ClusterEnv):
        raise _core.UsageError(f"env: expected a graphene_sched.gym.ClusterEnv, not {_tname(env)}")
    if env.reference is None:
        raise _core.UsageError("make the env with reference='<policy>' to use its actions")

    def act(obs: Dict[str, np.ndarray], info: Dict[str, Any]) -> Dict[str, int]:
        return info["reference_action"]

    return act


def run_agent(env: ClusterEnv, agent: Callable[[Dict[str, np.ndarray], Dict[str, Any]], Any], seed: Optional[int] = None) -> Dict[str, Any]:
    """Plays one episode; returns the total reward, the steps and the final info (JCTs)."""
    if not isinstance(env, ClusterEnv):
        raise _core.UsageError(f"env: expected a graphene_sched.gym.ClusterEnv, not {_tname(env)}")
    if not callable(agent):
        raise _core.UsageError(f"agent: expected a callable agent(obs, info) -> action, not {_tname(agent)}")
    obs, info = env.reset(seed=seed)
    total, steps = 0.0, 0
    while True:
        obs, r, term, trunc, info = env.step(agent(obs, info))
        total += r
        steps += 1
        if term or trunc:
            return {"reward": total, "steps": steps, **info}


def make_vec(num_envs: int, vectorization: str = "async", **kwargs: Any) -> Any:
    """``num_envs`` copies of :class:`ClusterEnv` (same arguments) as a Gymnasium vector env:
    ``"async"`` runs each in its own process (parallel rollouts), ``"sync"`` in this one."""
    fns = [lambda: ClusterEnv(**kwargs) for _ in range(_index("num_envs", num_envs, 1))]
    if vectorization == "async":
        return gymnasium.vector.AsyncVectorEnv(fns, context="spawn" if os.name == "nt" else None)
    if vectorization == "sync":
        return gymnasium.vector.SyncVectorEnv(fns)
    raise _core.UsageError(f"vectorization '{vectorization}' must be async or sync")


gymnasium.register(id="graphene/Cluster-v0", entry_point="graphene_sched.gym:ClusterEnv", disable_env_checker=True)
