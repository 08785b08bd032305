"""The CLI's files as pandas/pyarrow read them: `replay --format parquet` holds exactly what the
CSVs hold, with the same columns, typed; the utilization table is summary.json's series."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow.parquet as pq
import pytest


def test_replay_parquet_matches_the_csvs(cli, tmp_path):
    common = ["replay", "traces/small.csv", "--scheduler", "graphene", "--no-timing", "-q"]
    cli(*common, "--out", str(tmp_path / "csv"))
    cli(*common, "--out", str(tmp_path / "pq"), "--format", "parquet")
    for table in ("jobs", "schedule"):
        csv = pd.read_csv(tmp_path / "csv" / f"{table}.csv", keep_default_na=False)
        par = pd.read_parquet(tmp_path / "pq" / f"{table}.parquet")
        assert list(par.columns) == list(csv.columns)
        assert len(par) == len(csv) > 0
        for col in csv.columns:
            assert par[col].tolist() == csv[col].tolist(), col
    sched = pq.read_schema(tmp_path / "pq" / "schedule.parquet")
    assert [str(t) for t in sched.types] == ["string", "string", "int64", "double", "double"]
    util = pd.read_parquet(tmp_path / "pq" / "utilization.parquet")
    summary = json.loads((tmp_path / "pq" / "summary.json").read_text())["summary"]
    assert list(util.columns) == ["t", *summary["resources"], "running"]
    assert util["t"].tolist() == [p["t"] for p in summary["utilization"]]
    assert util["cpu"].tolist() == [p["used"][0] for p in summary["utilization"]]
    # The summary is the same whichever table format was asked for.
    assert (tmp_path / "csv" / "summary.json").read_bytes() == (tmp_path / "pq" / "summary.json").read_bytes()


def test_the_parquet_module_gives_the_clis_tables(cli, tmp_path):
    """graphene_sched.parquet: a replay's tables built in Python equal the CLI's Parquet files
    (names, types, non-null, values), and save() writes files that read back the same."""
    import graphene_sched
    import graphene_sched.parquet as gp

    cli("replay", "traces/small.csv", "--scheduler", "graphene", "--no-timing", "-q", "--format", "parquet",
        "--out", str(tmp_path / "cli"))
    r = graphene_sched.replay("traces/small.csv", scheduler="graphene", no_timing=True)
    ours, theirs = gp.tables(r), gp.read(tmp_path / "cli")
    for name in gp.TABLES:
        assert ours[name].schema == theirs[name].schema, name
        assert ours[name].equals(theirs[name]), name
    assert ours["jobs"].num_rows == len(r.jobs) > 0
    gp.save(r, tmp_path / "py")
    again = gp.read(tmp_path / "py")
    for name in gp.TABLES:
        assert again[name].equals(theirs[name]), name
    assert (tmp_path / "py" / "summary.json").read_bytes() == (tmp_path / "cli" / "summary.json").read_bytes()
    with pytest.raises(graphene_sched.GrapheneIOError, match=r"jobs\.parquet"):
        gp.read(tmp_path / "nowhere")
    with pytest.raises(graphene_sched.UsageError, match=r"^result: expected a graphene_sched.ReplayResult, not str$"):
        gp.tables("traces/small.csv")
