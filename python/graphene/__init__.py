"""graphene from Python: Graphene's DAG schedules (OSDI'16), lower bounds, the validator, the
offline comparison, workload traces and the cluster simulator, with the CLI's bytes and messages.

Inputs
    A DAG is a file path (graphene JSON, WfCommons, Decima TPC-H, task graph and network), a
    dict in any of those formats, or a :class:`Dag`. A cluster is a path, a dict in the cluster
    file's layout, a :class:`Cluster`, or None (then ``machines=`` and ``capacity=`` apply, by
    default 10 machines of cpu=16, mem=64, disk=200, net=1250). A trace is a path or a
    :class:`Trace`.

Options
    Keyword options are the CLI's flags with underscores: ``seed``, ``format``, ``query``,
    ``executors``, ``demands``, ``machines``, ``capacity`` (a dict or ``"cpu=16,mem=64"``),
    ``no_overbook``, ``speeds``, ``bandwidth``, ``grid_step``, ``max_trouble``, ``no_cuts``,
    ``placement``, ``threads``, ``no_timing``; replays add ``kappa``, ``tetris_kappa``, ``tetris_overbook_limit``, ``tetris_srpt_scale``, ``cs_accounting``, ``cs_user_limit_factor``, ``cs_am``, ``cs_assignments_per_heartbeat``, ``cs_reservations``, ``cs_tez_order``, ``periodic_heartbeats``, ``sticky``, ``container_overhead``, ``online_rules``, ``srpt_term``, ``eta``, ``rp``,
    ``overbook_limit``, ``fairness``, ``charge``, ``queues``, ``heartbeat``, ``misestimate``,
    ``misestimate_what``, ``spread_queues``, ``trace_format``, ``decima_model``, ``waves`` (a
    path: the ``gen-trace --waves-out`` sidecar, for spark-sched-sim's wave- and
    parallelism-dependent durations) and ``moving_delay`` (seconds, with ``waves``). An unknown
    option raises :class:`UsageError`.

Errors
    Every error is a :class:`GrapheneError` subclass whose message is the CLI's (without the
    ``error:`` prefix).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from . import _native
from ._native import (
    CycleError,
    FieldError,
    GrapheneError,
    GrapheneIOError,
    InternalError,
    InvalidScheduleError,
    ParseError,
    TaskTooBigError,
    TimedOutError,
    TooLargeError,
    UsageError,
)

__all__ = [
    "build_schedule",
    "lower_bound",
    "validate",
    "compare",
    "replay",
    "gen_trace",
    "read_dag",
    "read_dags",
    "read_cluster",
    "read_trace",
    "read_schedule",
    "Dag",
    "Stage",
    "Cluster",
    "MachineGroup",
    "Trace",
    "Schedule",
    "ScheduledTask",
    "LowerBounds",
    "Comparison",
    "ReplayResult",
    "SCHEDULERS",
    "ONLINE_SCHEDULERS",
    "GrapheneError",
    "ParseError",
    "FieldError",
    "CycleError",
    "TaskTooBigError",
    "GrapheneIOError",
    "UsageError",
    "TooLargeError",
    "TimedOutError",
    "InvalidScheduleError",
    "InternalError",
]

#: Offline schedulers ``build_schedule`` accepts.
SCHEDULERS: List[str] = list(_native.SCHEDULERS)
#: Online schedulers ``replay`` accepts.
ONLINE_SCHEDULERS: List[str] = list(_native.ONLINE_SCHEDULERS)

PathLike = Union[str, "os.PathLike[str]"]


def _pandas() -> Any:
    try:
        import pandas  # noqa: PLC0415
    except ImportError as e:  # pragma: no cover - exercised only without pandas
        raise ImportError("to_pandas() needs pandas: pip install pandas") from e
    return pandas


# ---------------------------------------------------------------------------------------------
# Typed inputs


@dataclass
class Stage:
    """One stage of a DAG: ``tasks`` identical tasks (or a list of per-task dicts)."""

    id: str
    tasks: Union[int, List[Dict[str, Any]]] = 1
    duration: Optional[float] = None
    demands: Dict[str, float] = field(default_factory=dict)
    parents: List[Union[str, Dict[str, Any]]] = field(default_factory=list)
    group: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"id": self.id, "tasks": self.tasks}
        if self.duration is not None:
            d["duration"] = self.duration
        if self.demands:
            d["demands"] = dict(self.demands)
        if self.parents:
            d["parents"] = list(self.parents)
        if self.group is not None:
            d["group"] = self.group
        return d


@dataclass
class Dag:
    """A DAG in graphene's own layout (see the README's ``dag.json``)."""

    name: str
    stages: List[Stage]
    resources: List[str] = field(default_factory=lambda: ["cpu", "mem", "disk", "net"])

    def to_dict(self) -> Dict[str, Any]:
        return {"name": self.name, "resources": list(self.resources), "stages": [s.to_dict() for s in self.stages]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Dag":
        stages = []
        for s in d["stages"]:
            stages.append(
                Stage(
                    id=s["id"],
                    tasks=s.get("tasks", 1),
                    duration=s.get("duration"),
                    demands=dict(s.get("demands") or {}),
                    parents=list(s.get("parents") or []),
                    group=s.get("group"),
                )
            )
        return cls(name=d.get("name", "dag"), stages=stages, resources=list(d.get("resources") or ["cpu", "mem", "disk", "net"]))

    @property
    def tasks(self) -> int:
        return sum(s.tasks if isinstance(s.tasks, int) else len(s.tasks) for s in self.stages)


@dataclass
class MachineGroup:
    count: int
    capacity: Dict[str, float]
    speed: Optional[float] = None

    def to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"count": self.count, "capacity": dict(self.capacity)}
        if self.speed is not None:
            d["speed"] = self.speed
        return d


@dataclass
class Cluster:
    """A cluster in the cluster file's layout: groups of identical machines."""

    machines: List[MachineGroup]
    overbook: Optional[List[str]] = None

    @classmethod
    def uniform(cls, count: int, capacity: Mapping[str, float], overbook: Optional[List[str]] = None) -> "Cluster":
        return cls([MachineGroup(count, dict(capacity))], overbook)

    def to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"machines": [m.to_dict() for m in self.machines]}
        if self.overbook is not None:
            d["overbook"] = list(self.overbook)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Cluster":
        groups = [MachineGroup(int(m.get("count", 1)), dict(m["capacity"]), m.get("speed")) for m in d["machines"]]
        return cls(groups, d.get("overbook"))

    @property
    def size(self) -> int:
        return sum(m.count for m in self.machines)


