"""One matrix: every input format the CLI reads, through every front end (the CLI, the Python
API, the HTTP service), gives the same bytes: the lower bounds and the schedule. A format one
front end reads and another does not, or reads differently, fails here."""

from __future__ import annotations

import http.client
import re
import subprocess
from pathlib import Path

import pytest

import graphene_sched

from conftest import ROOT, cli_path

# (file under the repository, extra options as {flag: value}); every reader the DAG commands have.
INPUTS = [
    ("traces/example.json", {}),  # native
    ("tests/data/wfcommons-1.4-example.json", {}),
    ("tests/data/tpch-2g-q6.json", {}),
    ("tests/data/task-graphs/fork-join.dax", {}),
    ("tests/data/task-graphs/fork-join.dot", {}),
    ("tests/data/task-graphs/fork-join.stg", {}),
    ("tests/data/spark/tpch-q3", {}),  # a plain Spark event log
    # Compressed Spark logs: the service knows the codec by its magic number.
    ("tests/data/spark/tpch-q3.lz4", {}),
    ("tests/data/spark/tpch-q3.zstd", {}),
    ("tests/data/spark/tpch-q3.snappy", {}),
    # Tez history: one file of one DAG, and one DAG picked by name from a file of two.
    ("tests/data/tez/history/history.txt.appattempt_1795855528874_0001_000000", {}),
    ("tests/data/tez/history/history.txt.appattempt_1795855519364_0001_000000", {"tez_dag": "diamond"}),
]
# Formats without a name inside (STG): the CLI and Python name the DAG after the file, the
# service after its `name` option.
NAMELESS = {"tests/data/task-graphs/fork-join.stg"}
COMMON = {"machines": "4", "improve": "0"}


@pytest.fixture(scope="module")
def service():
    """`graphene serve` on a free loopback port, stopped after the module."""
    p = subprocess.Popen([str(cli_path()), "serve", "--addr", "127.0.0.1:0", "--workers", "1"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline()  # "graphene serve: listening on http://127.0.0.1:PORT (1 workers)"
    m = re.search(r"http://([\d.]+):(\d+)", line)
    assert m, f"serve did not say where it listens: {line!r}"
    host, port = m.group(1), int(m.group(2))

    def post(path: str, body: bytes) -> tuple[int, bytes]:
        c = http.client.HTTPConnection(host, port, timeout=60)
        c.request("POST", path, body)
        r = c.getresponse()
        return r.status, r.read()

    yield post
    p.terminate()
    p.wait(timeout=30)


def flags(opts: dict) -> list[str]:
    out = []
    for k, v in opts.items():
        # tez_dag is the CLI's --dag (in Python and the service `dag` is the DAG itself).
        out += [f"--{'dag' if k == 'tez_dag' else k.replace('_', '-')}", v]
    return out


def kwargs(opts: dict) -> dict:
    """The options as Python keyword arguments: numbers as ints, names as strings."""
    return {k: int(v) if v.isdigit() else v for k, v in opts.items()}


def query(opts: dict) -> str:
    return "&".join(f"{k}={v}" for k, v in opts.items())


@pytest.mark.parametrize("rel,extra", INPUTS, ids=[Path(r).name for r, _ in INPUTS])
def test_every_format_gives_the_same_bytes_through_every_front_end(cli, service, rel, extra):
    opts = {**COMMON, **extra}
    body = (ROOT / rel).read_bytes()
    lb_opts = {k: v for k, v in opts.items() if k != "improve"}
    named = f"&name={Path(rel).stem}" if rel in NAMELESS else ""
    # Lower bounds: CLI --json, Python, service.
    want = cli("lower-bound", rel, "--json", *flags(lb_opts)).stdout.decode().rstrip("\n")
    assert graphene_sched.lower_bound(rel, **kwargs(lb_opts)).json == want
    status, got = service(f"/v1/lower-bound?{query(lb_opts)}{named}", body)
    assert status == 200, got
    assert got.decode().rstrip("\n") == want
    # The schedule: CLI, Python, service, without timings.
    want = cli("build-schedule", rel, "--no-timing", "-q", *flags(opts)).stdout
    s = graphene_sched.build_schedule(rel, no_timing=True, **kwargs(opts))
    assert s.json == want
    status, got = service(f"/v1/schedule?no_timing=true&{query(opts)}{named}", body)
    assert status == 200, got
    assert got == want
