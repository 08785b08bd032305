"""Run a DAG on a Dask cluster in graphene's order, and check what Dask actually did.

Every task of the DAG becomes one future, submitted with ``client.submit`` (never through a
collection's graph, whose optimization drops annotations: dask #7036, #10325) with

* ``priority``: from the schedule's precedence order (graphene's by default, a baseline's when
  ``schedule`` names one, none for Dask's own first-come order), higher first;
* ``resources``: the task's demands on the resources the cluster holds to capacity (cpu and
  memory by default; disk and network are fungible bandwidths in graphene and are not
  restricted), which the workers declare as their capacity;
* the futures of the tasks it waits for as arguments (all-to-all edges: every task of the
  parent stage; one-to-one: the task with the same index).

The payload runs for the task's duration x ``time_scale`` seconds: ``"sleep"``, ``"cpu-burn"``
(a busy loop), or a callable ``f(task_id, stage, seconds)`` (or a dict of them per stage). Each
task records its worker, start and end; the realized schedule (times divided by
``time_scale``, so in the DAG's units) goes through graphene's validator: every task once,
dependencies, and the capacities Dask enforced. :func:`execute` returns it with the makespan.
"""

from __future__ import annotations

import copy
import itertools
import json
import logging
import math
import os
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Set, Tuple, Union

try:
    import distributed  # noqa: F401 - only to say which extra is missing
except ImportError as e:
    from . import _missing_extra

    raise _missing_extra("graphene_sched.dask", "dask[distributed]", "dask", e) from e

from . import Cluster, Dag, GrapheneError, Schedule, UsageError, _number, _tname, build_schedule, read_cluster, read_dag, validate

__all__ = ["execute", "Execution", "expand", "local_cluster", "plan", "prioritize", "Plan", "GrapheneOrder", "DaskRunError"]

_runs = itertools.count()


@dataclass
class Task:
    """One task of an expanded DAG: id ``stage[i]``, duration, demands and parent task ids."""

    id: str
    stage: str
    index: int
    duration: float
    demands: Dict[str, float]
    parents: List[str]


def expand(dag: Dag) -> List[Task]:
    """The tasks of a DAG in graphene's layout, ids ``stage[i]``, with their parents."""
    if not isinstance(dag, Dag):
        raise UsageError(f"dag: expected a graphene_sched.Dag (read_dag reads one), not {_tname(dag)}")
    tasks: List[Task] = []
    by_stage: Dict[str, List[str]] = {}
    for s in dag.stages:
        specs: List[Dict[str, Any]]
        if isinstance(s.tasks, int):
            specs = [{} for _ in range(s.tasks)]
        else:
            specs = list(s.tasks)
        ids = [f"{s.id}[{i}]" for i in range(len(specs))]
        by_stage[s.id] = ids
        for i, spec in enumerate(specs):
            parents: List[str] = []
            for p in s.parents:
                if isinstance(p, str):
                    parents.extend(by_stage[p])
                else:
                    if p.get("kind", "all-to-all") == "one-to-one":
                        parents.append(by_stage[p["stage"]][i])
                    else:
                        parents.extend(by_stage[p["stage"]])
            demands = dict(s.demands)
            demands.update(spec.get("demands") or {})
            duration = spec.get("duration", s.duration)
            tasks.append(Task(ids[i], s.id, i, float(duration or 0.0), demands, parents))
    return tasks


@dataclass
class Execution:
    """A realized schedule: per task its worker (``machine`` is the worker's index in address
    order), start and end in the DAG's time units (wall seconds / time_scale from the first
    start), what the validator said, and per task its callable's result (``results``; None for
    sleep and cpu-burn)."""

    dag: str
    order: Optional[str]
    tasks: List[Dict[str, Any]]
    makespan: float
    wall_seconds: float
    workers: List[str]
    validation: str
    priorities: Dict[str, int] = field(repr=False, default_factory=dict)
    annotations: Dict[str, Any] = field(repr=False, default_factory=dict)
    results: Dict[str, Any] = field(repr=False, default_factory=dict)

    def schedule(self) -> Dict[str, Any]:
        """The realized schedule in the schedule file's layout (for graphene_sched.validate)."""
        return {"dag": self.dag, "scheduler": f"dask/{self.order or 'default'}", "makespan": self.makespan, "tasks": self.tasks}

    def to_pandas(self) -> Any:
        """The realized tasks as a pandas DataFrame (needs ``[pandas]``)."""
        from . import _pandas  # noqa: PLC0415

        return _pandas().DataFrame(self.tasks)


def _payload(task_id: str, stage: str, seconds: float, kind: Any, *deps: Any) -> Tuple[str, float, float, Any]:
    from distributed import get_worker  # noqa: PLC0415

    start = time.time()
    value = None
    if kind == "sleep":
        time.sleep(seconds)
    elif kind == "cpu-burn":
        end = time.perf_counter() + seconds
        x = 0
        while time.perf_counter() < end:
            x += 1
    else:
        # A callable gets its parents' outputs (in the order of the DAG's parents) and its
        # result is kept.
        value = kind(*[d[3] for d in deps])
    return get_worker().address, start, time.time(), value


