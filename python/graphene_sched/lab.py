"""graphene-lab: grids of replays and offline comparisons, run on Dask distributed.

    graphene-lab run SPEC.toml --out DIR [--workers N | --address tcp://HOST:PORT] [--graphene BIN]
    graphene-lab report SPEC.toml --out DIR      # the tables again, from what DIR holds
    graphene-lab check SPEC.toml                 # validate the spec, count its units, run nothing

A spec (TOML) lists workloads, each replayed under several schedulers, and optionally offline
comparisons and gains between pairs of schedulers. Every unit of work (a generated trace, one
replay of one workload under one scheduler, one offline comparison) is one Dask task that runs
the ``graphene`` command itself (``python -m graphene_sched``, the CLI's code in the extension,
or the binary given by ``--graphene``), so every figure is the CLI's, byte for byte. A generated
workload is generated once (a task of its own) and every replay of it waits for that task.

Results go to DIR: ``results.parquet`` (one row per workload and scheduler: workload, family,
profile, load, seed, scheduler, command, options, jobs, tasks, mean_jct, median_jct, p90_jct,
makespan, wall_seconds, key), ``results.md`` (a table per workload), ``workloads.csv``, and
with gains ``gains.csv``, ``summary.md`` and ``cdf-GROUP.svg``; with offline comparisons
``compare.parquet``, ``compare.md`` and ``compare-NAME.svg``; a workload with a ``baseline``
gets ``charts/WORKLOAD.svg`` (the per-job JCT gap of each scheduler against it).

Resumable: each unit's outputs are kept under DIR keyed by a hash of its inputs (file contents,
not names), its options and graphene's version; a unit already there is not run again, so a
killed run restarted with the same command finishes the rest. Workers read the inputs and write
under DIR themselves: on a cluster of several machines, DIR and the inputs must be on a file
system every worker sees.

Needs ``pip install 'graphene-sched[lab]'`` (dask[distributed], pyarrow; tomli on Python < 3.11).
The spec's layout is in docs/lab.md.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import itertools
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

try:
    import distributed  # noqa: F401 - only to say which extra is missing
    import pyarrow  # noqa: F401
except ImportError as e:
    from . import _missing_extra

    raise _missing_extra("graphene_sched.lab", "dask[distributed] and pyarrow", "lab", e) from e

__all__ = ["SpecError", "UnitError", "Spec", "load_spec", "plan", "run", "report", "dump_toml", "main"]


class SpecError(Exception):
    """A spec that cannot run: the message names the spec file and the key."""


class UnitError(Exception):
    """A unit whose command failed: the message holds the command and its stderr."""


# ---------------------------------------------------------------------------------------------
# The graphene command


def _cmd(graphene: Optional[str]) -> List[str]:
    """How to run the graphene command: the binary given, else the extension's entry point."""
    if graphene:
        return [os.fspath(Path(graphene).resolve())]
    return [sys.executable, "-m", "graphene_sched"]


_HELP: Dict[Tuple[str, ...], str] = {}


def _help(cmd: List[str], *sub: str) -> str:
    k = (*cmd, *sub)
    if k not in _HELP:
        r = subprocess.run([*cmd, *sub, "--help"], capture_output=True, text=True)
        if r.returncode != 0:
            raise SpecError(f"cannot run {' '.join([*cmd, *sub])} --help: {r.stderr.strip()}")
        _HELP[k] = r.stdout
    return _HELP[k]


def _flags(cmd: List[str], *sub: str) -> set:
    return set(re.findall(r"--([a-z0-9][a-z0-9-]*)", _help(cmd, *sub)))


def _online_schedulers(cmd: List[str]) -> Optional[set]:
    m = re.search(r"--scheduler <SCHEDULER>\s*\n\s*[^\n:]*:\s*([^\n]+)", _help(cmd, "replay"))
    return {s.strip() for s in m.group(1).split(",")} if m else None


def _version(cmd: List[str]) -> str:
    r = subprocess.run([*cmd, "--version"], capture_output=True, text=True)
    return r.stdout.strip()


# ---------------------------------------------------------------------------------------------
# The spec

_TOP = {"title", "note", "scheduler", "workload", "gain", "compare", "report"}
_WORKLOAD = {"name", "family", "profile", "trace", "gen-trace", "sample", "cluster", "machines", "schedulers",
             "options", "seeds", "grid", "baseline", "keep-schedules"}
_SAMPLE = {"trace", "fraction", "load", "at-once", "machine-cpu", "machine-mem"}
_GAIN = {"group", "column", "scheduler", "baseline", "label", "throughput"}
_COMPARE = {"name", "dags", "cluster", "machines", "schedulers", "seeds", "options"}
_REPORT = {"workload-charts"}
_SCHED = {"scheduler", "options"}
# Flags graphene-lab sets itself.
_OWN_REPLAY = {"out", "scheduler", "quiet", "no-timing", "help", "trace-out", "format", "cluster", "machines"}
_OWN_GEN = {"out", "seed", "quiet", "help", "format"}
_OWN_COMPARE = {"csv", "json", "help", "schedulers", "seed", "cluster", "machines"}
# Flags whose values are paths (resolved against the spec's folder and checked to exist).
_PATHS = {"dags", "trace-dags", "cluster", "decima-model", "waves"}


@dataclass
class Variant:
    """A scheduler as a workload names it: the CLI's scheduler and its flags."""

    name: str
    scheduler: str
    args: List[str]


@dataclass
class Workload:
    """One workload after expansion (one seed, one point of its grid)."""

    name: str
    family: str
    profile: str
    load: str
    seed: Optional[int]
    schedulers: List[str]
    trace: Optional[Path] = None  # a given trace
    gen: Optional[List[str]] = None  # gen-trace's flags (without --seed, --out)
    sample: Optional[Dict[str, Any]] = None  # the sample generator's settings
    cluster_args: List[str] = field(default_factory=list)
    options: List[str] = field(default_factory=list)
    baseline: Optional[str] = None
    keep: bool = False
    gen_key: Optional[str] = None  # set by plan()


@dataclass
class Gain:
    group: str
    column: str
    scheduler: str
    baseline: str
    label: str
    throughput: bool


@dataclass
class Compare:
    name: str
    seed: Optional[int]
    dags: List[Path]
    args: List[str]  # cluster and option flags
    schedulers: Optional[List[str]]


