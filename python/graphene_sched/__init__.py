"""graphene_sched: graphene from Python. Graphene's DAG schedules (OSDI'16), lower bounds, the
validator, the offline comparison, workload traces and the cluster simulator, with the CLI's
bytes and messages. ``python -m graphene_sched`` (or the ``graphene`` console script) runs the
``graphene`` command itself.

Submodules with optional dependencies: :mod:`graphene_sched.dask` (``pip install
'graphene-sched[dask]'``), :mod:`graphene_sched.gym` (``[gym]``), :mod:`graphene_sched.parquet`
(``[parquet]``); ``to_pandas()`` needs ``[pandas]``; ``[all]`` brings every one.

Inputs
    A DAG is a file path (graphene JSON, WfCommons, Decima TPC-H, task graph and network), a
    dict in any of those formats, or a :class:`Dag`. A cluster is a path, a dict in the cluster
    file's layout, a :class:`Cluster`, or None (then ``machines=`` and ``capacity=`` apply, by
    default 10 machines of cpu=16, mem=64, disk=200, net=1250). A trace is a path or a
    :class:`Trace`.

Options
    Keyword options are the CLI's flags with underscores: ``seed``, ``format``, ``query``,
    ``job`` (a Spark log's job), ``tez_dag`` (the CLI's ``--dag``: a Tez history's DAG by name, id or index), ``executors``, ``demands``, ``machines``, ``capacity`` (a dict or ``"cpu=16,mem=64"``),
    ``no_overbook``, ``speeds``, ``bandwidth``, ``grid_step``, ``max_trouble``, ``no_cuts``,
    ``placement``, ``threads``, ``no_timing``; replays add ``kappa``, ``tetris_kappa``, ``tetris_overbook_limit``, ``tetris_srpt_scale``, ``cs_accounting``, ``cs_user_limit_factor``, ``cs_am``, ``cs_assignments_per_heartbeat``, ``cs_reservations``, ``cs_tez_order``, ``periodic_heartbeats``, ``sticky``, ``container_overhead``, ``online_rules``, ``srpt_term``, ``graphene_rm``, ``eta``, ``rp``,
    ``overbook_limit``, ``fairness``, ``charge``, ``queues``, ``heartbeat``, ``misestimate``,
    ``misestimate_what``, ``spread_queues``, ``trace_format``, ``decima_model``, ``waves`` (a
    path: the ``gen-trace --waves-out`` sidecar, for spark-sched-sim's wave- and
    parallelism-dependent durations) and ``moving_delay`` (seconds, with ``waves``). An unknown
    option raises :class:`UsageError`.

Errors
    Every error is a :class:`GrapheneError` subclass whose message is the CLI's (without the
    ``error:`` prefix). An argument of the wrong type or out of its range (a negative count, a
    seed past 2**64 - 1, a float where an integer goes, None where a value is needed, bytes
    that are not UTF-8) raises :class:`UsageError` naming the argument; integers are never cut
    to fit. Inputs may also be given as bytes, read as a file's are.
"""

from __future__ import annotations

import csv
import io
import json
import operator
import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, TypedDict, Union

