"""Bad arguments to every public function raise the package's own errors (GrapheneError
subclasses) naming the argument, never Python's OverflowError, TypeError or UnicodeError from
the binding layer; integers are never cut to fit."""

from __future__ import annotations

import numpy as np
import pytest

import graphene_sched
from graphene_sched import FieldError, GrapheneError, ParseError, UsageError

U64 = "expected an integer from 0 to 18446744073709551615"


def test_negative_and_huge_counts_name_the_argument():
    with pytest.raises(UsageError) as e:
        graphene_sched.gen_trace("traces/example.json", jobs=-1)
    assert str(e.value) == f"jobs: -1 is out of range ({U64})"
    with pytest.raises(UsageError, match=r"^jobs: 10000000000000000000\.\.\. \(101 digits\) is out of range"):
        graphene_sched.gen_trace("traces/example.json", jobs=10**100)
    with pytest.raises(UsageError, match=r"^queues: 18446744073709551616 is out of range"):
        graphene_sched.gen_trace("traces/example.json", jobs=2, queues=2**64)
    # Options take the same checks, named by the option; a u32 option has its own range.
    with pytest.raises(UsageError) as e:
        graphene_sched.build_schedule("traces/example.json", seed=-1)
    assert str(e.value) == f"seed: -1 is out of range ({U64})"
    with pytest.raises(UsageError) as e:
        graphene_sched.build_schedule("tests/data/tpch-2g-q6.json", query=2**32)
    assert str(e.value) == "query: 4294967296 is out of range (expected an integer from 0 to 4294967295)"
    with pytest.raises(UsageError, match=r"^spread_queues: -1 is out of range"):
        graphene_sched.read_trace("traces/small.csv", spread_queues=-1)
    with pytest.raises(UsageError, match=r"^seed: 18446744073709551616 is out of range"):
        graphene_sched.replay("traces/small.csv", seed=2**64)


def test_wrong_types_name_the_argument():
    with pytest.raises(UsageError) as e:
        graphene_sched.build_schedule("traces/example.json", scheduler=None)
    assert str(e.value) == "scheduler: expected a string, not None"
    # A replay's scheduler is a name or a policy written in Python.
    with pytest.raises(UsageError, match=r"^scheduler: expected a scheduler name or an object with a decide\(view\) method, not None$"):
        graphene_sched.replay("traces/small.csv", scheduler=None)
    # A float or a bool is not an integer (2.5 is refused, not cut to 2).
    with pytest.raises(UsageError, match=r"^jobs: expected an integer, not float$"):
        graphene_sched.gen_trace("traces/example.json", jobs=2.5)
    with pytest.raises(UsageError, match=r"^jobs: expected an integer, not bool$"):
        graphene_sched.gen_trace("traces/example.json", jobs=True)
    with pytest.raises(UsageError, match=r"^no_timing: expected True or False, not str$"):
        graphene_sched.build_schedule("traces/example.json", no_timing="yes")
    with pytest.raises(UsageError, match=r"^trace_format: expected a string, not int$"):
        graphene_sched.read_trace("traces/small.csv", trace_format=3)
    with pytest.raises(UsageError, match=r"^load: expected a number, not str$"):
        graphene_sched.gen_trace("traces/example.json", jobs=2, load="high")
    with pytest.raises(UsageError, match=r"^schedulers: expected a list, not int$"):
        graphene_sched.compare("traces/example.json", schedulers=5)
    with pytest.raises(UsageError, match=r"^schedulers\[1\]: expected a string, not int$"):
        graphene_sched.compare("traces/example.json", schedulers=["cp", 5])
    with pytest.raises(UsageError, match=r"^dags: expected an input or a list of inputs, not int$"):
        graphene_sched.compare(5)
    with pytest.raises(UsageError, match=r"^dag: expected a path, bytes, a dict or a graphene_sched.Dag, not float$"):
        graphene_sched.lower_bound(1.5)
    with pytest.raises(UsageError, match=r"^dag: the dict is not JSON: Object of type set"):
        graphene_sched.build_schedule({"stages": {1}})
    # A string with a lone surrogate has no UTF-8 form.
    with pytest.raises(UsageError, match=r"^demands: not valid Unicode text"):
        graphene_sched.build_schedule("traces/example.json", demands="\udcff")


def test_numpy_integers_are_integers():
    a = graphene_sched.gen_trace("traces/example.json", jobs=np.int64(3), queues=np.uint8(2), seed=np.int32(7))
    b = graphene_sched.gen_trace("traces/example.json", jobs=3, queues=2, seed=7)
    assert a.csv == b.csv


def test_non_utf8_bytes_name_the_input_and_the_offset():
    with pytest.raises(UsageError) as e:
        graphene_sched.lower_bound(b"\xff\xfe")
    assert str(e.value) == "dag: not UTF-8 text (invalid byte at offset 0)"
    with pytest.raises(UsageError, match=r"^dags\[1\]: not UTF-8 text \(invalid byte at offset 1\)$"):
        graphene_sched.compare(["traces/example.json", b"{\xff"])
    with pytest.raises(UsageError, match=r"^schedule: not UTF-8 text"):
        graphene_sched.validate("traces/example.json", b"\xff")
    # Valid bytes read as the file does (a byte-order mark dropped).
    raw = open("traces/example.json", "rb").read()
    assert graphene_sched.lower_bound(b"\xef\xbb\xbf" + raw).best == graphene_sched.lower_bound("traces/example.json").best