def local_cluster(cluster: Cluster, hard: List[str], processes: bool = False) -> Any:
    """A ``distributed.LocalCluster`` with one worker per machine of ``cluster``, each
    declaring the capacities of the ``hard`` resources as Dask resources and running as many
    threads as it has cores. Machines of different sizes are not supported (LocalCluster's
    workers are alike): use a client of your own cluster for those."""
    from distributed import LocalCluster  # noqa: PLC0415

    if not isinstance(cluster, Cluster):
        raise UsageError(f"cluster: expected a graphene_sched.Cluster (read_cluster reads one), not {_tname(cluster)}")
    caps = {json.dumps(m.capacity, sort_keys=True) for m in cluster.machines}
    if len(caps) != 1:
        raise UsageError("a LocalCluster's workers are alike; give a client for a cluster of different machines")
    cap = cluster.machines[0].capacity
    resources = {r: float(cap[r]) for r in hard if r in cap}
    threads = max(1, int(cap.get("cpu", 1)))
    return LocalCluster(
        n_workers=cluster.size,
        threads_per_worker=threads,
        resources=resources,
        processes=processes,
        dashboard_address=":0" if _has_bokeh() else None,
    )


def _has_bokeh() -> bool:
    try:
        import bokeh  # noqa: F401, PLC0415
    except ImportError:
        return False
    return True


def execute(
    dag: Any,
    schedule: Union[None, str, Schedule, bool] = None,
    client: Any = None,
    payload: Union[str, Callable[..., Any], Mapping[str, Callable[..., Any]]] = "sleep",
    time_scale: float = 0.01,
    cluster: Any = None,
    processes: Optional[bool] = None,
    timeout: Optional[float] = 600.0,
    **opts: Any,
) -> Execution:
    """Runs ``dag`` on Dask and returns the realized, validated schedule.

    ``schedule``: None or ``"graphene"`` (graphene's order), another offline scheduler's name
    (``"cp"``, ``"tetris"``, ...), a :class:`graphene_sched.Schedule`, or ``False`` (no priorities:
    Dask's order; True is graphene's). ``client``: a ``distributed.Client``, an address string, or None (a
    LocalCluster sized like ``cluster`` is started and closed). ``payload``: ``"sleep"``,
    ``"cpu-burn"``, or a callable (or a dict of them per stage) that gets its parents' outputs
    as arguments and whose result is kept (``Execution.results``). ``timeout``: seconds the
    whole run may take (None: no limit); when it passes, a worker is lost or a task is left
    with no worker able to run it, :class:`DaskRunError` says so and the futures are
    cancelled. A cluster whose workers lack a resource a task needs is refused before anything
    is submitted. Other keyword options are :func:`graphene_sched.build_schedule`'s (input and
    cluster options)."""
    from distributed import Client, wait  # noqa: PLC0415

    time_scale = _number("time_scale", time_scale)
    if not (0 < time_scale < float("inf")):
        raise UsageError(f"time_scale: {time_scale} must be a finite number > 0")
    if isinstance(payload, str) and payload not in ("sleep", "cpu-burn"):
        raise UsageError(f"payload '{payload}' must be sleep, cpu-burn or a callable")
    if not (isinstance(payload, (str, Mapping)) or callable(payload)):
        raise UsageError(f"payload: expected sleep, cpu-burn, a callable or a dict of them, not {_tname(payload)}")
    if not (schedule is None or isinstance(schedule, (bool, str, Schedule))):
        raise UsageError(f"schedule: expected a scheduler's name, a graphene_sched.Schedule or False, not {_tname(schedule)}")
    if not (client is None or isinstance(client, str) or hasattr(client, "submit")):
        raise UsageError(f"client: expected a distributed.Client, an address or None, not {_tname(client)}")
    if processes is not None and not isinstance(processes, bool):
        raise UsageError(f"processes: expected True, False or None, not {_tname(processes)}")
    if timeout is not None:
        timeout = _number("timeout", timeout)
        if not (timeout > 0):
            raise UsageError(f"timeout: {timeout} must be a number > 0 or None")
    from dask.base import is_dask_collection  # noqa: PLC0415

    if is_dask_collection(dag):
        raise UsageError(
            f"dag: execute runs a graphene DAG (a path, a dict or a graphene_sched.Dag), not a Dask {_tname(dag)}: "
            "to compute a Dask collection in graphene's order, compute what graphene_sched.dask.prioritize(...) returns"
        )
    load_keys = {"format", "query", "executors", "demands", "seed"}
    load_opts = {k: v for k, v in opts.items() if k in load_keys}
    cluster_keys = {"machines", "capacity", "no_overbook"}
    cluster_opts = {k: v for k, v in opts.items() if k in cluster_keys}
    g = read_dag(dag, **load_opts)
    spec = read_cluster(cluster, **cluster_opts) if cluster is not None else read_cluster(**cluster_opts)
    overbook = spec.overbook if spec.overbook is not None else ["disk", "net"]
    hard = [r for r in g.resources if r not in overbook]

    # The order.
    order_name: Optional[str]
    sched: Optional[Schedule]
    if schedule is False:
        order_name, sched = None, None
    elif isinstance(schedule, Schedule):
        order_name, sched = schedule.scheduler, schedule
    else:
        order_name = schedule if isinstance(schedule, str) and schedule else "graphene"
        sched = build_schedule(g, spec, order_name, **{k: v for k, v in opts.items() if k not in load_keys | cluster_keys})
    priorities: Dict[str, int] = {}
    if sched is not None:
        order = sched.order
        priorities = {tid: len(order) - i for i, tid in enumerate(order)}

    tasks = expand(g)
    own = None
    if client is None:
        own = local_cluster(spec, hard, processes=bool(processes) if processes is not None else payload == "cpu-burn")
        client = Client(own)
        if _has_bokeh():
            _log.info("graphene: the Dask dashboard of this run is at %s", client.dashboard_link)
    elif isinstance(client, str):
        client = Client(client)
        own = client
    try:
        info = client.scheduler_info(n_workers=-1)
        _check_resources(tasks, hard, info["workers"])
        run = next(_runs)
        futures: Dict[str, Any] = {}
        keys: Dict[str, str] = {}
        for t in tasks:
            kind = payload.get(t.stage) if isinstance(payload, Mapping) else payload
            if kind is None:
                raise UsageError(f"payload gives no callable for stage '{t.stage}'")
            res = {r: float(t.demands[r]) for r in hard if t.demands.get(r, 0) > 0}
            key = f"graphene-{run}-{t.id}"
            keys[key] = t.id
            kw: Dict[str, Any] = {"key": key, "pure": False}
            if res:
                kw["resources"] = res
            if t.id in priorities:
                kw["priority"] = priorities[t.id]
            futures[t.id] = client.submit(
                _payload, t.id, t.stage, t.duration * time_scale, kind, *[futures[p] for p in t.parents], **kw
            )
        _wait(client, futures, keys, set(info["workers"]), timeout)
        # What the scheduler holds for each task: the priority and resources it was given.
        seen = client.run_on_scheduler(_annotations, list(keys))
        results = client.gather(list(futures.values()))
        info = client.scheduler_info(n_workers=-1)
    finally:
        if own is not None:
            client.close()
            if own is not client:
                own.close()

    workers = sorted(info["workers"])
    t0 = min(r[1] for r in results)
    out: List[Dict[str, Any]] = []
    values = {t.id: r[3] for t, r in zip(tasks, results)}
    for t, (addr, start, end, _) in zip(tasks, results):
        out.append(
            {
                "id": t.id,
                "stage": t.stage,
                "machine": workers.index(addr) if addr in workers else len(workers),
                "worker": addr,
                "start": (start - t0) / time_scale,
                "end": (end - t0) / time_scale,
            }
        )
    makespan = max(x["end"] for x in out)
    wall = makespan * time_scale
    annotations = {keys[k]: v for k, v in seen.items()}
    # Check it: durations too when the payload honours them; resources as Dask enforced them.
    check = Dag.from_dict(g.to_dict())
    check.resources = list(hard)
    for s in check.stages:
        s.demands = {r: v for r, v in s.demands.items() if r in hard}
        if not isinstance(s.tasks, int):
            s.tasks = [{**x, "demands": {r: v for r, v in (x.get("demands") or {}).items() if r in hard}} for x in s.tasks]
        if not isinstance(payload, str):
            s.duration = 1e-9 if s.duration is not None else None
            if not isinstance(s.tasks, int):
                s.tasks = [{**x, "duration": 1e-9} for x in s.tasks]
    cap = spec.machines[0].capacity if len(spec.machines) == 1 else {}
    realized_cluster = Cluster.uniform(len(workers), {r: cap[r] for r in check.resources if r in cap}, overbook=[])
    if own is None:
        # A cluster of the caller's: each worker's declared resources are its capacity.
        groups = []
        for w in workers:
            res = info["workers"][w].get("resources", {})
            groups.append({"count": 1, "capacity": {r: float(res.get(r, 0)) for r in check.resources}})
        realized_cluster = Cluster.from_dict({"machines": groups, "overbook": []})
    doc = {"dag": g.name, "tasks": [{k: v for k, v in x.items() if k != "worker"} for x in out]}
    verdict = validate(check, json.dumps(doc).encode(), realized_cluster)
    return Execution(g.name, order_name, out, makespan, wall, workers, verdict, priorities, annotations, values)


