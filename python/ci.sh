#!/usr/bin/env bash
# The Python package's CI (graphene-sched, imported as graphene_sched): builds the wheel in a
# fresh virtual environment, installs it and runs the pytest suite (API parity with the CLI,
# errors, the Gymnasium env, Dask runs and its dashboard, graphene-lab's grids on a 2-worker
# LocalCluster, Parquet tables, `python -m graphene_sched`, the console scripts, missing extras,
# and mypy reading the result types).
# Called by .ci/run after the CLI is built; run it by hand the same way: bash python/ci.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
cargo build --locked --release -q -p graphene-cli
# GRAPHENE_PY_VENV: where to make the venv (.ci/run keeps it for the docs' Python examples).
venv=${GRAPHENE_PY_VENV:-$(mktemp -d)/venv}
python3 -m venv "$venv"
# shellcheck disable=SC1091
. "$venv/bin/activate"
pip install -q --upgrade pip
# bokeh: Dask's dashboard, which the tests read while graphene's order runs (about 7 s with pip's
# cache, 17 s without it, measured on 2 busy cores).
pip install -q "maturin>=1.5,<2" pytest numpy pandas pyarrow gymnasium "dask[distributed]" "bokeh>=3.1" mypy
# The wheel's Rust build shares the workspace's target directory, so the crates built for the CLI
# above are not built again.
CARGO_TARGET_DIR="$root/target" pip install -q ./python
cd "$venv"  # import the installed package, not the source tree
GRAPHENE_CLI="$root/target/release/graphene" python -m pytest -q -p no:cacheprovider "$root/python/tests"