@dataclass
class Spec:
    """A checked spec: its named schedulers, its workloads expanded (one per grid point and seed),
    its gains and its offline comparisons."""

    path: Path
    title: str
    note: str
    variants: Dict[str, Variant]
    workloads: List[Workload]
    gains: List[Gain]
    compares: List[Compare]
    workload_charts: bool = True


def _toml(path: Path) -> Dict[str, Any]:
    try:
        import tomllib  # type: ignore[import-not-found]  # noqa: PLC0415
    except ImportError:  # Python < 3.11
        try:
            import tomli as tomllib  # type: ignore[import-not-found,no-redef]  # noqa: PLC0415
        except ImportError:
            raise SpecError("reading a spec on Python < 3.11 needs tomli: pip install 'graphene-sched[lab]'") from None
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except OSError as e:
        raise SpecError(f"{path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{path}: {e}") from None


class _Checker:
    """Typed access to the spec's tables; every error names the spec file and the key."""

    def __init__(self, path: Path, cmd: List[str]):
        self.path, self.cmd = path, cmd
        self.base = path.resolve().parent

    def fail(self, at: str, msg: str) -> SpecError:
        return SpecError(f"{self.path}: {at}: {msg}")

    def keys(self, d: Dict[str, Any], allowed: set, at: str) -> None:
        for k in d:
            if k not in allowed:
                where = f"{at}.{k}" if at else k
                raise self.fail(where, f"unknown key (expected one of: {', '.join(sorted(allowed))})")

    def get(self, d: Dict[str, Any], k: str, kinds: Any, what: str, at: str, required: bool = False, default: Any = None) -> Any:
        where = f"{at}.{k}" if at else k
        if k not in d:
            if required:
                raise self.fail(where, f"missing (expected {what})")
            return default
        v = d[k]
        ok = isinstance(v, kinds) and not (isinstance(v, bool) and bool not in (kinds if isinstance(kinds, tuple) else (kinds,)))
        if not ok:
            raise self.fail(where, f"expected {what}, not {_tname(v)} {v!r}"[:300])
        return v

    def named_tables(self, d: Dict[str, Any], key: str, allowed: set) -> Iterable[Tuple[Dict[str, Any], str, str]]:
        """Each table of the array `key` ([[key]]) as (table, its name, where it is for errors),
        its keys checked against `allowed`."""
        for i, t in enumerate(self.get(d, key, list, f"an array of tables ([[{key}]])", "", default=[])):
            at = f"{key}[{i}]"
            if not isinstance(t, dict):
                raise self.fail(at, "expected a table")
            name = self.get(t, "name", str, "a string", at, required=True)
            at = f"{key}[{i}] ({name})"
            self.keys(t, allowed, at)
            yield t, name, at

    def path_of(self, v: Any, at: str) -> Path:
        if not isinstance(v, str):
            raise self.fail(at, f"expected a path (a string), not {_tname(v)}")
        p = Path(v)
        if not p.is_absolute():
            p = self.base / p
        if not p.exists():
            raise self.fail(at, f"{v}: no such file (paths are relative to the spec's folder, {self.base})")
        return p

    def flags(self, opts: Any, allowed: set, own: set, at: str) -> List[str]:
        """A table of CLI flags (key = the flag without its dashes) as arguments."""
        if not isinstance(opts, dict):
            raise self.fail(at, f"expected a table of flags, not {_tname(opts)}")
        out: List[str] = []
        for k, v in opts.items():
            where = f"{at}.{k}"
            if k in own:
                raise self.fail(where, "set by graphene-lab itself; remove it")
            if k not in allowed:
                raise self.fail(where, "not a flag of the command (see its --help)")
            out += self.flag(k, v, where)
        return out

    def flag(self, k: str, v: Any, where: str) -> List[str]:
        if isinstance(v, bool):
            return [f"--{k}"] if v else []
        if isinstance(v, (int, float, str)):
            vals = [v]
        elif isinstance(v, list) and v and all(isinstance(x, (int, float, str)) and not isinstance(x, bool) for x in v):
            vals = v
        else:
            raise self.fail(where, f"expected a string, a number, a boolean or a non-empty list of them, not {_tname(v)}")
        if k in _PATHS:
            vals = [str(self.path_of(x, where)) for x in vals]
        if len(vals) == 1 and str(vals[0]).startswith("-"):
            # A value that starts with a dash (--misestimate=-0.5:-0.25) is joined to its flag,
            # or the command would read it as a flag of its own.
            return [f"--{k}={vals[0]}"]
        return [f"--{k}", *(str(x) for x in vals)]


def _tname(v: Any) -> str:
    return {dict: "table", list: "array", str: "string", bool: "boolean", int: "integer", float: "float"}.get(type(v), type(v).__name__)


