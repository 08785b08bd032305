"""Shared fixtures: the repository root, the CLI binary the parity tests compare against, and
the shared data set beside the checkout."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import List

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"


def cli_path() -> Path:
    p = Path(os.environ.get("GRAPHENE_CLI", ROOT / "target" / "release" / "graphene"))
    if not p.exists():
        pytest.fail(f"the parity tests need the CLI at {p}: cargo build --release -p graphene-cli (or set GRAPHENE_CLI)")
    return p


@pytest.fixture(scope="session")
def cli():
    exe = cli_path()

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        r = subprocess.run([str(exe), *args], cwd=ROOT, capture_output=True, timeout=600)
        if check and r.returncode != 0:
            raise AssertionError(f"graphene {' '.join(args)} failed: {r.stderr.decode()}")
        return r

    return run


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


def shared(rel: str) -> Path:
    p = SHARED / rel
    if not p.exists():
        pytest.fail(f"{p} is missing: the shared data set must be checked out beside the repository")
    return p


@pytest.fixture(autouse=True)
def _at_root(monkeypatch):
    # Paths in the tests are relative to the repository root, as the CLI sees them.
    monkeypatch.chdir(ROOT)


HEADER = "job,arrival,queue,stage,tasks,duration,cpu,mem,disk,net,parents,durations"


def write_trace(path: Path, *rows: str) -> Path:
    """A small native trace at `path`: the header, then one line per row; returns `path`."""
    path.write_text("\n".join([HEADER, *rows]) + "\n")
    return path


def cli_error(r: subprocess.CompletedProcess) -> str:
    """The CLI's error message without its `error: ` prefix."""
    lines: List[str] = [l for l in r.stderr.decode().splitlines() if l.startswith("error: ")]
    assert lines, r.stderr.decode()
    return lines[-1][len("error: "):]