from . import _core
from ._core import (
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
    "__version__",
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
    "CompareRow",
    "CompareSummary",
    "JobResult",
    "JctStats",
    "ReplaySummary",
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

#: The package's version: the workspace's (Cargo) version, as the wheel's metadata and
#: ``graphene --version`` give it.
__version__: str = _core.__version__

#: Offline schedulers ``build_schedule`` accepts.
SCHEDULERS: List[str] = list(_core.SCHEDULERS)
#: Online schedulers ``replay`` accepts.
ONLINE_SCHEDULERS: List[str] = list(_core.ONLINE_SCHEDULERS)

PathLike = Union[str, "os.PathLike[str]"]


def _index(what: str, v: Any, lo: int = 0, hi: int = 2**64 - 1) -> int:
    """An integer argument in [lo, hi] (numpy's too; not a bool, not a float cut to fit)."""
    if isinstance(v, bool):
        raise UsageError(f"{what}: expected an integer, not bool")
    try:
        i = operator.index(v)
    except TypeError:
        raise UsageError(f"{what}: expected an integer, not {_tname(v)}") from None
    if not lo <= i <= hi:
        raise UsageError(f"{what}: {i} is out of range (expected an integer from {lo} to {hi})")
    return i


def _number(what: str, v: Any) -> float:
    """A real-number argument (int or float, numpy's too; not a bool or a string)."""
    if isinstance(v, (bool, str, bytes)) or not hasattr(v, "__float__"):
        raise UsageError(f"{what}: expected a number, not {_tname(v)}")
    try:
        return float(v)
    except (TypeError, ValueError, OverflowError) as e:
        raise UsageError(f"{what}: {e}") from None


def _tname(v: Any) -> str:
    return "None" if v is None else type(v).__name__


def _missing_extra(module: str, needs: str, extra: str, e: ImportError) -> ImportError:
    """The error a module of an optional extra raises when one of its dependencies is missing:
    what it needs, which one is missing, and the pip command that installs the extra."""
    return ImportError(f"{module} needs {needs} ({e.name or e} is missing): pip install 'graphene-sched[{extra}]'", name=e.name)


def _write(path: Any, data: Union[str, bytes], what: str = "path") -> None:
    """Writes a file the way the CLI's outputs go: a bad path names the argument
    (:class:`UsageError`), a failed write the file (:class:`GrapheneIOError`)."""
    if not isinstance(path, (str, os.PathLike)):
        raise UsageError(f"{what}: expected a path, not {_tname(path)}")
    try:
        if isinstance(data, str):
            with open(path, "w", encoding="utf-8") as f:
                f.write(data)
        else:
            with open(path, "wb") as f:
                f.write(data)
    except OSError as e:
        raise GrapheneIOError(f"{os.fspath(path)}: {e.strerror or e}") from None


def _folder(out: Any, what: str = "out") -> str:
    """Makes the output folder ``out`` (and its parents) if missing; errors as :func:`_write`."""
    if not isinstance(out, (str, os.PathLike)):
        raise UsageError(f"{what}: expected a path, not {_tname(out)}")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        raise GrapheneIOError(f"{os.fspath(out)}: {e.strerror or e}") from None
    return os.fspath(out)


def _pandas() -> Any:
    try:
        import pandas  # noqa: PLC0415
    except ImportError as e:  # pragma: no cover - exercised only without pandas
        raise ImportError("to_pandas() needs pandas: pip install 'graphene-sched[pandas]'", name="pandas") from e
    return pandas


# ---------------------------------------------------------------------------------------------
# Typed inputs


def _typed(d: Mapping[str, Any], key: str, kind: Any, expected: str, at: str = "", required: bool = False) -> Any:
    """``d[key]`` when it is a ``kind``; None when absent (or a FieldError if required)."""
    name = f"{at}.{key}" if at else key
    if key not in d or d[key] is None:
        if required:
            raise FieldError(f"{name}: missing (expected {expected})")
        return None
    v = d[key]
    if not isinstance(v, kind):
        raise FieldError(f"{name}: expected {expected}, not {_tname(v)}")
    return v


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
        """The stage as the DAG file's layout holds it."""
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
        """The DAG in graphene's file layout (what ``dag.json`` holds)."""
        return {"name": self.name, "resources": list(self.resources), "stages": [s.to_dict() for s in self.stages]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Dag":
        """A DAG from a dict in graphene's layout (:func:`read_dag` reads every other format).
        A missing or mistyped field raises :class:`FieldError` naming it; the values themselves
        are checked where the DAG is used, as a file's are."""
        if not isinstance(d, Mapping):
            raise UsageError(f"dag: expected a dict, not {_tname(d)}")
        raw = _typed(d, "stages", list, "a list of stages (read_dag reads the other formats)", required=True)
        stages = []
        for i, s in enumerate(raw):
            at = f"stages[{i}]"
            if not isinstance(s, Mapping):
                raise FieldError(f"{at}: expected an object, not {_tname(s)}")
            stages.append(
                Stage(
                    id=_typed(s, "id", str, "a string", at, required=True),
                    tasks=s.get("tasks", 1),
                    duration=s.get("duration"),
                    demands=dict(_typed(s, "demands", Mapping, "an object", at) or {}),
                    parents=list(_typed(s, "parents", list, "a list", at) or []),
                    group=s.get("group"),
                )
            )
        name = _typed(d, "name", str, "a string") or "dag"
        resources = _typed(d, "resources", list, "a list of names") or ["cpu", "mem", "disk", "net"]
        return cls(name=name, stages=stages, resources=list(resources))

    @property
    def tasks(self) -> int:
        """The number of tasks over all stages."""
        return sum(s.tasks if isinstance(s.tasks, int) else len(s.tasks) for s in self.stages)


@dataclass
class MachineGroup:
    """``count`` identical machines with ``capacity`` per resource (and a relative ``speed``)."""

    count: int
    capacity: Dict[str, float]
    speed: Optional[float] = None

    def to_dict(self) -> Dict[str, Any]:
        """The group as the cluster file's layout holds it."""
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
        """``count`` machines alike, each with ``capacity``."""
        return cls([MachineGroup(count, dict(capacity))], overbook)

    def to_dict(self) -> Dict[str, Any]:
        """The cluster in the cluster file's layout."""
        d: Dict[str, Any] = {"machines": [m.to_dict() for m in self.machines]}
        if self.overbook is not None:
            d["overbook"] = list(self.overbook)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Cluster":
        """A cluster from a dict in the cluster file's layout. A missing or mistyped field raises
        :class:`FieldError` naming it."""
        if not isinstance(d, Mapping):
            raise UsageError(f"cluster: expected a dict, not {_tname(d)}")
        groups = []
        for i, m in enumerate(_typed(d, "machines", list, "a list of machine groups", required=True)):
            at = f"machines[{i}]"
            if not isinstance(m, Mapping):
                raise FieldError(f"{at}: expected an object, not {_tname(m)}")
            count = m.get("count", 1)
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise FieldError(f"{at}.count: expected a non-negative integer, not {count!r}")
            groups.append(MachineGroup(count, dict(_typed(m, "capacity", Mapping, "an object", at, required=True)), m.get("speed")))
        overbook = _typed(d, "overbook", list, "a list of resource names")
        return cls(groups, None if overbook is None else list(overbook))

    @property
    def size(self) -> int:
        """The number of machines."""
        return sum(m.count for m in self.machines)


@dataclass
class Trace:
    """A workload trace as native CSV text (what ``gen-trace`` writes and ``replay`` reads)."""

    csv: str
    name: str = "trace"

    def save(self, path: PathLike) -> None:
        """Writes the CSV to ``path`` (what ``replay`` and the CLI read)."""
        _write(path, self.csv)

    @property
    def jobs(self) -> List[str]:
        """The job names, in the trace's order."""
        seen: Dict[str, None] = {}
        for line in self.csv.splitlines()[1:]:
            if line.strip():
                seen.setdefault(line.split(",", 1)[0], None)
        return list(seen)

    def to_pandas(self) -> Any:
        """The trace as a pandas DataFrame, one row per stage (needs ``[pandas]``)."""
        return _pandas().read_csv(io.StringIO(self.csv))


_CLASS = {"dag": "Dag", "cluster": "Cluster", "trace": "Trace", "schedule": "Schedule"}


def _src(x: Any, what: str = "dag") -> Any:
    """A source for the native layer: a path, bytes (decoded there as a file is), or
    {"text", "name"}; ``what`` names the argument in errors."""
    if isinstance(x, (str, os.PathLike)):
        return x
    if isinstance(x, (bytes, bytearray, memoryview)):
        return bytes(x)
    if isinstance(x, (Dag, Cluster)):
        return _dict_src(x.to_dict(), what, x.name if isinstance(x, Dag) else "cluster")
    if isinstance(x, Trace):
        return {"text": x.csv, "name": x.name}
    if isinstance(x, Schedule):
        return {"text": x.json, "name": "schedule"}
    if isinstance(x, Mapping):
        given = x.get("name")
        return _dict_src(x, what, given if isinstance(given, str) else what.split("[")[0].rstrip("s"))
    kinds = "a path, bytes, a dict" + (f" or a graphene_sched.{_CLASS[what]}" if what in _CLASS else "")
    raise UsageError(f"{what}: expected {kinds}, not {_tname(x)}")


def _dict_src(d: Mapping[str, Any], what: str, name: str) -> Dict[str, Any]:
    try:
        text = json.dumps(d, allow_nan=False)
    except (TypeError, ValueError) as e:
        # A set, an object, a NaN or a loop: nothing JSON can hold.
        raise UsageError(f"{what}: the dict is not JSON: {e}") from None
    return {"text": text, "name": name}


def _srcs(x: Any, what: str) -> List[Any]:
    """One source or a list (tuple, iterable) of them."""
    if isinstance(x, (str, os.PathLike, bytes, bytearray, memoryview, Mapping, Dag, Trace)):
        return [_src(x, what)]
    if not isinstance(x, Iterable):
        raise UsageError(f"{what}: expected an input or a list of inputs, not {_tname(x)}")
    return [_src(d, f"{what}[{i}]") for i, d in enumerate(x)]


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
    """One task of a schedule: its machine, start and end, priScore (1 starts first) and
    whether Graphene placed it as troublesome."""

    id: str
    stage: str
    machine: int
    start: float
    end: float
    priority: float
    troublesome: bool = False


class Schedule:
    """A checked schedule: the fields of the schedule file, and ``json``, its exact bytes.
    Built from the bytes (or text) of a schedule file; bad JSON raises :class:`ParseError`."""

    def __init__(self, raw: Union[bytes, str], elapsed_ms: Optional[float] = None, name: str = "schedule") -> None:
        if isinstance(raw, str):
            raw = raw.encode()
        if not isinstance(raw, (bytes, bytearray)):
            raise UsageError(f"{name}: expected the schedule's JSON as bytes or str, not {_tname(raw)}")
        self.json: bytes = bytes(raw)
        try:
            d = json.loads(self.json)
        except ValueError as e:  # JSONDecodeError and UnicodeDecodeError
            raise ParseError(f"{name}: {e}") from None
        if not isinstance(d, dict):
            raise FieldError(f"{name}: (top level): expected a JSON object")
        self._d: Dict[str, Any] = d
        #: The time the scheduler took (also with no_timing, where the file says 0).
        self.wall_ms: Optional[float] = elapsed_ms

    @property
    def dag(self) -> str:
        """The DAG's name."""
        return str(self._d.get("dag", ""))

    @property
    def scheduler(self) -> str:
        """The scheduler that built it."""
        return str(self._d.get("scheduler", ""))

    @property
    def makespan(self) -> float:
        """The time from the first start to the last end."""
        return float(self._d.get("makespan", 0.0))

    @property
    def ratio(self) -> Optional[float]:
        """The makespan over the best lower bound (None when the file has none)."""
        r = self._d.get("ratio")
        return None if r is None else float(r)

    @property
    def machines(self) -> Optional[int]:
        """The cluster's machine count."""
        m = self._d.get("machines")
        return None if m is None else int(m)

    @property
    def order(self) -> List[str]:
        """Task ids in precedence order (first starts first)."""
        return list(self._d.get("order", []))

    @property
    def lower_bounds(self) -> Dict[str, float]:
        """Each lower bound on the makespan, by name."""
        return dict(self._d.get("lower_bounds", {}))

    @property
    def elapsed_ms(self) -> Optional[float]:
        """The scheduler's time as the file records it (0 with ``no_timing``)."""
        return self._d.get("elapsed_ms")

    @property
    def tasks(self) -> List[ScheduledTask]:
        """Every task with its placement and times."""
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
        """The schedule file as a dict."""
        return json.loads(self.json)

    def save(self, path: PathLike) -> None:
        """Writes the exact bytes (what ``build-schedule --out`` writes)."""
        _write(path, self.json)

    def to_pandas(self) -> Any:
        """The tasks as a pandas DataFrame (needs ``[pandas]``)."""
        return _pandas().DataFrame([t.__dict__ for t in self.tasks])

    def __repr__(self) -> str:
        return f"Schedule(dag={self.dag!r}, scheduler={self.scheduler!r}, makespan={self.makespan}, tasks={len(self._d.get('tasks', []))})"


@dataclass
class LowerBounds:
    """``lower-bound --json``: each bound on the makespan and the best (largest) of them."""

    dag: str
    tasks: int
    machines: int
    critical_path: float
    total_work: float
    stage_aware: float
    best: float
    json: str = field(repr=False, default="")

    def to_dict(self) -> Dict[str, Any]:
        """The CLI's JSON as a dict."""
        return json.loads(self.json)


class CompareRow(TypedDict):
    """One DAG under one scheduler in :class:`Comparison` (``compare --json``'s rows)."""

    dag: str
    dag_index: int
    scheduler: str
    tasks: int
    copies: int
    makespan: float
    lower_bound: float
    ratio: float
    slr: float
    speedup: float
    elapsed_ms: float


class CompareSummary(TypedDict):
    """One scheduler over every DAG in :class:`Comparison`."""

    scheduler: str
    dags: int
    best_count: int
    mean_makespan: float
    mean_ratio: float
    median_ratio: float
    p90_ratio: float
    mean_slr: float
    mean_speedup: float


class Comparison:
    """``compare --json``: one row per DAG and scheduler, and a summary per scheduler."""

    def __init__(self, text: str) -> None:
        self.json: str = text
        d = json.loads(text)
        self.rows: List[CompareRow] = d["rows"]
        self.summary: List[CompareSummary] = d["summary"]

    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame (needs ``[pandas]``)."""
        return _pandas().DataFrame(self.rows)


class JobResult(TypedDict):
    """One job of a replay (a row of jobs.csv)."""

    job: str
    queue: str
    arrival: float
    finish: float
    jct: float
    tasks: int


class JctStats(TypedDict):
    """Job completion times over the finished jobs (None when none finished)."""

    mean: Optional[float]
    median: Optional[float]
    p90: Optional[float]
    p99: Optional[float]


class ReplaySummary(TypedDict, total=False):
    """summary.json's ``summary``: counts, the makespan, JCT statistics, utilization per
    resource (``mean_utilization`` and the ``utilization`` series), fairness windows,
    heartbeats and the scheduler's decision times."""

    jobs: int
    tasks: int
    makespan: float
    jct: JctStats
    resources: List[str]
    mean_utilization: List[float]
    utilization: List[Dict[str, Any]]
    fairness: List[Dict[str, Any]]
    heartbeats: int
    decision_us: Dict[str, Any]


class ReplayResult:
    """What ``replay`` writes: jobs.csv, schedule.csv and summary.json (exact text), parsed."""

    def __init__(self, jobs_csv: str, schedule_csv: str, summary_json: bytes) -> None:
        self.jobs_csv = jobs_csv
        self.schedule_csv = schedule_csv
        self.summary_json = summary_json
        # With a policy written in Python: how often its decide() was called, and the seconds
        # spent in those calls (the view's construction included).
        self.policy_calls: Optional[int] = None
        self.policy_seconds: Optional[float] = None
        d = json.loads(summary_json)
        self.scheduler: str = d["scheduler"]
        self.summary: ReplaySummary = d["summary"]
        self.jobs: List[JobResult] = []
        for job, queue, arrival, finish, jct, tasks in list(csv.reader(io.StringIO(jobs_csv)))[1:]:
            self.jobs.append(
                {"job": job, "queue": queue, "arrival": float(arrival), "finish": float(finish), "jct": float(jct), "tasks": int(tasks)}
            )

    @property
    def mean_jct(self) -> float:
        """The mean job completion time (NaN when no job finished)."""
        m = self.summary["jct"]["mean"]
        return float("nan") if m is None else float(m)

    @property
    def makespan(self) -> float:
        """The time the last task ended."""
        return float(self.summary["makespan"])

    def save(self, out: PathLike) -> None:
        """Writes jobs.csv, schedule.csv and summary.json into the folder ``out``, as
        ``replay --out`` does."""
        out = _folder(out)
        _write(os.path.join(out, "jobs.csv"), self.jobs_csv)
        _write(os.path.join(out, "schedule.csv"), self.schedule_csv)
        _write(os.path.join(out, "summary.json"), self.summary_json)

    def to_pandas(self) -> Any:
        """The jobs as a pandas DataFrame (needs ``[pandas]``)."""
        return _pandas().DataFrame(self.jobs)

    def runs_pandas(self) -> Any:
        """Every task run (schedule.csv) as a pandas DataFrame (needs ``[pandas]``)."""
        return _pandas().read_csv(io.StringIO(self.schedule_csv))


# ---------------------------------------------------------------------------------------------
# The commands


def build_schedule(dag: Any, cluster: Any = None, scheduler: str = "graphene", **opts: Any) -> Schedule:
    """``graphene build-schedule``: Graphene's schedule (or a baseline's), checked by the
    validator; ``.json`` holds the bytes the CLI writes for the same inputs."""
    raw, ms = _core.build_schedule(_src(dag), scheduler, _opts(cluster, opts))
    return Schedule(raw, ms)


def lower_bound(dag: Any, cluster: Any = None, **opts: Any) -> LowerBounds:
    """``graphene lower-bound --json``: the critical path, total work and stage-aware bounds on
    the makespan of ``dag`` on the cluster, and the best of them."""
    text = _core.lower_bound(_src(dag), _opts(cluster, opts))
    d = json.loads(text)
    lb = d["lower_bounds"]
    return LowerBounds(d["dag"], d["tasks"], d["machines"], lb["critical_path"], lb["total_work"], lb["stage_aware"], d["best"], text)


def validate(dag: Any, schedule: Any, cluster: Any = None, **opts: Any) -> str:
    """``graphene validate``: the summary line of a valid schedule; raises
    :class:`InvalidScheduleError` (violations in ``.violations``) otherwise."""
    return _core.validate(_src(dag), _src(schedule, "schedule"), _opts(cluster, opts))


def compare(dags: Union[Any, Sequence[Any]], cluster: Any = None, schedulers: Optional[Iterable[str]] = None, **opts: Any) -> Comparison:
    """``graphene compare --json``: every scheduler on every DAG."""
    names: Any = schedulers
    if isinstance(schedulers, str):
        names = [schedulers]
    elif isinstance(schedulers, Iterable) and not isinstance(schedulers, (bytes, Mapping)):
        names = list(schedulers)
    return Comparison(_core.compare(_srcs(dags, "dags"), names, _opts(cluster, opts)))


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
    text = _core.gen_trace(_srcs(dags, "dags"), jobs, arrival, queues, load, _opts(cluster, opts))
    return Trace(text, "trace")


def replay(
    trace: Any,
    cluster: Any = None,
    scheduler: Any = "cs",
    *,
    waves: Optional[PathLike] = None,
    moving_delay: Optional[float] = None,
    **opts: Any,
) -> ReplayResult:
    """``graphene replay``: the trace in the event-driven simulator under an online scheduler.
    The realized schedule is checked before anything is returned. ``scheduler`` is a built-in
    scheduler's name or a policy written in Python, an object with a ``decide(view)`` method
    (:mod:`graphene_sched.policy`); its result also has ``policy_calls`` and ``policy_seconds``
    (the calls and the time spent in them).

    ``waves`` (``--waves``) is the sidecar ``gen-trace --style spark-sched-sim --waves-out``
    writes for the trace: tasks then run spark-sched-sim's wave- and parallelism-dependent
    durations, drawn with ``seed`` (schedulers still see the trace's); ``moving_delay``
    (``--moving-delay``, seconds, default 2) goes with it. A missing or bad sidecar raises
    naming the file, a negative moving delay or one without ``waves`` names the field."""
    if waves is not None:
        opts["waves"] = waves
    if moving_delay is not None:
        opts["moving_delay"] = moving_delay
    name = os.fspath(trace) if isinstance(trace, (str, os.PathLike)) else trace.name if isinstance(trace, Trace) else "trace"
    if not isinstance(scheduler, str):
        from .policy import _replay  # noqa: PLC0415

        return _replay(trace, name, scheduler, _opts(cluster, opts))
    jobs, sched, summary = _core.replay(_src(trace, "trace"), name, scheduler, _opts(cluster, opts))
    return ReplayResult(jobs, sched, summary)


# ---------------------------------------------------------------------------------------------
# Readers


def read_dags(path: Any, **opts: Any) -> List[Dag]:
    """Every DAG of a file in any input format (a TPC-H file gives one per query unless
    ``query=`` picks one), as graphene's layout, with demand profiles applied as in the CLI."""
    return [Dag.from_dict(json.loads(t)) for t in _core.read_dags(_src(path), _opts(None, opts))]


def read_dag(path: Any, **opts: Any) -> Dag:
    """The one DAG of a file in any input format (as :func:`read_dags`); a file of several
    raises :class:`UsageError` (pick one with ``query=``)."""
    dags = read_dags(path, **opts)
    if len(dags) != 1:
        raise UsageError(f"{os.fspath(path) if isinstance(path, (str, os.PathLike)) else 'dag'}: holds {len(dags)} DAGs; pick one with query=N")
    return dags[0]


def read_cluster(path: Any = None, **opts: Any) -> Cluster:
    """A cluster file (or the machines/capacity options) as a :class:`Cluster`."""
    return Cluster.from_dict(json.loads(_core.read_cluster(_opts(path, opts))))


def read_trace(path: Any, trace_format: Optional[str] = None, spread_queues: Optional[int] = None) -> Trace:
    """A workload trace (native CSV or Alibaba v2018) as native CSV."""
    name = os.fspath(path) if isinstance(path, (str, os.PathLike)) else "trace"
    return Trace(_core.read_trace(_src(path, "trace"), trace_format, spread_queues), name)


def read_schedule(path: PathLike) -> Schedule:
    """A schedule file as ``build-schedule`` writes it (read as every input is: the input size
    limit, UTF-8)."""
    raw = _core.read_schedule(_src(path, "schedule"))
    return Schedule(raw, name=os.fspath(path) if isinstance(path, (str, os.PathLike)) else "schedule")