def _check_resources(tasks: List[Task], hard: List[str], workers: Mapping[str, Any]) -> None:
    """Refuses at once a cluster on which some task could never run."""
    if not workers:
        raise DaskRunError("the Dask cluster has no workers")
    most: Dict[str, float] = {}
    for w in workers.values():
        for r, v in (w.get("resources") or {}).items():
            most[r] = max(most.get(r, 0.0), float(v))
    for t in tasks:
        for r in hard:
            need = float(t.demands.get(r, 0) or 0)
            if need > 0 and most.get(r, 0.0) < need:
                have = f"at most {most[r]:g}" if r in most else "none of them declares it"
                raise DaskRunError(
                    f"task {t.id} needs Dask resource {r}={need:g} but no worker holds that much ({have}); "
                    f"start the workers with resources={{'{r}': ...}} (dask worker --resources '{r}=...'), "
                    f"or let execute start a LocalCluster (client=None)"
                )


def _wait(client: Any, futures: Mapping[str, Any], keys: Mapping[str, str], workers: Set[str], timeout: Optional[float]) -> None:
    """Waits for every future; polls so that a lost worker, a task no worker can run and the
    timeout are reported, never a silent hang. On an error the futures are cancelled."""
    from distributed import wait  # noqa: PLC0415

    deadline = None if timeout is None else time.monotonic() + timeout
    fs = list(futures.values())
    try:
        while True:
            step = 1.0 if deadline is None else max(0.0, min(1.0, deadline - time.monotonic()))
            try:
                wait(fs, timeout=step)
                return
            except TimeoutError:
                pass
            now = set(client.scheduler_info(n_workers=-1)["workers"])
            lost = sorted(workers - now)
            left = [f for f in fs if not f.done()]
            if lost:
                raise DaskRunError(f"worker(s) {', '.join(lost)} lost during the run; {len(left)} of {len(fs)} tasks unfinished")
            stuck = client.run_on_scheduler(_no_worker, [f.key for f in left])
            if stuck:
                k, res = stuck[0]
                raise DaskRunError(
                    f"task {keys.get(k, k)} needs resources {res} that no worker of the cluster holds "
                    f"({len(stuck)} task(s) waiting for a worker)"
                )
            if deadline is not None and time.monotonic() >= deadline:
                example = ", ".join(keys.get(f.key, f.key) for f in left[:3])
                raise DaskRunError(f"timed out after {timeout:g} s: {len(left)} of {len(fs)} tasks unfinished (e.g. {example})")
    except BaseException:
        client.cancel(fs)
        raise