@dataclass
class Trace:
    """A workload trace as native CSV text (what ``gen-trace`` writes and ``replay`` reads)."""

    csv: str
    name: str = "trace"

    def save(self, path: PathLike) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.csv)

    @property
    def jobs(self) -> List[str]:
        seen: Dict[str, None] = {}
        for line in self.csv.splitlines()[1:]:
            if line.strip():
                seen.setdefault(line.split(",", 1)[0], None)
        return list(seen)

    def to_pandas(self) -> Any:
        import io  # noqa: PLC0415

        return _pandas().read_csv(io.StringIO(self.csv))


def _src(x: Any, what: str = "DAG") -> Any:
    """A source for the native layer: a path, or {"text", "name"}."""
    if isinstance(x, (str, os.PathLike)):
        return os.fspath(x)
    if isinstance(x, (Dag, Cluster)):
        d = x.to_dict()
        return {"text": json.dumps(d), "name": d.get("name", "dag") if isinstance(x, Dag) else "cluster"}
    if isinstance(x, Trace):
        return {"text": x.csv, "name": x.name}
    if isinstance(x, Schedule):
        return {"text": x.json.decode(), "name": "schedule"}
    if isinstance(x, Mapping):
        name = x.get("name") if isinstance(x.get("name"), str) else "dag"
        return {"text": json.dumps(x), "name": name}
    if isinstance(x, bytes):
        return {"text": x.decode(), "name": "dag"}
    raise UsageError(f"a {what} must be a path, a dict or a graphene.{what.capitalize() if what != 'DAG' else 'Dag'}, not {type(x).__name__}")


def _opts(cluster: Any, opts: Dict[str, Any]) -> Dict[str, Any]:
    o = dict(opts)
    if cluster is not None:
        o["cluster"] = _src(cluster, "cluster")
    cap = o.get("capacity")
    if isinstance(cap, Mapping):
        o["capacity"] = ",".join(f"{k}={v}" for k, v in cap.items())
    if isinstance(o.get("placement"), str):
        o["placement"] = o["placement"].split(",")
    for k in ("decima_model", "waves"):
        if isinstance(o.get(k), os.PathLike):
            o[k] = os.fspath(o[k])
    return o


# ---------------------------------------------------------------------------------------------
# Results


@dataclass
class ScheduledTask:
    id: str
    stage: str
    machine: int
    start: float
    end: float
    priority: float
    troublesome: bool = False


