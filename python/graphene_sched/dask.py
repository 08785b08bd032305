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

import itertools
import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

try:
    import distributed  # noqa: F401 - only to say which extra is missing
except ImportError as e:
    raise ImportError(
        f"graphene_sched.dask needs dask[distributed] ({e.name or e} is missing): pip install 'graphene-sched[dask]'",
        name=e.name,
    ) from e

from . import Cluster, Dag, Schedule, UsageError, _number, _tname, build_schedule, read_cluster, read_dag, validate

__all__ = ["execute", "Execution", "expand", "local_cluster"]

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
    start), and what the validator said."""

    dag: str
    order: Optional[str]
    tasks: List[Dict[str, Any]]
    makespan: float
    wall_seconds: float
    workers: List[str]
    validation: str
    priorities: Dict[str, int] = field(repr=False, default_factory=dict)
    annotations: Dict[str, Any] = field(repr=False, default_factory=dict)

    def schedule(self) -> Dict[str, Any]:
        """The realized schedule in the schedule file's layout (for graphene_sched.validate)."""
        return {"dag": self.dag, "scheduler": f"dask/{self.order or 'default'}", "makespan": self.makespan, "tasks": self.tasks}

    def to_pandas(self) -> Any:
        """The realized tasks as a pandas DataFrame (needs ``[pandas]``)."""
        from . import _pandas  # noqa: PLC0415

        return _pandas().DataFrame(self.tasks)


def _payload(task_id: str, stage: str, seconds: float, kind: Any, *deps: Any) -> Tuple[str, float, float]:
    from distributed import get_worker  # noqa: PLC0415

    start = time.time()
    if kind == "sleep":
        time.sleep(seconds)
    elif kind == "cpu-burn":
        end = time.perf_counter() + seconds
        x = 0
        while time.perf_counter() < end:
            x += 1
    else:
        kind(task_id, stage, seconds)
    return get_worker().address, start, time.time()


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
        dashboard_address=None,
    )


def execute(
    dag: Any,
    schedule: Union[None, str, Schedule, bool] = None,
    client: Any = None,
    payload: Union[str, Callable[..., Any], Mapping[str, Callable[..., Any]]] = "sleep",
    time_scale: float = 0.01,
    cluster: Any = None,
    processes: Optional[bool] = None,
    **opts: Any,
) -> Execution:
    """Runs ``dag`` on Dask and returns the realized, validated schedule.

    ``schedule``: None or ``"graphene"`` (graphene's order), another offline scheduler's name
    (``"cp"``, ``"tetris"``, ...), a :class:`graphene_sched.Schedule`, or ``False`` (no priorities:
    Dask's order; True is graphene's). ``client``: a ``distributed.Client``, an address string, or None (a
    LocalCluster sized like ``cluster`` is started and closed). Other keyword options are
    :func:`graphene_sched.build_schedule`'s (input and cluster options)."""
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
    elif isinstance(client, str):
        client = Client(client)
        own = client
    try:
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
        wait(list(futures.values()))
        # What the scheduler holds for each task: the priority and resources it was given.
        seen = client.run_on_scheduler(_annotations, list(keys))
        results = client.gather(list(futures.values()))
        info = client.scheduler_info()
    finally:
        if own is not None:
            client.close()
            if own is not client:
                own.close()

    workers = sorted(info["workers"])
    t0 = min(r[1] for r in results)
    out: List[Dict[str, Any]] = []
    for t, (addr, start, end) in zip(tasks, results):
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
    return Execution(g.name, order_name, out, makespan, wall, workers, verdict, priorities, annotations)


def _annotations(keys: List[str], dask_scheduler: Any = None) -> Dict[str, Any]:
    out = {}
    for k in keys:
        ts = dask_scheduler.tasks.get(k)
        if ts is None:
            continue
        out[k] = {"priority": list(ts.priority) if ts.priority else None, "resources": dict(ts.resource_restrictions or {})}
    return out