def _no_worker(keys: List[str], dask_scheduler: Any = None) -> List[Tuple[str, Dict[str, float]]]:
    out = []
    for k in keys:
        ts = dask_scheduler.tasks.get(k)
        if ts is not None and ts.state == "no-worker":
            out.append((k, dict(ts.resource_restrictions or {})))
    return out


def _annotations(keys: List[str], dask_scheduler: Any = None) -> Dict[str, Any]:
    out = {}
    for k in keys:
        ts = dask_scheduler.tasks.get(k)
        if ts is None:
            continue
        out[k] = {"priority": list(ts.priority) if ts.priority else None, "resources": dict(ts.resource_restrictions or {})}
    return out


# ---------------------------------------------------------------------------------------------
# A user's own Dask computation in graphene's order

_log = logging.getLogger("graphene_sched.dask")

#: Seconds a task whose prefix Dask has never timed is assumed to last when no task of the graph
#: has a measured duration (otherwise the median of the measured ones is used).
DEFAULT_DURATION = 0.01


class DaskRunError(GrapheneError):
    """A Dask run that cannot finish: a wait timed out, a worker was lost, or no worker holds a
    resource a task needs. The message says which."""


@dataclass
class Plan:
    """graphene's order for a Dask task graph.

    ``priorities``: Dask key -> priority (larger runs earlier, as Dask's ``priority``
    annotation); the object itself is that function of a key (0 for keys it does not know), so
    it can be given as ``dask.annotate(priority=plan)`` or ``client.compute(..., priority=plan)``.
    ``stages``: graphene stage id -> the Dask task group it stands for; ``durations``: seconds per
    key prefix and where each came from (``"scheduler"``, ``"task-stream"``, ``"given"``,
    ``"config"``: Dask's ``distributed.scheduler.default-task-durations``, or ``"estimated"``); ``estimated``: the prefixes whose durations were estimated; ``dag`` and
    ``cluster``: what graphene planned on; ``schedule``: graphene's schedule of it; ``nbytes``: the
    mean result size in bytes per prefix of the graph where Dask measured one (reported, not
    planned: Dask does not hold tasks to a memory limit)."""

    priorities: Dict[Any, int]
    stages: Dict[str, str]
    durations: Dict[str, Tuple[float, str]]
    estimated: List[str]
    dag: Dag
    cluster: Cluster
    schedule: Schedule
    nbytes: Dict[str, float] = field(default_factory=dict)

    def __call__(self, key: Any) -> int:
        return self.priorities.get(key, 0)

    @contextmanager
    def annotate(self) -> Iterator[None]:
        """``dask.annotate(priority=self)``: every graph submitted inside gets graphene's order."""
        import dask  # noqa: PLC0415

        with dask.annotate(priority=_Lookup(self.priorities)):
            yield


class _Lookup:
    """A picklable key -> priority function (what the scheduler calls per key)."""

    def __init__(self, priorities: Mapping[Any, int]) -> None:
        self.priorities = dict(priorities)

    def __call__(self, key: Any) -> int:
        return self.priorities.get(key, 0)

    # Dask's blockwise fusion keeps the largest of the fused layers' priority annotations
    # (max()): the layers of one prioritize call share one lookup, so any of them will do.
    def __gt__(self, other: Any) -> bool:
        return False

    def __lt__(self, other: Any) -> bool:
        return False


def _split(key: Any) -> Tuple[str, str]:
    """(task group, task prefix) of a key, as the scheduler names them."""
    from dask.utils import key_split  # noqa: PLC0415
    from distributed.utils import key_split_group  # noqa: PLC0415

    return key_split_group(key), key_split(key)


def _natural(key: Any) -> Tuple[Any, ...]:
    if isinstance(key, tuple):
        return tuple((0, x, "") if isinstance(x, (int, float)) else (1, 0, str(x)) for x in key[1:])
    return ((1, 0, str(key)),)