def test_schedules_and_typed_inputs_raise_their_classes(tmp_path):
    with pytest.raises(UsageError, match=r"^schedule: expected a path, bytes, a dict or a graphene_sched.Schedule, not None$"):
        graphene_sched.read_schedule(None)
    # An int is not a file descriptor here.
    with pytest.raises(UsageError, match=r"^schedule: expected .* not int$"):
        graphene_sched.read_schedule(1)
    bad = tmp_path / "s.json"
    bad.write_text("{")
    with pytest.raises(ParseError, match=r"s\.json: Expecting property name"):
        graphene_sched.read_schedule(bad)
    with pytest.raises(graphene_sched.GrapheneIOError):
        graphene_sched.read_schedule(tmp_path / "missing.json")
    with pytest.raises(ParseError, match=r"^schedule: "):
        graphene_sched.Schedule(b"{")
    with pytest.raises(FieldError, match=r"^schedule: \(top level\): expected a JSON object$"):
        graphene_sched.Schedule(b"[]")
    with pytest.raises(UsageError, match=r"^schedule: expected the schedule's JSON as bytes or str, not int$"):
        graphene_sched.Schedule(5)
    with pytest.raises(FieldError) as e:
        graphene_sched.Dag.from_dict({})
    assert str(e.value) == "stages: missing (expected a list of stages (read_dag reads the other formats))"
    with pytest.raises(FieldError, match=r"^stages\[0\]\.id: missing"):
        graphene_sched.Dag.from_dict({"stages": [{"tasks": 1}]})
    with pytest.raises(FieldError, match=r"^stages\[0\]\.parents: expected a list, not str$"):
        graphene_sched.Dag.from_dict({"stages": [{"id": "a", "parents": "b"}]})
    with pytest.raises(UsageError, match=r"^dag: expected a dict, not list$"):
        graphene_sched.Dag.from_dict([])
    with pytest.raises(FieldError, match=r"^machines\[0\]\.count: expected a non-negative integer, not 'x'$"):
        graphene_sched.Cluster.from_dict({"machines": [{"count": "x", "capacity": {}}]})
    with pytest.raises(FieldError, match=r"^machines: missing"):
        graphene_sched.Cluster.from_dict({})


# A matrix: every public function, every argument that takes a user value, every class of bad
# value. Each call either works or raises a GrapheneError; nothing else escapes.
BAD = [-1, 2**64, 10**100, 2.5, True, "x", b"\xff\xfe", None, [], object(), "\udcff"]
DAG = "traces/example.json"
TRACE = "traces/small.csv"
CALLS = {
    "build_schedule": (lambda **k: graphene_sched.build_schedule(**{"dag": DAG, **k}), ["dag", "cluster", "scheduler", "seed", "machines", "query", "threads", "grid_step", "capacity", "placement"]),
    "lower_bound": (lambda **k: graphene_sched.lower_bound(**{"dag": DAG, **k}), ["dag", "cluster", "executors", "format"]),
    "validate": (lambda **k: graphene_sched.validate(**{"dag": DAG, "schedule": b"{}", **k}), ["dag", "schedule", "machines"]),
    "compare": (lambda **k: graphene_sched.compare(**{"dags": [DAG], "schedulers": ["cp"], **k}), ["dags", "schedulers", "seed"]),
    "gen_trace": (lambda **k: graphene_sched.gen_trace(**{"dags": DAG, "jobs": 2, **k}), ["dags", "jobs", "arrival", "queues", "load", "seed"]),
    "replay": (lambda **k: graphene_sched.replay(**{"trace": TRACE, "no_timing": True, **k}), ["trace", "scheduler", "seed", "spread_queues", "fairness", "waves", "moving_delay", "decima_model", "cs_assignments_per_heartbeat"]),
    "read_dags": (lambda **k: graphene_sched.read_dags(**{"path": DAG, **k}), ["path", "query", "demands", "job"]),
    "read_cluster": (lambda **k: graphene_sched.read_cluster(**k), ["path", "machines", "capacity", "speeds"]),
    "read_trace": (lambda **k: graphene_sched.read_trace(**{"path": TRACE, **k}), ["path", "trace_format", "spread_queues"]),
    "read_schedule": (lambda **k: graphene_sched.read_schedule(**k), ["path"]),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_every_argument_raises_only_graphene_errors(name):
    call, params = CALLS[name]
    for p in params:
        for v in BAD:
            try:
                call(**{p: v})
            except GrapheneError:
                pass
            except Exception as e:  # noqa: BLE001 - the point of the test
                pytest.fail(f"{name}({p}={v!r}) raised {type(e).__name__}: {e}")


def test_saving_names_the_argument_or_the_file(tmp_path):
    s = graphene_sched.build_schedule("traces/example.json", no_timing=True)
    r = graphene_sched.replay("traces/small.csv", no_timing=True)
    t = graphene_sched.gen_trace("traces/example.json", jobs=2)
    for save in (s.save, t.save, r.save):
        with pytest.raises(UsageError, match=r"^(path|out): expected a path, not None$"):
            save(None)
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(graphene_sched.GrapheneIOError, match=r"file/s\.json: Not a directory$"):
        s.save(blocker / "s.json")
    with pytest.raises(graphene_sched.GrapheneIOError, match=r"file/out: Not a directory$"):
        r.save(blocker / "out")
    s.save(tmp_path / "s.json")
    assert (tmp_path / "s.json").read_bytes() == s.json