def load_spec(path: Any, graphene: Optional[str] = None, spec: Optional[Dict[str, Any]] = None) -> Spec:
    """Reads and checks a spec (or ``spec``, its parsed form, resolved against ``path``'s folder);
    raises :class:`SpecError` naming the file and the key of the first problem."""
    path = Path(path)
    d = spec if spec is not None else _toml(path)
    cmd = _cmd(graphene)
    c = _Checker(path, cmd)
    c.keys(d, _TOP, "")
    replay_flags = _flags(cmd, "replay")
    gen_flags = _flags(cmd, "gen-trace")
    known = _online_schedulers(cmd)

    variants: Dict[str, Variant] = {}
    scheds = c.get(d, "scheduler", dict, "a table of named schedulers", "", default={})
    for name, v in scheds.items():
        at = f"scheduler.{name}"
        if not isinstance(v, dict):
            raise c.fail(at, f"expected a table with scheduler and options, not {_tname(v)}")
        c.keys(v, _SCHED, at)
        base = c.get(v, "scheduler", str, "a scheduler's name", at, required=True)
        # A scheduler's own options follow its name after colons (graphene-plan:every=10).
        if known is not None and base.split(":")[0] not in known:
            raise c.fail(f"{at}.scheduler", f"unknown scheduler {base!r} (one of: {', '.join(sorted(known))})")
        args = c.flags(v.get("options", {}), replay_flags, _OWN_REPLAY, f"{at}.options")
        variants[name] = Variant(name, base, args)

    def variant(name: Any, at: str) -> str:
        if not isinstance(name, str):
            raise c.fail(at, f"expected a scheduler's name, not {_tname(name)}")
        if name not in variants:
            if known is not None and name.split(":")[0] not in known:
                raise c.fail(at, f"unknown scheduler {name!r}: neither a [scheduler.NAME] of the spec nor one of {', '.join(sorted(known))}")
            variants[name] = Variant(name, name, [])
        return name

    workloads: List[Workload] = []
    for w, name, at in c.named_tables(d, "workload", _WORKLOAD):
        sources = [k for k in ("trace", "gen-trace", "sample") if k in w]
        if len(sources) != 1:
            raise c.fail(at, "needs exactly one of trace, gen-trace or sample" + (f" (has {', '.join(sources)})" if sources else ""))
        family = c.get(w, "family", str, "a string", at, default=name)
        schedulers = c.get(w, "schedulers", list, "an array of scheduler names", at, required=True)
        if not schedulers:
            raise c.fail(f"{at}.schedulers", "empty")
        schedulers = [variant(s, f"{at}.schedulers[{j}]") for j, s in enumerate(schedulers)]
        if len(set(schedulers)) != len(schedulers):
            raise c.fail(f"{at}.schedulers", "names a scheduler twice")
        options = c.flags(w.get("options", {}), replay_flags, _OWN_REPLAY, f"{at}.options")
        cluster_args: List[str] = []
        if "cluster" in w and "machines" in w:
            raise c.fail(at, "has both cluster and machines; give one")
        if "cluster" in w:
            cluster_args = ["--cluster", str(c.path_of(w["cluster"], f"{at}.cluster"))]
        elif "machines" in w:
            m = c.get(w, "machines", int, "a positive integer", at)
            if m < 1:
                raise c.fail(f"{at}.machines", f"expected a positive integer, not {m}")
            cluster_args = ["--machines", str(m)]
        baseline = c.get(w, "baseline", str, "a scheduler's name", at)
        if baseline is not None and baseline not in schedulers:
            raise c.fail(f"{at}.baseline", f"{baseline!r} is not one of the workload's schedulers")
        keep = c.get(w, "keep-schedules", bool, "a boolean", at, default=False)
        profile = c.get(w, "profile", str, "a string", at)
        grid = c.get(w, "grid", dict, "a table of arrays", at, default={})
        if "trace" in w:
            if grid or "seeds" in w:
                raise c.fail(at, "grid and seeds go with gen-trace or sample, not with a given trace")
            workloads.append(Workload(name, family, profile or "", "", None, schedulers, trace=c.path_of(w["trace"], f"{at}.trace"),
                                      cluster_args=cluster_args, options=options, baseline=baseline, keep=keep))
            continue
        seeds = c.get(w, "seeds", list, "an array of integers", at, required=True)
        if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds):
            raise c.fail(f"{at}.seeds", "expected a non-empty array of non-negative integers")
        kind = "gen-trace" if "gen-trace" in w else "sample"
        table = c.get(w, kind, dict, "a table", at)
        for k, vals in grid.items():
            if not isinstance(vals, list) or not vals:
                raise c.fail(f"{at}.grid.{k}", "expected a non-empty array of values")
            if k in table:
                raise c.fail(f"{at}.grid.{k}", f"also set in {kind}; set it in one place")
        points = [dict(zip(grid, p)) for p in itertools.product(*grid.values())] or [{}]
        names = set()
        for p in points:
            try:
                pname = name.format(**p)
            except (KeyError, IndexError, ValueError) as e:
                raise c.fail(f"{at}.name", f"cannot fill in {name!r} from the grid: {e}") from None
            if pname in names:
                raise c.fail(f"{at}.name", f"{name!r} gives the name {pname!r} to several points of the grid: use {{KEY}} for each grid key")
            names.add(pname)
            t = {**table, **p}
            tat = f"{at}.{kind}"
            if kind == "gen-trace":
                jobs = t.get("jobs")
                if not (isinstance(jobs, int) and not isinstance(jobs, bool) and jobs > 0) and not (
                    isinstance(jobs, list) and len(jobs) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in jobs) and 0 < jobs[0] <= jobs[1]
                ):
                    raise c.fail(f"{tat}.jobs", "expected a positive integer or a range [LOW, HIGH] (drawn per seed)")
                rest = {k: v for k, v in t.items() if k != "jobs"}
                flags = c.flags(rest, gen_flags, _OWN_GEN, tat)
                arrival = t.get("arrival", "poisson:10")
                load = "once" if arrival == "all-at-once" else str(t.get("load", ""))
                prof = profile or str(t.get("demands", "mixed"))
                for s in seeds:
                    n = jobs if isinstance(jobs, int) else random.Random(f"jobs-{family}-{s}").randint(jobs[0], jobs[1])
                    workloads.append(Workload(f"{pname}-s{s}", family, prof, load, s, schedulers, gen=["--jobs", str(n), *flags],
                                              cluster_args=cluster_args, options=options, baseline=baseline, keep=keep))
            else:
                c.keys(t, _SAMPLE, tat)
                smp = {
                    "trace": str(c.path_of(c.get(t, "trace", str, "a path", tat, required=True), f"{tat}.trace")),
                    "fraction": float(c.get(t, "fraction", (int, float), "a number in (0, 1]", tat, required=True)),
                    "load": float(c.get(t, "load", (int, float), "a positive number", tat, required=True)),
                    "at_once": c.get(t, "at-once", bool, "a boolean", tat, default=False),
                    "cpu": float(c.get(t, "machine-cpu", (int, float), "a positive number", tat, default=96.0)),
                    "mem": float(c.get(t, "machine-mem", (int, float), "a positive number", tat, default=100.0)),
                }
                if not 0 < smp["fraction"] <= 1:
                    raise c.fail(f"{tat}.fraction", f"expected a number in (0, 1], not {smp['fraction']}")
                for k in ("load", "cpu", "mem"):
                    if not smp[k] > 0:
                        raise c.fail(f"{tat}.{k}", "expected a positive number")
                if cluster_args:
                    raise c.fail(at, "a sample's cluster is sized by its load: no cluster or machines")
                load_label = "once" if smp["at_once"] else _num(t["load"])
                for s in seeds:
                    workloads.append(Workload(f"{pname}-s{s}", family, profile or "own", load_label, s, schedulers, sample=smp,
                                              options=options, baseline=baseline, keep=keep))
    seen: Dict[str, int] = {}
    for w in workloads:
        if w.name in seen:
            raise c.fail("workload", f"two workloads are named {w.name!r}")
        seen[w.name] = 1

    gains: List[Gain] = []
    for i, g in enumerate(c.get(d, "gain", list, "an array of tables ([[gain]])", "", default=[])):
        at = f"gain[{i}]"
        if not isinstance(g, dict):
            raise c.fail(at, "expected a table")
        c.keys(g, _GAIN, at)
        s = variant(c.get(g, "scheduler", str, "a scheduler's name", at, required=True), f"{at}.scheduler")
        b = variant(c.get(g, "baseline", str, "a scheduler's name", at, required=True), f"{at}.baseline")
        gains.append(Gain(c.get(g, "group", str, "a string", at, default=s), c.get(g, "column", str, "a string", at, default="fair"), s, b,
                          c.get(g, "label", str, "a string", at, default=variants[b].scheduler),
                          c.get(g, "throughput", bool, "a boolean", at, default=True)))

    compares: List[Compare] = []
    cmp_flags = _flags(cmd, "compare") if "compare" in d else set()
    for x, name, at in c.named_tables(d, "compare", _COMPARE):
        dags = c.get(x, "dags", list, "an array of paths", at, required=True)
        if not dags:
            raise c.fail(f"{at}.dags", "empty")
        paths = [c.path_of(p, f"{at}.dags[{j}]") for j, p in enumerate(dags)]
        args: List[str] = []
        if "cluster" in x and "machines" in x:
            raise c.fail(at, "has both cluster and machines; give one")
        if "cluster" in x:
            args = ["--cluster", str(c.path_of(x["cluster"], f"{at}.cluster"))]
        elif "machines" in x:
            args = ["--machines", str(c.get(x, "machines", int, "a positive integer", at))]
        args += c.flags(x.get("options", {}), cmp_flags, _OWN_COMPARE, f"{at}.options")
        sch = c.get(x, "schedulers", list, "an array of offline scheduler names", at)
        if sch is not None and not all(isinstance(s, str) for s in sch):
            raise c.fail(f"{at}.schedulers", "expected an array of names")
        seeds = c.get(x, "seeds", list, "an array of integers", at, default=[None])
        for s in seeds:
            if s is not None and (not isinstance(s, int) or isinstance(s, bool) or s < 0):
                raise c.fail(f"{at}.seeds", "expected an array of non-negative integers")
            compares.append(Compare(name if len(seeds) == 1 else f"{name}-s{s}", s, paths, args, sch))

    rep = c.get(d, "report", dict, "a table", "", default={})
    c.keys(rep, _REPORT, "report")
    if not workloads and not compares:
        raise c.fail("workload", "the spec has no [[workload]] and no [[compare]]: nothing to run")
    return Spec(path, c.get(d, "title", str, "a string", "", default=f"Spec {path.name}."),
                c.get(d, "note", str, "a string", "", default=f"graphene-lab run {path.name}"), variants, workloads, gains, compares,
                c.get(rep, "workload-charts", bool, "a boolean", "report", default=True))