class Schedule:
    """A checked schedule: the fields of the schedule file, and ``json``, its exact bytes."""

    def __init__(self, raw: bytes, elapsed_ms: Optional[float] = None) -> None:
        self.json: bytes = raw
        self._d: Dict[str, Any] = json.loads(raw)
        #: The time the scheduler took (also with no_timing, where the file says 0).
        self.wall_ms: Optional[float] = elapsed_ms

    dag = property(lambda self: self._d.get("dag"))
    scheduler = property(lambda self: self._d.get("scheduler"))
    makespan = property(lambda self: self._d.get("makespan"))
    ratio = property(lambda self: self._d.get("ratio"))
    machines = property(lambda self: self._d.get("machines"))
    order = property(lambda self: list(self._d.get("order", [])))
    lower_bounds = property(lambda self: dict(self._d.get("lower_bounds", {})))
    elapsed_ms = property(lambda self: self._d.get("elapsed_ms"))

    @property
    def tasks(self) -> List[ScheduledTask]:
        return [
            ScheduledTask(
                t["id"], t.get("stage", t["id"].split("[")[0]), t["machine"], t["start"], t["end"],
                t.get("priority", 0.0), bool(t.get("troublesome", False)),
            )
            for t in self._d.get("tasks", [])
        ]

    def priorities(self) -> Dict[str, float]:
        """Task id -> priScore in [0, 1] (1 starts first)."""
        return {t["id"]: t.get("priority", 0.0) for t in self._d.get("tasks", [])}

    def to_dict(self) -> Dict[str, Any]:
        return json.loads(self.json)

    def save(self, path: PathLike) -> None:
        with open(path, "wb") as f:
            f.write(self.json)

    def to_pandas(self) -> Any:
        return _pandas().DataFrame([t.__dict__ for t in self.tasks])

    def __repr__(self) -> str:
        return f"Schedule(dag={self.dag!r}, scheduler={self.scheduler!r}, makespan={self.makespan}, tasks={len(self._d.get('tasks', []))})"


@dataclass
class LowerBounds:
    dag: str
    tasks: int
    machines: int
    critical_path: float
    total_work: float
    stage_aware: float
    best: float
    json: str = field(repr=False, default="")

    def to_dict(self) -> Dict[str, Any]:
        return json.loads(self.json)


class Comparison:
    """``compare --json``: one row per DAG and scheduler, and a summary per scheduler."""

    def __init__(self, text: str) -> None:
        self.json: str = text
        d = json.loads(text)
        self.rows: List[Dict[str, Any]] = d["rows"]
        self.summary: List[Dict[str, Any]] = d["summary"]

    def to_pandas(self) -> Any:
        return _pandas().DataFrame(self.rows)


class ReplayResult:
    """What ``replay`` writes: jobs.csv, schedule.csv and summary.json (exact text), parsed."""

    def __init__(self, jobs_csv: str, schedule_csv: str, summary_json: bytes) -> None:
        self.jobs_csv = jobs_csv
        self.schedule_csv = schedule_csv
        self.summary_json = summary_json
        d = json.loads(summary_json)
        self.scheduler: str = d["scheduler"]
        self.summary: Dict[str, Any] = d["summary"]
        self.jobs: List[Dict[str, Any]] = []
        for line in jobs_csv.splitlines()[1:]:
            job, queue, arrival, finish, jct, tasks = line.split(",")
            self.jobs.append(
                {"job": job, "queue": queue, "arrival": float(arrival), "finish": float(finish), "jct": float(jct), "tasks": int(tasks)}
            )

    @property
    def mean_jct(self) -> float:
        return float(self.summary["jct"]["mean"])

    @property
    def makespan(self) -> float:
        return float(self.summary["makespan"])

    def save(self, out: PathLike) -> None:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "jobs.csv"), "w", encoding="utf-8") as f:
            f.write(self.jobs_csv)
        with open(os.path.join(out, "schedule.csv"), "w", encoding="utf-8") as f:
            f.write(self.schedule_csv)
        with open(os.path.join(out, "summary.json"), "wb") as f:
            f.write(self.summary_json)

    def to_pandas(self) -> Any:
        return _pandas().DataFrame(self.jobs)

    def runs_pandas(self) -> Any:
        import io  # noqa: PLC0415

        return _pandas().read_csv(io.StringIO(self.schedule_csv))


# ---------------------------------------------------------------------------------------------
# The commands


def build_schedule(dag: Any, cluster: Any = None, scheduler: str = "graphene", **opts: Any) -> Schedule:
    """``graphene build-schedule``: Graphene's schedule (or a baseline's), checked by the
    validator; ``.json`` holds the bytes the CLI writes for the same inputs."""
    raw, ms = _native.build_schedule(_src(dag), scheduler, _opts(cluster, opts))
    return Schedule(raw, ms)


