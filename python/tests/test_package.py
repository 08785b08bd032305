"""The package itself: its name, version, command line, console scripts, optional extras,
shipped type information and docstrings."""

from __future__ import annotations

import importlib.metadata
import inspect
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import graphene_sched
from conftest import ROOT, cli_path


def run_py(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, timeout=300, **kw)


def test_the_distribution_and_import_names_are_its_own():
    dist = importlib.metadata.distribution("graphene-sched")
    assert dist.metadata["Name"] == "graphene-sched"
    # Nothing is installed as a top-level `graphene` package (PyPI's GraphQL library's name).
    files = [str(f) for f in dist.files or []]
    assert not any(f.startswith("graphene/") for f in files), files
    # Typed: py.typed and the extension's stubs ship with it (`maturin develop` installs the
    # source folder itself rather than these files).
    pkg = Path(graphene_sched.__file__).parent
    assert (pkg / "py.typed").is_file() and (pkg / "_core.pyi").is_file()
    if '"editable": true' not in (dist.read_text("direct_url.json") or ""):
        assert "graphene_sched/py.typed" in files and "graphene_sched/_core.pyi" in files, files
    assert graphene_sched.build_schedule.__module__ == "graphene_sched"
    assert graphene_sched.UsageError.__module__ == "graphene_sched"
    extras = set(dist.metadata.get_all("Provides-Extra") or [])
    assert {"dask", "gym", "parquet", "lab", "all"} <= extras


def test_version_is_one_number_everywhere():
    v = graphene_sched.__version__
    assert v == importlib.metadata.version("graphene-sched")
    cli = subprocess.run([str(cli_path()), "--version"], capture_output=True, check=True)
    assert cli.stdout.decode() == f"graphene {v}\n"
    r = run_py("-m", "graphene_sched", "--version")
    assert r.returncode == 0 and r.stdout.decode() == f"graphene {v}\n"


def test_python_m_runs_the_command_with_the_binarys_bytes_and_statuses(tmp_path):
    args = ["build-schedule", "traces/example.json", "--no-timing", "-q"]
    want = subprocess.run([str(cli_path()), *args], cwd=ROOT, capture_output=True, check=True).stdout
    r = run_py("-m", "graphene_sched", *args)
    assert r.returncode == 0 and r.stdout == want
    # Files written by a command, a failure (1) with the binary's message, bad flags (2).
    out = tmp_path / "trace.csv"
    r = run_py("-m", "graphene_sched", "gen-trace", "--dags", "traces/example.json", "--jobs", "3", "--seed", "4",
               "-q", "--out", str(out))
    assert r.returncode == 0 and out.read_text() == graphene_sched.gen_trace("traces/example.json", 3, seed=4).csv
    want = subprocess.run([str(cli_path()), "build-schedule", "missing.json"], cwd=ROOT, capture_output=True)
    r = run_py("-m", "graphene_sched", "build-schedule", "missing.json")
    assert r.returncode == want.returncode == 1 and r.stderr == want.stderr
    r = run_py("-m", "graphene_sched", "--bogus")
    assert r.returncode == 2 and b"unexpected argument '--bogus'" in r.stderr
    r = run_py("-m", "graphene_sched", "--help")
    assert r.returncode == 0 and b"build-schedule" in r.stdout
    # A chart's default note records the command's own arguments, not the interpreter's.
    sched, svg = tmp_path / "s.json", tmp_path / "g.svg"
    graphene_sched.build_schedule("traces/example.json").save(sched)
    r = run_py("-m", "graphene_sched", "plot", "gantt", str(sched), "--out", str(svg), "-q")
    assert r.returncode == 0, r.stderr
    text = svg.read_text()
    assert "made by: graphene plot gantt" in text and "graphene_sched" not in text
    # The entry point called from Python returns the status instead of exiting.
    from graphene_sched.__main__ import main

    assert main(["--version"]) == 0
    with pytest.raises(graphene_sched.UsageError, match="argv"):
        main("--version")