def _sccs(nodes: List[str], succ: Mapping[str, Set[str]]) -> Dict[str, int]:
    """Strongly connected components (iterative Tarjan): node -> component number."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    on: Set[str] = set()
    stack: List[str] = []
    comp: Dict[str, int] = {}
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(succ.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(succ.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                n = len(set(comp.values()))
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp[w] = n
                    if w == v:
                        break
    return comp


def _workers_cluster(workers: Mapping[str, Mapping[str, Any]]) -> Cluster:
    """The cluster as the scheduler sees it: per worker its threads (``cpu``) and declared
    resources. Memory is not a limit Dask enforces, so it is not one here either."""
    groups: Dict[str, int] = {}
    for w in workers.values():
        cap = {"cpu": float(w.get("nthreads", 1) or 1)}
        cap.update({str(r): float(v) for r, v in (w.get("resources") or {}).items()})
        k = json.dumps(cap, sort_keys=True)
        groups[k] = groups.get(k, 0) + 1
    return Cluster.from_dict({"machines": [{"count": n, "capacity": json.loads(k)} for k, n in sorted(groups.items())], "overbook": []})


def _graph_of(collections: Sequence[Any]) -> Tuple[Dict[Any, Set[Any]], Dict[Any, Dict[str, float]]]:
    """The optimized low-level graph of Dask collections, or of one task graph dict, as key ->
    dependency keys (within the graph), and the ``resources`` annotations per key."""
    import dask  # noqa: PLC0415
    from dask._task_spec import convert_legacy_graph  # noqa: PLC0415
    from dask.base import collections_to_expr, is_dask_collection  # noqa: PLC0415

    if not collections:
        raise UsageError("give at least one Dask collection or task graph")
    resources: Dict[Any, Dict[str, float]] = {}
    if len(collections) == 1 and isinstance(collections[0], Mapping) and not is_dask_collection(collections[0]):
        raw = dict(collections[0])
    else:
        for i, c in enumerate(collections):
            if not is_dask_collection(c):
                raise UsageError(f"collections[{i}]: expected a Dask collection (delayed, dataframe, array, bag) or a task graph dict, not {_tname(c)}")
        from dask._expr import FinalizeCompute  # noqa: PLC0415

        # The graph `compute` sends (dask.compute and Client.compute finalize, then optimize).
        expr = FinalizeCompute(collections_to_expr(list(collections), optimize_graph=True)).optimize()
        raw = dict(expr.__dask_graph__())
        for k, v in (expr.__dask_annotations__().get("resources") or {}).items():
            if isinstance(v, Mapping):
                resources[k] = {str(r): float(x) for r, x in v.items()}
    dsk = convert_legacy_graph(raw)
    glob = dask.get_annotations().get("resources")
    deps: Dict[Any, Set[Any]] = {}
    for k, node in dsk.items():
        deps[k] = {d for d in getattr(node, "dependencies", ()) if d in dsk and d != k}
        if k not in resources and isinstance(glob, Mapping):
            resources[k] = {str(r): float(x) for r, x in glob.items()}
    return deps, resources


def _plan(
    deps: Mapping[Any, Set[Any]],
    resources: Mapping[Any, Mapping[str, float]],
    cluster: Cluster,
    measured: Mapping[str, Tuple[float, str]],
    nbytes: Mapping[str, float],
    scheduler: str = "graphene",
    options: Optional[Mapping[str, Any]] = None,
    granularity: str = "groups",
) -> Plan:
    """graphene's plan for a key graph: stages are Dask task groups (merged where groups depend
    on each other both ways), keys their tasks; with ``stages="keys"`` every key is a stage."""
    if granularity not in ("groups", "keys"):
        raise UsageError(f"stages '{granularity}' must be groups or keys")
    if not deps:
        raise UsageError("the Dask graph has no tasks")
    group_of: Dict[Any, str] = {}
    prefix_of: Dict[Any, str] = {}
    for k in deps:
        group_of[k], prefix_of[k] = _split(k)
    groups = sorted(set(group_of.values()))
    succ: Dict[str, Set[str]] = {g: set() for g in groups}
    for k, ds in deps.items():
        for d in ds:
            if group_of[d] != group_of[k]:
                succ[group_of[d]].add(group_of[k])
    comp = _sccs(groups, succ)
    # Keys of one component that depend on each other (a chain of one prefix, a tree
    # reduction) go to successive stages: a key's level is the longest path to it over the
    # dependencies inside its component. So every dependency between keys is an edge between
    # stages, and the stage graph is acyclic (components are, levels rise inside one).
    level: Dict[Any, int] = {}
    indeg = {k: len(ds) for k, ds in deps.items()}
    children: Dict[Any, List[Any]] = {}
    for k, ds in deps.items():
        for d in ds:
            children.setdefault(d, []).append(k)
    ready = [k for k, n in indeg.items() if n == 0]
    while ready:
        k = ready.pop()
        ck = comp[group_of[k]]
        level[k] = max((level[d] + 1 for d in deps[k] if comp[group_of[d]] == ck), default=0)
        for ch in children.get(k, ()):
            indeg[ch] -= 1
            if indeg[ch] == 0:
                ready.append(ch)
    if len(level) != len(deps):
        stuck = sorted((k for k in deps if k not in level), key=str)[:3]
        raise UsageError(f"the Dask graph has a cycle through {', '.join(map(repr, stuck))}")
    # A stage per (component, level), named s0, s1, ...; its keys in natural (index) order.
    stage_keys: Dict[Tuple[int, ...], List[Any]] = {}
    for k in deps:
        stage_keys.setdefault((comp[group_of[k]], level[k]), []).append(k)
    for ks in stage_keys.values():
        ks.sort(key=lambda k: (group_of[k], _natural(k), str(k)))
    if granularity == "keys":
        # A stage per key (its group's stage and its index there): the dependencies exactly as
        # Dask has them, where a group's stage would join sparse ones into all-to-all edges.
        stage_keys = {(*c, i): [k] for c, ks in list(stage_keys.items()) for i, k in enumerate(ks)}
    stage_of = {k: c for c, ks in stage_keys.items() for k in ks}
    members: Dict[int, List[str]] = {}
    for g in groups:
        members.setdefault(comp[g], []).append(g)
    # Durations: measured per prefix, else the median of the measured ones, else the default.
    known = sorted(v for p, (v, _) in measured.items() if v > 0 and p in set(prefix_of.values()))
    fallback = known[len(known) // 2] if known else DEFAULT_DURATION
    durations: Dict[str, Tuple[float, str]] = {}
    for p in sorted(set(prefix_of.values())):
        v, src = measured.get(p, (-1.0, ""))
        durations[p] = (v, src) if v > 0 else (fallback, "estimated")
    estimated = [p for p, (_, src) in durations.items() if src == "estimated"]
    # Resources: threads and what the workers declare; refuse what no worker has.
    declared: Dict[str, float] = {}
    for m in cluster.machines:
        for r, v in m.capacity.items():
            declared[r] = max(declared.get(r, 0.0), float(v))
    for k in sorted(resources, key=str):
        for r, v in resources[k].items():
            if v > 0 and declared.get(r, 0.0) < v:
                have = f"at most {declared[r]:g}" if r in declared else "none"
                raise DaskRunError(
                    f"task {k!r} needs resource {r}={v:g} but no worker of the cluster holds that much ({have}); "
                    f"start the workers with resources={{'{r}': ...}} (dask worker --resources '{r}=...')"
                )
    names = sorted(declared)
    # Stages in a topological order (a DAG file lists parents first).
    sedges: Dict[Tuple[int, ...], Set[Tuple[int, ...]]] = {c: set() for c in stage_keys}
    for k, ds in deps.items():
        for d in ds:
            a, b = stage_of[d], stage_of[k]
            if a != b:
                sedges[a].add(b)
    sin = {c: 0 for c in stage_keys}
    for a, bs in sedges.items():
        for b in bs:
            sin[b] += 1
    import heapq  # noqa: PLC0415

    heap = [(min(members[c[0]]), c[1], c) for c, n in sin.items() if n == 0]
    heapq.heapify(heap)
    comps: List[Tuple[int, ...]] = []
    while heap:
        *_, c = heapq.heappop(heap)
        comps.append(c)
        for b in sedges[c]:
            sin[b] -= 1
            if sin[b] == 0:
                heapq.heappush(heap, (min(members[b[0]]), b[1], b))
    sid = {c: f"s{i}" for i, c in enumerate(comps)}
    index = {k: i for c in comps for i, k in enumerate(stage_keys[c])}
    stages = []
    for c in comps:
        ks = stage_keys[c]
        parents: Dict[Tuple[int, ...], Set[Any]] = {}
        for k in ks:
            for d in deps[k]:
                pc = stage_of[d]
                if pc != c:
                    parents.setdefault(pc, set()).add((k, d))
        plist: List[Any] = []
        for pc in sorted(parents, key=lambda x: sid[x]):
            pairs = parents[pc]
            # one-to-one when child i depends on exactly parent i of an equally large stage.
            one = len(stage_keys[pc]) == len(ks) and len(pairs) == len(ks) and all(index[k] == index[d] for k, d in pairs)
            plist.append({"stage": sid[pc], "kind": "one-to-one"} if one else sid[pc])
        tasks = []
        for k in ks:
            dem: Dict[str, float] = {"cpu": 1.0}
            dem.update({r: float(v) for r, v in (resources.get(k) or {}).items() if v > 0})
            t: Dict[str, Any] = {"duration": max(durations[prefix_of[k]][0], 1e-6), "demands": dem}
            tasks.append(t)
        stages.append({"id": sid[c], "tasks": tasks, "parents": plist})
    dag = Dag.from_dict({"name": "dask", "resources": names, "stages": stages})
    sched = build_schedule(dag, cluster, scheduler, **dict(options or {}))
    order = sched.order
    rank: Dict[str, int] = {tid: len(order) - i for i, tid in enumerate(order)}
    priorities: Dict[Any, int] = {}
    for c in comps:
        for i, k in enumerate(stage_keys[c]):
            priorities[k] = rank[f"{sid[c]}[{i}]"]
    names_of = {sid[c]: "+".join(members[c[0]]) + (f" (level {c[1]})" if c[1] else "") for c in comps}
    if granularity == "keys":
        names_of = {sid[c]: str(stage_keys[c][0]) for c in comps}
    used = set(prefix_of.values())
    return Plan(priorities, names_of, durations, estimated, dag, cluster, sched, {p: v for p, v in nbytes.items() if p in used})


def _scheduler_state(dask_scheduler: Any = None) -> Dict[str, Any]:
    """Per prefix the scheduler's duration average and mean result size, and the workers."""
    durs = {name: float(tp.duration_average) for name, tp in dask_scheduler.task_prefixes.items()}
    size: Dict[str, List[float]] = {}
    for ts in dask_scheduler.tasks.values():
        if ts.nbytes and ts.nbytes > 0:
            s = size.setdefault(ts.prefix.name, [0.0, 0.0])
            s[0] += ts.nbytes
            s[1] += 1
    return {"durations": durs, "nbytes": {p: a / n for p, (a, n) in size.items()}}


