"""The CLI's files as pandas/pyarrow read them: `replay --format parquet` holds exactly what the
CSVs hold, with the same columns, typed; the utilization table is summary.json's series."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow.parquet as pq


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
