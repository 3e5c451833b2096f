"""benchmarks/online_bench.py end to end on a tiny log and DuckDB alone (Spark's run is
`make bench`'s: it takes minutes). Everything is written to temporary folders."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("tea_tasting", reason="the online benchmark needs the [online] extra")

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def test_a_tiny_run_reports_the_engine(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    command = [
        sys.executable, str(BENCH / "online_bench.py"), "--impressions", "20000",
        "--engines", "duckdb", "--data-dir", str(tmp_path / "data"), "--out", str(out),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert text.startswith("<!-- online:start -->") and text.rstrip().endswith("online:end -->")
    row = next(line for line in text.splitlines() if line.startswith("| duckdb |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert float(cells[1]) > 0 and cells[4] == "", row  # a wall time, no error
    # The log is kept for the next run and reused.
    assert len(list((tmp_path / "data").glob("*.parquet"))) == 1
