"""The A/B analysis on Spark (Ibis' PySpark backend, local[2]) gives the numbers it gives on
DuckDB: the same per-user aggregates, the same statistics, the same exact quantiles."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ibis")
pytest.importorskip("tea_tasting")

import pyarrow.parquet as pq
from _ab_logs import random_log

from rankmeter.online import ab, user_metrics


@pytest.mark.spark
def test_duckdb_and_spark_give_the_same_analysis(spark_backend: Any, tmp_path: Path) -> None:
    rates = {("control", True): 0.2, ("treatment", True): 0.1, ("treatment", False): 0.3}
    path = tmp_path / "log.parquet"
    pq.write_table(random_log(200, seed=11, ctr=rates), path)

    # the log check on Spark is tested in test_logs.py; here the analysis itself
    users_spark = user_metrics(path, engine="spark", validate=False).to_pyarrow()
    users_duckdb = user_metrics(path, validate=False).to_pyarrow()
    users_spark, users_duckdb = users_spark.sort_by("user_id"), users_duckdb.sort_by("user_id")
    for column in users_duckdb.column_names:
        got, expected = users_spark[column].to_pylist(), users_duckdb[column].to_pylist()
        if column == "latency_ms_sum":  # sums of floats, added in another order
            assert got == pytest.approx(expected, rel=1e-12)
        else:
            assert got == expected, column

    a = ab(path, segments=["is_new_user"], engine="spark", validate=False)
    b = ab(path, segments=["is_new_user"], validate=False)
    assert a.srm == b.srm
    for x, y in zip(
        a.metrics + tuple(s.effect for s in a.segments),
        b.metrics + tuple(s.effect for s in b.segments),
        strict=True,
    ):
        assert x.metric == y.metric and x.verdict == y.verdict
        for name in ("control", "treatment", "difference_low", "pvalue", "mde"):
            assert getattr(x, name) == pytest.approx(getattr(y, name), rel=1e-9), name
    for x, y in zip(a.latency, b.latency, strict=True):
        assert (x.p50, x.p95, x.p99) == pytest.approx((y.p50, y.p95, y.p99), rel=1e-12)