def _measured(client: Any, task_stream: Any, durations: Optional[Mapping[str, float]]) -> Tuple[Dict[str, Tuple[float, str]], Dict[str, float]]:
    out: Dict[str, Tuple[float, str]] = {}
    nbytes: Dict[str, float] = {}
    # What the scheduler starts a prefix it has never run with (Dask's own config), below any
    # measurement.
    import dask  # noqa: PLC0415
    from dask.utils import parse_timedelta  # noqa: PLC0415

    for p, v in (dask.config.get("distributed.scheduler.default-task-durations", None) or {}).items():
        secs = parse_timedelta(v, default="s")
        if secs and secs > 0:
            out[str(p)] = (float(secs), "config")
    if client is not None:
        st = client.run_on_scheduler(_scheduler_state)
        # -1: never run. 0: run, but faster than the scheduler's resolution (whole microseconds,
        # so a trivial task can measure 0): a measurement all the same, kept as one microsecond.
        out.update({p: (max(v, 1e-6), "scheduler") for p, v in st["durations"].items() if v >= 0})
        nbytes.update(st["nbytes"])
    if task_stream is not None:
        from dask.utils import key_split  # noqa: PLC0415

        acc: Dict[str, List[float]] = {}
        for rec in getattr(task_stream, "data", task_stream):
            for ss in rec.get("startstops", ()):
                if ss.get("action") == "compute":
                    a = acc.setdefault(key_split(rec["key"]), [0.0, 0.0])
                    a[0] += float(ss["stop"]) - float(ss["start"])
                    a[1] += 1
            nb = rec.get("nbytes")
            if nb:
                nbytes.setdefault(key_split(rec["key"]), float(sum(nb.values()) if isinstance(nb, Mapping) else nb))
        out.update({p: (s / n, "task-stream") for p, (s, n) in acc.items() if n and s > 0})
    for p, v in (durations or {}).items():
        out[str(p)] = (_number(f"durations[{p!r}]", v), "given")
    return out, nbytes