def _num(v: Any) -> str:
    return str(v)


# ---------------------------------------------------------------------------------------------
# Units and their keys

_DIGESTS: Dict[str, str] = {}


def _digest(path: str) -> str:
    """The SHA-256 of a file's contents (cached per path for one run)."""
    if path not in _DIGESTS:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for b in iter(lambda: f.read(1 << 20), b""):
                h.update(b)
        _DIGESTS[path] = h.hexdigest()
    return _DIGESTS[path]


def _content(args: Sequence[str]) -> List[str]:
    """Arguments with every existing file replaced by its contents' digest (the key must not
    depend on where the inputs live)."""
    return ["file:" + _digest(a) if os.path.isfile(a) else a for a in args]


def _key(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:24]


@dataclass
class Unit:
    kind: str  # gen, replay, compare
    key: str
    label: str
    payload: Dict[str, Any]
    after: Optional[str] = None  # the key of the gen unit it waits for


def plan(spec: Spec, version: str) -> Tuple[List[Unit], Dict[Tuple[str, str], str], Dict[str, str]]:
    """The units of a spec; (workload, scheduler) -> replay key; compare name -> key."""
    units: List[Unit] = []
    gen_done: Dict[str, Unit] = {}
    rkeys: Dict[Tuple[str, str], str] = {}
    seen: set = set()
    for w in spec.workloads:
        if w.trace is not None:
            tkey = "file:" + _digest(str(w.trace))
            trace_arg: Dict[str, Any] = {"trace": str(w.trace)}
            after = None
        else:
            if w.gen is not None:
                desc = {"gen-trace": _content(w.gen), "seed": w.seed, "cluster": _content(w.cluster_args), "version": version}
            else:
                desc = {"sample": {**w.sample, "trace": "file:" + _digest(w.sample["trace"])}, "seed": w.seed, "version": version}
            gkey = _key(desc)
            w.gen_key = gkey
            if gkey not in gen_done:
                u = Unit("gen", gkey, f"gen {w.name}", {"gen": w.gen, "sample": w.sample, "seed": w.seed, "cluster": w.cluster_args})
                gen_done[gkey] = u
                units.append(u)
            tkey, trace_arg, after = "gen:" + gkey, {"gen": gkey}, gkey
        for s in w.schedulers:
            v = spec.variants[s]
            args = [*v.args, *w.options]
            k = _key({"trace": tkey, "cluster": _content(w.cluster_args), "scheduler": v.scheduler, "args": _content(args), "version": version,
                      "keep": w.keep})
            rkeys[(w.name, s)] = k
            if k not in seen:
                seen.add(k)
                units.append(Unit("replay", k, f"{w.name} {s}", {**trace_arg, "scheduler": v.scheduler, "args": args,
                                                                   "cluster": w.cluster_args, "keep": w.keep}, after))
    ckeys: Dict[str, str] = {}
    for x in spec.compares:
        args = [*x.args, *(["--seed", str(x.seed)] if x.seed is not None else []),
                *(["--schedulers", ",".join(x.schedulers)] if x.schedulers else [])]
        k = _key({"compare": [_digest(str(p)) for p in x.dags], "args": _content(args), "version": version})
        ckeys[x.name] = k
        units.append(Unit("compare", k, f"compare {x.name}", {"dags": [str(p) for p in x.dags], "args": args}))
    return units, rkeys, ckeys


def _done(out: Path, u: Unit) -> bool:
    return (out / _place(u) / "done.json").exists()


def _place(u: Unit) -> str:
    return {"gen": "traces", "replay": "runs", "compare": "compare"}[u.kind] + "/" + u.key


def _atomic_dir(out: Path, rel: str, fill) -> Any:
    """Runs ``fill(tmpdir)`` and moves the folder to ``out/rel`` in one rename."""
    final = out / rel
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    try:
        meta = fill(tmp)
        (tmp / "done.json").write_text(json.dumps(meta, sort_keys=True) + "\n")
        if final.exists():  # an earlier attempt cut short after its rename: replace it
            shutil.rmtree(final)
        os.replace(tmp, final)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return meta


