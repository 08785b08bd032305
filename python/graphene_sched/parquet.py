"""A replay's tables as Arrow tables and Parquet files, with the columns and types of ``graphene
replay --format parquet``: ``jobs`` (job, queue, arrival, finish, jct, tasks), ``schedule``
(job, task, machine, start, end) and ``utilization`` (t, the fraction of each resource in use,
running tasks), every column non-null; strings, int64 counts and machines, doubles for times
and fractions. Needs pyarrow: ``pip install 'graphene-sched[parquet]'``.

Example::

    import graphene_sched, graphene_sched.parquet as gp
    r = graphene_sched.replay("traces/small.csv")
    gp.tables(r)["jobs"].column("jct")
    gp.save(r, "out")           # the files `replay --format parquet` writes
    gp.read("out")["schedule"]  # from either
"""

from __future__ import annotations

import csv
import io
import os
from typing import Any, Dict, List

try:
    import pyarrow as pa
    import pyarrow.parquet as pq
except ImportError as e:
    from . import _missing_extra

    raise _missing_extra("graphene_sched.parquet", "pyarrow", "parquet", e) from e

from . import GrapheneIOError, PathLike, ReplayResult, UsageError, _folder, _tname, _write

__all__ = ["TABLES", "tables", "save", "read"]

#: The tables of a replay, in the order the CLI writes them.
TABLES = ("jobs", "schedule", "utilization")


def _rows(text: str) -> List[List[str]]:
    return list(csv.reader(io.StringIO(text)))[1:]


def _table(columns: Dict[str, Any], types: Dict[str, Any]) -> Any:
    fields = [pa.field(name, types[name], nullable=False) for name in columns]
    return pa.table([pa.array(v, type=types[k]) for k, v in columns.items()], schema=pa.schema(fields))


def tables(result: ReplayResult) -> Dict[str, Any]:
    """The replay's three tables as ``pyarrow.Table`` objects, keyed ``jobs``, ``schedule`` and
    ``utilization``: the same columns, types and values as the CLI's Parquet files."""
    if not isinstance(result, ReplayResult):
        raise UsageError(f"result: expected a graphene_sched.ReplayResult, not {_tname(result)}")
    f64, i64, s = pa.float64(), pa.int64(), pa.string()
    jobs = _rows(result.jobs_csv)
    runs = _rows(result.schedule_csv)
    out = {
        "jobs": _table(
            {
                "job": [r[0] for r in jobs],
                "queue": [r[1] for r in jobs],
                "arrival": [float(r[2]) for r in jobs],
                "finish": [float(r[3]) for r in jobs],
                "jct": [float(r[4]) for r in jobs],
                "tasks": [int(r[5]) for r in jobs],
            },
            {"job": s, "queue": s, "arrival": f64, "finish": f64, "jct": f64, "tasks": i64},
        ),
        "schedule": _table(
            {
                "job": [r[0] for r in runs],
                "task": [r[1] for r in runs],
                "machine": [int(r[2]) for r in runs],
                "start": [float(r[3]) for r in runs],
                "end": [float(r[4]) for r in runs],
            },
            {"job": s, "task": s, "machine": i64, "start": f64, "end": f64},
        ),
    }
    summary = result.summary
    series = summary.get("utilization", [])
    resources = list(summary.get("resources", []))
    cols: Dict[str, List[float]] = {"t": [float(p["t"]) for p in series]}
    for i, r in enumerate(resources):
        cols[r] = [float(p["used"][i]) if i < len(p["used"]) else 0.0 for p in series]
    cols["running"] = [float(p["running"]) for p in series]
    out["utilization"] = _table(cols, {k: f64 for k in cols})
    return out


def save(result: ReplayResult, out: PathLike) -> None:
    """Writes summary.json and jobs, schedule and utilization ``.parquet`` into the folder
    ``out``: what ``replay --out OUT --format parquet`` writes for the same replay."""
    made = tables(result)
    out = _folder(out)
    for name, table in made.items():
        path = os.path.join(out, f"{name}.parquet")
        try:
            pq.write_table(table, path)
        except (OSError, pa.ArrowException) as e:
            raise GrapheneIOError(f"{path}: {e}") from None
    _write(os.path.join(out, "summary.json"), result.summary_json)


def read(out: PathLike) -> Dict[str, Any]:
    """The Parquet tables of a replay folder (written by ``replay --format parquet`` or
    :func:`save`) as ``pyarrow.Table`` objects; a missing one raises
    :class:`graphene_sched.GrapheneIOError` naming the file."""
    if not isinstance(out, (str, os.PathLike)):
        raise UsageError(f"out: expected a path, not {_tname(out)}")
    got = {}
    for name in TABLES:
        path = os.path.join(out, f"{name}.parquet")
        try:
            got[name] = pq.read_table(path)
        except (OSError, pa.ArrowException) as e:
            raise GrapheneIOError(f"{path}: {e}") from None
    return got
