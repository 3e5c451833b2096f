"""benchmarks/clicks_bench.py end to end on a tiny log (timing itself is not tested here): the
vectorised PBM EM and the per-session Python reference give the same parameters."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "clicks_bench.py"


def test_the_clicks_benchmark_runs_and_both_ems_agree(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("clicks_bench", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    argv = ["--sessions", "1000", "--queries", "30", "--reference-iterations", "2"]
    assert bench.main(argv) == 0
    out = capsys.readouterr().out
    rows = [line.split(" | ") for line in out.splitlines() if line.startswith("| 1,000 |")]
    assert [row[1] for row in rows[:4]] == ["pbm", "ubm", "dbn", "cascade"]
    speed = rows[4]
    assert float(speed[-1].rstrip(" |")) < 1e-9  # the max difference between the two EMs