def lower_bound(dag: Any, cluster: Any = None, **opts: Any) -> LowerBounds:
    """``graphene lower-bound --json``."""
    text = _native.lower_bound(_src(dag), _opts(cluster, opts))
    d = json.loads(text)
    lb = d["lower_bounds"]
    return LowerBounds(d["dag"], d["tasks"], d["machines"], lb["critical_path"], lb["total_work"], lb["stage_aware"], d["best"], text)


def validate(dag: Any, schedule: Any, cluster: Any = None, **opts: Any) -> str:
    """``graphene validate``: the summary line of a valid schedule; raises
    :class:`InvalidScheduleError` (violations in ``.violations``) otherwise."""
    return _native.validate(_src(dag), _src(schedule, "schedule"), _opts(cluster, opts))


def compare(dags: Union[Any, Sequence[Any]], cluster: Any = None, schedulers: Optional[Iterable[str]] = None, **opts: Any) -> Comparison:
    """``graphene compare --json``: every scheduler on every DAG."""
    if isinstance(dags, (str, os.PathLike, Mapping, Dag)):
        dags = [dags]
    names = None if schedulers is None else ([schedulers] if isinstance(schedulers, str) else list(schedulers))
    return Comparison(_native.compare([_src(d) for d in dags], names, _opts(cluster, opts)))


def gen_trace(
    dags: Union[Any, Sequence[Any]],
    jobs: int,
    arrival: str = "poisson:10",
    queues: int = 1,
    load: Optional[float] = None,
    cluster: Any = None,
    **opts: Any,
) -> Trace:
    """``graphene gen-trace``: a seeded workload drawn from the DAGs (native CSV)."""
    if isinstance(dags, (str, os.PathLike, Mapping, Dag)):
        dags = [dags]
    text = _native.gen_trace([_src(d) for d in dags], jobs, arrival, queues, load, _opts(cluster, opts))
    return Trace(text, "trace")


def replay(
    trace: Any,
    cluster: Any = None,
    scheduler: str = "cs",
    *,
    waves: Optional[PathLike] = None,
    moving_delay: Optional[float] = None,
    **opts: Any,
) -> ReplayResult:
    """``graphene replay``: the trace in the event-driven simulator under an online scheduler.
    The realized schedule is checked before anything is returned.

    ``waves`` (``--waves``) is the sidecar ``gen-trace --style spark-sched-sim --waves-out``
    writes for the trace: tasks then run spark-sched-sim's wave- and parallelism-dependent
    durations, drawn with ``seed`` (schedulers still see the trace's); ``moving_delay``
    (``--moving-delay``, seconds, default 2) goes with it. A missing or bad sidecar raises
    naming the file, a negative moving delay or one without ``waves`` names the field."""
    if waves is not None:
        opts["waves"] = waves
    if moving_delay is not None:
        opts["moving_delay"] = moving_delay
    name = os.fspath(trace) if isinstance(trace, (str, os.PathLike)) else getattr(trace, "name", "trace")
    jobs, sched, summary = _native.replay(_src(trace, "trace"), name, scheduler, _opts(cluster, opts))
    return ReplayResult(jobs, sched, summary)


# ---------------------------------------------------------------------------------------------
# Readers


def read_dags(path: Any, **opts: Any) -> List[Dag]:
    """Every DAG of a file in any input format (a TPC-H file gives one per query unless
    ``query=`` picks one), as graphene's layout, with demand profiles applied as in the CLI."""
    return [Dag.from_dict(json.loads(t)) for t in _native.read_dags(_src(path), _opts(None, opts))]


def read_dag(path: Any, **opts: Any) -> Dag:
    dags = read_dags(path, **opts)
    if len(dags) != 1:
        raise UsageError(f"{os.fspath(path) if isinstance(path, (str, os.PathLike)) else 'input'}: holds {len(dags)} DAGs; pick one with --query N")
    return dags[0]


def read_cluster(path: Any = None, **opts: Any) -> Cluster:
    """A cluster file (or the machines/capacity options) as a :class:`Cluster`."""
    return Cluster.from_dict(json.loads(_native.read_cluster(_opts(path, opts))))


def read_trace(path: Any, trace_format: Optional[str] = None, spread_queues: Optional[int] = None) -> Trace:
    """A workload trace (native CSV or Alibaba v2018) as native CSV."""
    name = os.fspath(path) if isinstance(path, (str, os.PathLike)) else "trace"
    return Trace(_native.read_trace(_src(path, "trace"), trace_format, spread_queues), name)


def read_schedule(path: PathLike) -> Schedule:
    """A schedule file as ``build-schedule`` writes it."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise GrapheneIOError(f"{os.fspath(path)}: {e.strerror}") from e
    try:
        return Schedule(raw)
    except ValueError as e:
        raise ParseError(f"{os.fspath(path)}: {e}") from e