def _run(cmd: List[str], args: List[str]) -> None:
    r = subprocess.run([*cmd, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise UnitError(f"graphene {' '.join(args)} failed (exit {r.returncode}): {r.stderr.strip()}")


def alibaba_sample(path: str, seed: int, fraction: float, out: Optional[Path], at_once: bool = False) -> Tuple[List[float], float]:
    """A seeded sample of an Alibaba v2018 trace's jobs (each kept with probability
    ``fraction``) written to ``out``; returns the cpu and memory work it offers (core-seconds,
    unit-seconds) and its arrival span. With ``at_once`` every kept row gets the sample's first
    arrival (the throughput form); the span returned is still the real one."""
    rng = random.Random(seed)
    keep: Dict[str, bool] = {}
    kept: List[str] = []
    work = [0.0, 0.0]
    first, last, first_text = math.inf, -math.inf, ""
    with open(path) as f:
        for line in f:
            arr, job, _task, dur, cpu, mem, n = line.rstrip("\n").split(",")
            if job not in keep:
                keep[job] = rng.random() < fraction
            if keep[job]:
                kept.append(line)
                a, dd, k = float(arr), float(dur), float(n)
                work[0] += k * dd * float(cpu) / 100.0
                work[1] += k * dd * float(mem)
                if a < first:
                    first, first_text = a, arr
                last = max(last, a)
    if out is not None:
        with open(out, "w") as g:
            for line in kept:
                g.write(f"{first_text},{line.split(',', 1)[1]}" if at_once else line)
    return work, max(last - first, 1.0)


def run_unit(unit: Dict[str, Any], out: str, graphene: Optional[str], *_deps: Any) -> Dict[str, Any]:
    """One unit (a :class:`Unit` as a dict), on a worker: runs the command (the binary
    ``graphene``, else the worker's own ``python -m graphene_sched``) and moves its outputs under
    ``out`` atomically. Returns the unit's record (done.json)."""
    u = Unit(**unit)
    cmd = _cmd(graphene)
    o = Path(out)
    if _done(o, u):
        return json.loads((o / _place(u) / "done.json").read_text())
    t0 = time.perf_counter()
    p = u.payload

    def gen(tmp: Path) -> Dict[str, Any]:
        trace = tmp / "trace.csv"
        if p["gen"] is not None:
            _run(cmd, ["gen-trace", *p["gen"], *p["cluster"], "--seed", str(p["seed"]), "-q", "--out", str(trace)])
            extra: List[str] = []
        else:
            s = p["sample"]
            work, span = alibaba_sample(s["trace"], p["seed"], s["fraction"], trace, s["at_once"])
            machines = max(1, math.ceil(max(work[0] / s["cpu"], work[1] / s["mem"]) / (s["load"] * span)))
            extra = ["--machines", str(machines)]
        return {"extra": extra, "wall_seconds": time.perf_counter() - t0}

    def replay(tmp: Path) -> Dict[str, Any]:
        if "trace" in p:
            trace, extra = p["trace"], []
        else:
            g = o / "traces" / p["gen"]
            trace, extra = str(g / "trace.csv"), json.loads((g / "done.json").read_text())["extra"]
        _run(cmd, ["replay", trace, "--scheduler", p["scheduler"], *p["args"], *p["cluster"], *extra, "-q", "--no-timing", "--out", str(tmp)])
        with open(tmp / "jobs.csv") as f:
            jobs = sum(1 for _ in csv.DictReader(f))
        s = json.loads((tmp / "summary.json").read_text())["summary"]
        if not p["keep"]:
            (tmp / "schedule.csv").unlink(missing_ok=True)
        return {"jobs": jobs, "tasks": s.get("tasks"), "mean_jct": s["jct"]["mean"], "median_jct": s["jct"]["median"],
                "p90_jct": s["jct"]["p90"], "makespan": s["makespan"], "wall_seconds": time.perf_counter() - t0,
                "command": " ".join(["graphene", "replay", os.path.basename(trace), "--scheduler", p["scheduler"], *p["args"], *extra])}

    def compare(tmp: Path) -> Dict[str, Any]:
        r = subprocess.run([*cmd, "compare", *p["dags"], *p["args"], "--csv"], capture_output=True, text=True)
        if r.returncode != 0:
            raise UnitError(f"graphene compare {' '.join(p['dags'])} {' '.join(p['args'])} failed: {r.stderr.strip()}")
        (tmp / "compare.csv").write_text(r.stdout)
        return {"wall_seconds": time.perf_counter() - t0}

    return _atomic_dir(o, _place(u), {"gen": gen, "replay": replay, "compare": compare}[u.kind])


# ---------------------------------------------------------------------------------------------
# Running on Dask


def run(spec: Spec, out: Any, address: Optional[str] = None, workers: int = 2, graphene: Optional[str] = None,
        log=None) -> Dict[str, int]:
    """Runs every unit of ``spec`` not yet in ``out`` on a Dask cluster (``address``, else a
    LocalCluster of ``workers`` single-threaded processes), then writes the report. Returns the
    counts: ``units``, ``skipped`` (already done), ``ran`` and ``failed``; raises
    :class:`UnitError` listing the failures after the report of what finished."""
    from distributed import Client, LocalCluster, as_completed  # noqa: PLC0415
    log = log or (lambda s: print(s, file=sys.stderr, flush=True))
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    if graphene:
        graphene = os.fspath(Path(graphene).resolve())
    cmd = _cmd(graphene)
    version = _version(cmd)
    units, _, _ = plan(spec, version)
    todo = [u for u in units if not _done(out, u)]
    counts = {"units": len(units), "skipped": len(units) - len(todo), "ran": 0, "failed": 0}
    log(f"graphene-lab: {len(units)} units, {counts['skipped']} already in {out}, {len(todo)} to run")
    failures: List[str] = []
    if todo:
        cluster = None
        if address is None:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0")
        client = Client(address or cluster)
        try:
            if address is not None and __name__ != "graphene_sched.lab":
                # Loaded from a file by a script (scripts/bench-online-robust): the cluster's
                # workers get the module the same way.
                client.upload_file(__file__)
            futs: Dict[str, Any] = {}
            for u in todo:
                deps = [futs[u.after]] if u.after in futs else []
                futs[u.key] = client.submit(run_unit, dict(u.__dict__), str(out), graphene, *deps, key=f"{u.kind}-{u.key}", pure=False,
                                            priority=1 if u.kind == "gen" else 0, retries=0)
            n = 0
            by_key = {f.key: u for u, f in ((u, futs[u.key]) for u in todo)}
            for f in as_completed(list(futs.values())):
                n += 1
                u = by_key[f.key]
                if f.status == "error":
                    counts["failed"] += 1
                    e = f.exception()
                    failures.append(f"{u.label}: {e}")
                    log(f"[{n}/{len(todo)}] FAILED {u.label}: {e}")
                else:
                    counts["ran"] += 1
                    log(f"[{n}/{len(todo)}] {u.label} ({f.result().get('wall_seconds', 0):.1f} s)")
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    report(spec, out, graphene=graphene, version=version)
    if failures:
        raise UnitError(f"{len(failures)} of {len(todo)} units failed (the others are kept; run again to retry):\n" + "\n".join(failures))
    return counts


# ---------------------------------------------------------------------------------------------
# The report

COLUMNS = ["workload", "family", "profile", "load", "seed", "scheduler", "command", "options", "jobs", "tasks", "mean_jct",
           "median_jct", "p90_jct", "makespan", "wall_seconds", "key"]


def _write_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    if isinstance(data, bytes):
        tmp.write_bytes(data)
    else:
        tmp.write_text(data)
    os.replace(tmp, path)


def rows(spec: Spec, out: Path, version: str) -> List[Dict[str, Any]]:
    """One row per workload and scheduler whose replay is in ``out``, in the spec's order."""
    _, rkeys, _ = plan(spec, version)
    res = []
    for w in spec.workloads:
        for s in w.schedulers:
            k = rkeys[(w.name, s)]
            f = out / "runs" / k / "done.json"
            if not f.exists():
                continue
            m = json.loads(f.read_text())
            v = spec.variants[s]
            res.append({"workload": w.name, "family": w.family, "profile": w.profile, "load": w.load, "seed": w.seed, "scheduler": s,
                        "command": v.scheduler, "options": " ".join([*v.args, *w.options]), "jobs": m["jobs"], "tasks": m["tasks"],
                        "mean_jct": m["mean_jct"], "median_jct": m["median_jct"], "p90_jct": m["p90_jct"], "makespan": m["makespan"],
                        "wall_seconds": m["wall_seconds"], "key": k})
    return res


def _jobs(d: Path) -> Dict[str, float]:
    with open(d / "jobs.csv") as f:
        return {r["job"]: float(r["jct"]) for r in csv.DictReader(f)}


def gain(g: Dict[str, float], b: Dict[str, float]) -> Tuple[float, float]:
    """The median over jobs of (b - g) / b, and mean(g) / mean(b)."""
    gaps = [(b[j] - g[j]) / b[j] for j in g if j in b and b[j] > 0]
    return statistics.median(gaps), (sum(g.values()) / len(g)) / (sum(b.values()) / len(b))


def _quart(v: List[float]) -> Tuple[float, ...]:
    v = sorted(v)
    q = statistics.quantiles(v, n=4, method="inclusive") if len(v) > 1 else [v[0]] * 3
    return v[0], q[0], q[1], q[2], v[-1]


def report(spec: Spec, out: Any, graphene: Optional[str] = None, version: Optional[str] = None) -> List[Dict[str, Any]]:
    """Writes the tables and charts from the units ``out`` holds (nothing runs); returns the rows."""
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.parquet as pq  # noqa: PLC0415

    out = Path(out)
    cmd = _cmd(graphene)
    version = version or _version(cmd)
    rs = rows(spec, out, version)
    types = {"seed": pa.int64(), "jobs": pa.int64(), "tasks": pa.int64(), "mean_jct": pa.float64(), "median_jct": pa.float64(),
             "p90_jct": pa.float64(), "makespan": pa.float64(), "wall_seconds": pa.float64()}
    schema = pa.schema([pa.field(c, types.get(c, pa.string())) for c in COLUMNS])
    table = pa.table({c: pa.array([r[c] for r in rs], type=schema.field(c).type) for c in COLUMNS}, schema=schema)
    tmp = out / ".results.parquet.tmp"
    pq.write_table(table, tmp)
    os.replace(tmp, out / "results.parquet")

    # workloads.csv, in the layout scripts/bench-online-robust has always written.
    wl = sorted([[r["workload"], r["family"], r["profile"], r["load"], r["seed"], r["jobs"], r["scheduler"], r["mean_jct"], r["median_jct"],
                  r["p90_jct"], r["makespan"]] for r in rs], key=lambda x: [("" if v is None else v) for v in x])
    _write_atomic(out / "workloads.csv", _csv([["workload", "family", "profile", "load", "seed", "jobs", "scheduler", "mean_jct", "p50_jct",
                                                "p90_jct", "makespan"], *wl]))

    _by_workload(spec, out, rs, version)
    md = [f"# {spec.title}", ""]
    by_w: Dict[str, List[Dict[str, Any]]] = {}
    for r in rs:
        by_w.setdefault(r["workload"], []).append(r)
    for w in spec.workloads:
        if w.name not in by_w:
            continue
        md += [f"## {w.name}", "", "| scheduler | jobs | mean JCT (s) | median JCT (s) | p90 JCT (s) | makespan (s) |", "|---|---|---|---|---|---|"]
        for r in by_w[w.name]:
            md.append(f"| {r['scheduler']} | {r['jobs']} | {_f(r['mean_jct'])} | {_f(r['median_jct'])} | {_f(r['p90_jct'])} | {_f(r['makespan'])} |")
        md.append("")
        if spec.workload_charts and w.baseline and len(by_w[w.name]) > 1 and any(r["scheduler"] == w.baseline for r in by_w[w.name]):
            others = [r for r in by_w[w.name] if r["scheduler"] != w.baseline]
            base = next(r for r in by_w[w.name] if r["scheduler"] == w.baseline)
            (out / "charts").mkdir(exist_ok=True)
            svg = out / "charts" / f"{_safe(w.name)}.svg"
            _run(cmd, ["plot", "cdf", *(str(out / "runs" / r["key"]) for r in others), "--baseline", str(out / "runs" / base["key"]),
                       f"--labels={','.join(r['scheduler'] for r in others)}", "--title", f"{w.name}: per-job JCT reduction against {w.baseline}",
                       "--note", spec.note, "-q", "--out", str(svg)])
            md += [f"![{w.name}](charts/{svg.name})", ""]
    _write_atomic(out / "results.md", "\n".join(md))

    if spec.gains:
        _gains(spec, out, rs, cmd)
    if spec.compares:
        _compares(spec, out, cmd, version)
    return rs


def _link(path: Path, target: str) -> None:
    if path.is_symlink() or path.exists():
        path.unlink()
    path.symlink_to(target)


def _by_workload(spec: Spec, out: Path, rs: List[Dict[str, Any]], version: str) -> None:
    """DIR/by-workload/WORKLOAD/: the workload's ``trace.csv`` and a folder per scheduler, as
    relative links to the units (to browse by name; the tools that read replay folders take
    them as they are)."""
    plan(spec, version)
    names = {r["workload"] for r in rs}
    for w in spec.workloads:
        if w.name not in names:
            continue
        d = out / "by-workload" / _safe(w.name)
        d.mkdir(parents=True, exist_ok=True)
        if w.trace is not None:
            _link(d / "trace.csv", str(w.trace.resolve()))
        elif w.gen_key is not None:
            _link(d / "trace.csv", f"../../traces/{w.gen_key}/trace.csv")
        for r in rs:
            if r["workload"] == w.name:
                _link(d / _safe(r["scheduler"]), f"../../runs/{r['key']}")


def _f(x: Any) -> str:
    return "-" if x is None else f"{x:.1f}"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]", "_", name)


def _csv(rows_: List[List[Any]]) -> str:
    import io  # noqa: PLC0415

    s = io.StringIO()
    csv.writer(s, lineterminator="\r\n").writerows(rows_)
    return s.getvalue()


def _gains(spec: Spec, out: Path, rs: List[Dict[str, Any]], cmd: List[str]) -> None:
    by = {(r["workload"], r["scheduler"]): r for r in rs}
    comps = []
    for w in spec.workloads:
        for g in spec.gains:
            a, b = by.get((w.name, g.scheduler)), by.get((w.name, g.baseline))
            if a is None or b is None:
                continue  # not run (yet), or not a scheduler of this workload
            med, ratio = gain(_jobs(out / "runs" / a["key"]), _jobs(out / "runs" / b["key"]))
            comps.append([w.name, w.family, w.profile, w.load, w.seed, g.group, g.column, g.label, med, ratio, a["makespan"], b["makespan"]])
    comps.sort(key=lambda x: [("" if v is None else v) for v in x])
    lines = [["workload", "family", "profile", "load", "seed", "graphene", "fairness", "baseline", "gain", "mean_ratio", "makespan",
              "base_makespan", "series"]]
    for c in comps:
        lines.append([*c[:8], f"{100 * c[8]:.3f}", f"{c[9]:.4f}", c[10], c[11], f"{c[5]} vs {c[7]} ({c[6]})"])
    _write_atomic(out / "gains.csv", _csv(lines))
    _write_atomic(out / "summary.md", _summary(spec, comps))
    for gname in dict.fromkeys(g.group for g in spec.gains):
        sel = [c for c in comps if c[5] == gname and c[3] != "once"]
        _write_atomic(out / f"cdf-{gname}.csv", _csv([["series", "gain"], *([f"vs {c[7]} ({c[6]})", f"{100 * c[8]:.3f}"] for c in sel)]))
        if sel:
            _run(cmd, ["plot", "cdf", "--metric", "gain", str(out / f"cdf-{gname}.csv"), "--title", f"{gname}: per-workload median JCT gain",
                       "--note", spec.note, "-q", "--out", str(out / f"cdf-{gname}.svg")])


def _summary(spec: Spec, comps: List[List[Any]]) -> str:
    """Per group, family and comparison: the distribution of the per-workload gains and the share
    meeting the target (a median gain of at least 10% with a lower mean JCT); the throughput
    workloads (load "once") in a table of their own."""
    order = list(dict.fromkeys((g.column, g.label) for g in spec.gains))
    once_order = list(dict.fromkeys((g.column, g.label) for g in spec.gains if g.throughput))
    lines = [spec.title, ""]
    for gname in sorted({c[5] for c in comps}):
        lines += [f"### {gname}", "",
                  "| family | comparison | fairness | workloads | median gain min / q1 / median / q3 / max | "
                  "gain >= 10% and mean lower | gain > 0 | mean-JCT ratio median (max) |",
                  "|---|---|---|---|---|---|---|---|"]
        for fam in sorted({c[1] for c in comps}) + ["all"]:
            for col, base in order:
                sel = [c for c in comps if c[5] == gname and c[6] == col and c[7] == base and c[3] != "once" and (fam == "all" or c[1] == fam)]
                if not sel:
                    continue
                q = _quart([100 * c[8] for c in sel])
                hit = sum(1 for c in sel if c[8] >= 0.10 and c[9] < 1.0)
                pos = sum(1 for c in sel if c[8] > 0)
                ratios = sorted(c[9] for c in sel)
                lines.append(f"| {fam} | vs {base} | {col} | {len(sel)} | " + " / ".join(f"{x:+.1f}%" for x in q)
                             + f" | {hit}/{len(sel)} | {pos}/{len(sel)} | {statistics.median(ratios):.3f} ({ratios[-1]:.3f}) |")
        once = [c for c in comps if c[5] == gname and c[3] == "once"]
        if once:
            lines += ["", "Throughput (all jobs at once), medians over workloads (min-max):", "",
                      "| family | comparison | fairness | workloads | makespan ratio | mean-JCT ratio | median JCT gain |",
                      "|---|---|---|---|---|---|---|"]

            def span(v: List[float], fmt) -> str:
                v = sorted(v)
                return f"{fmt(statistics.median(v))} ({fmt(v[0])} to {fmt(v[-1])})"

            for fam in sorted({c[1] for c in once}) + ["all"]:
                for col, base in once_order:
                    sel = [c for c in once if c[6] == col and c[7] == base and (fam == "all" or c[1] == fam)]
                    if not sel:
                        continue
                    lines.append(f"| {fam} | vs {base} | {col} | {len(sel)} | " + span([c[10] / c[11] for c in sel], lambda x: f"{x:.3f}") + " | "
                                 + span([c[9] for c in sel], lambda x: f"{x:.3f}") + " | " + span([100 * c[8] for c in sel], lambda x: f"{x:+.1f}%") + " |")
        lines.append("")
    return "\n".join(lines) + "\n"


def _compares(spec: Spec, out: Path, cmd: List[str], version: str) -> None:
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.parquet as pq  # noqa: PLC0415

    _, _, ckeys = plan(spec, version)
    allrows: List[Dict[str, Any]] = []
    md = ["# Offline comparisons", ""]
    for x in spec.compares:
        f = out / "compare" / ckeys[x.name] / "compare.csv"
        if not f.exists():
            continue
        with open(f) as fh:
            rws = list(csv.DictReader(fh))
        for r in rws:
            allrows.append({"compare": x.name, "seed": x.seed, "dag": r["dag"], "tasks": int(r["tasks"]), "scheduler": r["scheduler"],
                            "makespan": float(r["makespan"]), "lower_bound": float(r["lower_bound"]), "ratio": float(r["ratio"])})
        md += [f"## {x.name}", "", "| scheduler | DAGs | median ratio | p90 ratio | worst | best or tied |", "|---|---|---|---|---|---|"]
        best: Dict[str, float] = {}
        for r in rws:
            best[r["dag"]] = min(best.get(r["dag"], math.inf), float(r["makespan"]))
        for s in dict.fromkeys(r["scheduler"] for r in rws):
            v = sorted(float(r["ratio"]) for r in rws if r["scheduler"] == s)
            b = sum(1 for r in rws if r["scheduler"] == s and float(r["makespan"]) <= best[r["dag"]] * (1 + 1e-9))
            md.append(f"| {s} | {len(v)} | {_rank(v, .5):.4f} | {_rank(v, .9):.4f} | {v[-1]:.4f} | {b} |")
        svg = f"compare-{_safe(x.name)}.svg"
        _run(cmd, ["plot", "cdf", str(f), "--metric", "ratio", "--title", f"{x.name}: makespan / best lower bound", "--note", spec.note, "-q",
                   "--out", str(out / svg)])
        md += ["", f"![{x.name}]({svg})", ""]
    cols = ["compare", "seed", "dag", "tasks", "scheduler", "makespan", "lower_bound", "ratio"]
    types = {"seed": pa.int64(), "tasks": pa.int64(), "makespan": pa.float64(), "lower_bound": pa.float64(), "ratio": pa.float64()}
    schema = pa.schema([pa.field(c, types.get(c, pa.string())) for c in cols])
    t = pa.table({c: pa.array([r[c] for r in allrows], type=schema.field(c).type) for c in cols}, schema=schema)
    pq.write_table(t, out / ".compare.parquet.tmp")
    os.replace(out / ".compare.parquet.tmp", out / "compare.parquet")
    _write_atomic(out / "compare.md", "\n".join(md))


def _rank(v: List[float], q: float) -> float:
    """Nearest-rank quantile, as graphene's summaries compute it."""
    return v[min(max(math.ceil(q * len(v)), 1), len(v)) - 1]


# ---------------------------------------------------------------------------------------------
# Writing a spec


def _tkey(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)


def _tval(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_tval(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_tkey(k)} = {_tval(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"not a TOML value: {type(v).__name__}")


def dump_toml(spec: Dict[str, Any]) -> str:
    """A spec (a dict in the layout :func:`load_spec` reads) as TOML text: top-level values,
    then its tables, then its arrays of tables, nested tables inline."""
    out: List[str] = []
    for k, v in spec.items():
        if not isinstance(v, dict) and not (isinstance(v, list) and v and all(isinstance(x, dict) for x in v)):
            out.append(f"{_tkey(k)} = {_tval(v)}")
    for k, v in spec.items():
        if isinstance(v, dict):
            flat = {a: b for a, b in v.items() if not isinstance(b, dict)}
            if flat or not v:
                out += ["", f"[{_tkey(k)}]", *(f"{_tkey(a)} = {_tval(b)}" for a, b in flat.items())]
            for a, b in v.items():
                if isinstance(b, dict):
                    out += ["", f"[{_tkey(k)}.{_tkey(a)}]", *(f"{_tkey(x)} = {_tval(y)}" for x, y in b.items())]
    for k, v in spec.items():
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            for t in v:
                out += ["", f"[[{_tkey(k)}]]", *(f"{_tkey(a)} = {_tval(b)}" for a, b in t.items())]
    return "\n".join(out).lstrip("\n") + "\n"


# ---------------------------------------------------------------------------------------------
# The command


def main(argv: Optional[List[str]] = None) -> int:
    """The ``graphene-lab`` command: ``run``, ``report`` or ``check`` a spec; returns the exit
    status (0, or 1 with the error on stderr)."""
    ap = argparse.ArgumentParser(prog="graphene-lab", description="Grids of graphene replays and offline comparisons on Dask distributed.")
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run every unit of SPEC not yet in DIR, then write the tables")
    r.add_argument("spec", metavar="SPEC.toml")
    r.add_argument("--out", required=True, metavar="DIR")
    where = r.add_mutually_exclusive_group()
    where.add_argument("--address", metavar="tcp://HOST:PORT", help="the scheduler of a running Dask cluster")
    where.add_argument("--workers", type=int, default=2, metavar="N", help="worker processes of the LocalCluster (default 2)")
    r.add_argument("--graphene", metavar="BIN", help="run this graphene binary (default: the package's own, python -m graphene_sched)")
    p = sub.add_parser("report", help="write the tables from what DIR holds; run nothing")
    p.add_argument("spec", metavar="SPEC.toml")
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--graphene", metavar="BIN")
    c = sub.add_parser("check", help="validate SPEC and count its units; run nothing")
    c.add_argument("spec", metavar="SPEC.toml")
    c.add_argument("--out", metavar="DIR", help="also count the units already in DIR")
    c.add_argument("--graphene", metavar="BIN")
    a = ap.parse_args(argv)
    try:
        spec = load_spec(a.spec, a.graphene)
        if a.command == "check":
            cmd = _cmd(a.graphene)
            units, _, _ = plan(spec, _version(cmd))
            kinds = {k: sum(1 for u in units if u.kind == k) for k in ("gen", "replay", "compare")}
            done = sum(1 for u in units if a.out and _done(Path(a.out), u))
            print(f"{a.spec}: {len(spec.workloads)} workloads, {kinds['gen']} traces to generate, {kinds['replay']} replays, "
                  f"{kinds['compare']} comparisons" + (f"; {done} units already in {a.out}" if a.out else ""))
        elif a.command == "report":
            report(spec, Path(a.out), graphene=a.graphene)
        else:
            if a.workers < 1:
                raise SpecError("--workers: expected at least 1")
            counts = run(spec, a.out, address=a.address, workers=a.workers, graphene=a.graphene)
            print(f"graphene-lab: {counts['ran']} units run, {counts['skipped']} already done; results in {Path(a.out) / 'results.parquet'}")
    except (SpecError, UnitError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