def plan(
    *collections: Any,
    client: Any = None,
    cluster: Any = None,
    task_stream: Any = None,
    durations: Optional[Mapping[str, float]] = None,
    scheduler: str = "graphene",
    stages: str = "groups",
    **options: Any,
) -> Plan:
    """graphene's order for Dask collections (delayed, dataframe, array, bag) or one task graph
    dict, on the cluster ``client`` is connected to (each worker: its threads and declared
    resources), or on ``cluster`` (a :class:`graphene_sched.Cluster` or its dict), or on this
    machine's cores.

    Durations per key prefix come from ``durations`` (seconds), else a run's ``task_stream``
    (``client.get_task_stream()`` or its records), else the scheduler's duration averages of
    earlier runs (with ``client``), else Dask's ``distributed.scheduler.default-task-durations``
    config (what the scheduler assumes for a prefix it has never run); the rest are estimated
    (``Plan.estimated`` names them).
    A task's ``resources=`` annotation is its demand besides one thread; a resource no worker
    holds raises :class:`DaskRunError` naming it. ``stages``: ``"groups"`` (a stage per Dask
    task group, split by depth) or ``"keys"`` (a stage per key: exact dependencies, for graphs
    whose groups depend on each other sparsely, e.g. one chain per partition; a few thousand
    keys at most). ``scheduler`` and the other options are
    :func:`graphene_sched.build_schedule`'s search options (``improve=0``: the constructor
    alone, milliseconds instead of up to a second on a few hundred tasks)."""
    if client is not None and not hasattr(client, "run_on_scheduler"):
        raise UsageError(f"client: expected a distributed.Client or None, not {_tname(client)}")
    if durations is not None and not isinstance(durations, Mapping):
        raise UsageError(f"durations: expected a dict of prefix -> seconds, not {_tname(durations)}")
    deps, resources = _graph_of(collections)
    if cluster is not None:
        spec = cluster if isinstance(cluster, Cluster) else Cluster.from_dict(cluster)
    elif client is not None:
        spec = _workers_cluster(client.scheduler_info(n_workers=-1)["workers"])
        if spec.size == 0:
            raise DaskRunError("the Dask cluster has no workers")
    else:
        spec = Cluster.uniform(1, {"cpu": float(os.cpu_count() or 1)}, overbook=[])
    measured, nbytes = _measured(client, task_stream, durations)
    p = _plan(deps, resources, spec, measured, nbytes, scheduler, options, stages)
    if p.estimated:
        _log.info("graphene: estimated durations for %s", ", ".join(p.estimated))
    return p