def test_console_scripts_run_the_command():
    bindir = Path(sys.executable).parent
    for name in ("graphene-sched", "graphene"):
        exe = shutil.which(name, path=str(bindir))
        assert exe, f"{name} is not installed beside {sys.executable}"
        r = subprocess.run([exe, "--version"], capture_output=True, timeout=60)
        assert r.returncode == 0 and r.stdout.decode() == f"graphene {graphene_sched.__version__}\n"
    exe = shutil.which("graphene-lab", path=str(bindir))
    assert exe, f"graphene-lab is not installed beside {sys.executable}"
    r = subprocess.run([exe, "run", "--help"], capture_output=True, timeout=60)
    assert r.returncode == 0 and b"--address tcp://HOST:PORT" in r.stdout


@pytest.mark.parametrize(
    "module,missing,extra",
    [
        ("graphene_sched.gym", "gymnasium", "gym"),
        ("graphene_sched.gym", "numpy", "gym"),
        ("graphene_sched.dask", "distributed", "dask"),
        ("graphene_sched.parquet", "pyarrow", "parquet"),
        ("graphene_sched.lab", "distributed", "lab"),
        ("graphene_sched.lab", "pyarrow", "lab"),
    ],
)
def test_a_missing_extra_is_named(module, missing, extra):
    # A fresh interpreter where the dependency cannot be imported (as if not installed).
    code = f"import sys; sys.modules[{missing!r}] = None\nimport {module}"
    r = run_py("-c", code)
    assert r.returncode == 1
    err = r.stderr.decode().strip().splitlines()[-1]
    assert err.startswith("ImportError: ") and f"{module} needs" in err, err
    assert f"({missing} is missing): pip install 'graphene-sched[{extra}]'" in err, err


def test_to_pandas_without_pandas_names_its_extra():
    code = "import sys; sys.modules['pandas'] = None\nimport graphene_sched\ngraphene_sched.replay('traces/small.csv').to_pandas()"
    r = run_py("-c", code)
    assert r.returncode == 1
    assert "to_pandas() needs pandas: pip install 'graphene-sched[pandas]'" in r.stderr.decode()


def _public(module):
    for name in getattr(module, "__all__", []):
        obj = getattr(module, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            yield f"{module.__name__}.{name}", obj
            if inspect.isclass(obj) and obj.__module__ == module.__name__:
                for attr, member in vars(obj).items():
                    if attr.startswith("_"):
                        continue
                    if isinstance(member, (classmethod, staticmethod)):
                        member = member.__func__
                    if inspect.isfunction(member) or isinstance(member, property):
                        yield f"{module.__name__}.{name}.{attr}", member


def test_every_public_function_has_a_docstring():
    import graphene_sched.__main__ as cli_main
    import graphene_sched.dask
    import graphene_sched.gym
    import graphene_sched.lab
    import graphene_sched.parquet

    missing = [
        name
        for m in (graphene_sched, graphene_sched.dask, graphene_sched.gym, graphene_sched.lab, graphene_sched.parquet, cli_main)
        for name, obj in _public(m)
        if not (obj.__doc__ or "").strip()
    ]
    assert missing == []


TYPED = """
import graphene_sched as gs

s = gs.build_schedule("traces/example.json")
makespan: float = s.makespan
order: list[str] = s.order
start: float = s.tasks[0].start
best: float = gs.lower_bound("traces/example.json").best
r = gs.replay("traces/small.csv")
jct: float = r.jobs[0]["jct"]
mean: float = r.mean_jct
ratio: float = gs.compare(["traces/example.json"]).rows[0]["ratio"]
wrong: str = gs.lower_bound("traces/example.json").best
"""


def test_a_type_checker_reads_the_result_types(tmp_path):
    api = pytest.importorskip("mypy.api")
    snippet = tmp_path / "snippet.py"
    snippet.write_text(TYPED)
    out, err, status = api.run([str(snippet), "--no-incremental", "--cache-dir", os.devnull])
    assert status == 1, err + out
    # Exactly the one deliberate mistake: the types are real, not Any.
    errors = [l for l in out.splitlines() if ": error:" in l]
    assert len(errors) == 1, out
    assert 'snippet.py:13: error: Incompatible types in assignment (expression has type "float", variable has type "str")' in errors[0]