def prioritize(*collections: Any, **options: Any) -> Tuple[Any, ...]:
    """The collections with graphene's priorities attached (a tuple, as ``dask.persist``
    returns), each giving the same results. ``compute``, ``persist`` and ``client.compute``
    honour them: each returned collection holds its graph already optimized, in one layer
    annotated with ``priority`` (as ``dask.annotate`` would), and is not optimized again
    (Dask's low-level fusion drops layer annotations). Options are :func:`plan`'s, or
    ``plan=`` a :class:`Plan` made by :func:`plan` for the same collections.

    Dask's dataframes (query planning) ignore collection annotations: for them use
    ``with plan(df).annotate(): df.compute()`` or the :class:`GrapheneOrder` scheduler plugin;
    prioritize warns and returns such a collection unchanged. A task graph dict is returned
    unchanged too (a dict holds no annotations): submit it inside ``plan(graph).annotate()``."""
    from dask.base import collections_to_expr  # noqa: PLC0415
    from dask.highlevelgraph import HighLevelGraph, MaterializedLayer  # noqa: PLC0415

    given = options.pop("plan", None)
    if given is not None and not isinstance(given, Plan):
        raise UsageError(f"plan: expected a graphene_sched.dask.Plan, not {_tname(given)}")
    p = given if given is not None else plan(*collections, **options)
    look = _Lookup(p.priorities)
    out = []
    for c in collections:
        g = c.__dask_graph__() if hasattr(c, "__dask_graph__") and not isinstance(c, Mapping) else None
        if not isinstance(g, HighLevelGraph):
            if not isinstance(c, Mapping):
                warnings.warn(
                    f"{type(c).__name__}: Dask ignores annotations on this collection; "
                    "use `with graphene_sched.dask.plan(...).annotate():` around compute, or the GrapheneOrder plugin",
                    stacklevel=2,
                )
            out.append(c)
            continue
        dsk = dict(collections_to_expr([c], optimize_graph=True).optimize().__dask_graph__())
        own = tuple(c.__dask_layers__()) if hasattr(c, "__dask_layers__") else ()
        # Collections that check their graph holds a layer of their own name get it.
        name = own[0] if len(own) == 1 else f"graphene-prioritized-{id(look)}"
        hg = HighLevelGraph({name: MaterializedLayer(dsk, annotations={"priority": look})}, {name: set()})
        rebuild, args = c.__dask_postpersist__()
        new = rebuild(hg, *args)
        new.__class__ = _unoptimized(type(new))
        out.append(new)
    return tuple(out)


_UNOPTIMIZED: Dict[type, type] = {}


def _keep(dsk: Any, keys: Any, **kwargs: Any) -> Any:
    return dsk


def _unoptimized(cls: type) -> type:
    """``cls`` whose graph is not optimized again (it already is; Dask's low-level fusion
    would drop the priority annotations)."""
    if cls not in _UNOPTIMIZED:
        _UNOPTIMIZED[cls] = type(cls.__name__, (cls,), {"__slots__": (), "__dask_optimize__": staticmethod(_keep), "__module__": cls.__module__})
    return _UNOPTIMIZED[cls]


try:
    from distributed.diagnostics.plugin import SchedulerPlugin as _SchedulerPlugin
except ImportError:  # pragma: no cover - distributed is imported above
    _SchedulerPlugin = object  # type: ignore[assignment,misc]


class GrapheneOrder(_SchedulerPlugin):  # type: ignore[misc,valid-type]
    """A scheduler plugin giving every graph submitted to the scheduler graphene's order::

        client.register_plugin(graphene_sched.dask.GrapheneOrder())

    On each graph it plans the new tasks on the workers the scheduler holds (threads and
    declared resources) with the prefixes' measured durations, then sets each new task's
    priority to graphene's before the tasks start: ``(-graphene priority, generation, dask.order
    rank)``, so Dask's own order breaks ties. Graphs of more than ``max_tasks`` new tasks keep
    Dask's order (planning runs inside the scheduler's event loop, so by default graphene's
    constructor runs without its improvement search: ``improve=0``; ``stages`` is
    :func:`plan`'s; other keyword options are :func:`graphene_sched.build_schedule`'s). ``plans`` keeps the last ``keep`` plans'
    summaries (tasks, estimated prefixes, seconds spent) for inspection."""

    name = "graphene-order"

    def __init__(self, max_tasks: int = 20000, keep: int = 16, stages: str = "groups", **options: Any) -> None:
        if stages not in ("groups", "keys"):
            raise UsageError(f"stages '{stages}' must be groups or keys")
        self.max_tasks = int(max_tasks)
        self.keep = int(keep)
        self.stages = stages
        self.options = {"improve": 0, **options}
        self.plans: List[Dict[str, Any]] = []

    def update_graph(self, scheduler: Any, *, tasks: Any = None, **kwargs: Any) -> None:
        """Plans the graph's new tasks and sets their priorities (the scheduler calls it before
        the tasks are transitioned)."""
        t0 = time.perf_counter()
        try:
            new = [scheduler.tasks[k] for k in (tasks or ()) if k in scheduler.tasks]
            new = [ts for ts in new if ts.state == "released" and ts.run_spec is not None and ts.priority]
            if not new or len(new) > self.max_tasks:
                return
            keys = {ts.key for ts in new}
            deps = {ts.key: {d.key for d in ts.dependencies if d.key in keys} for ts in new}
            res = {ts.key: dict(ts.resource_restrictions or {}) for ts in new if ts.resource_restrictions}
            workers = {
                ws.address: {"nthreads": ws.nthreads, "resources": dict(ws.resources)} for ws in scheduler.workers.values()
            }
            if not workers:
                return
            measured = {n: (max(float(tp.duration_average), 1e-6), "scheduler") for n, tp in scheduler.task_prefixes.items() if tp.duration_average >= 0}
            try:
                p = _plan(deps, res, _workers_cluster(workers), measured, {}, "graphene", self.options, getattr(self, "stages", "groups"))
            except DaskRunError as e:
                _log.warning("graphene: %s", e)
                return
            for ts in new:
                pr = ts.priority
                ts.priority = (-p.priorities[ts.key],) + tuple(pr[1:])
            self.plans.append({"tasks": len(new), "estimated": p.estimated, "seconds": time.perf_counter() - t0})
            del self.plans[: -self.keep]
        except Exception as e:  # never break the scheduler
            _log.exception("graphene: planning failed, Dask's order kept: %s", e)
