"""The A/B analysis on Spark (Ibis' PySpark backend, local[2]) gives the numbers it gives on
DuckDB: the same per-user aggregates, the same statistics, the same exact quantiles."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("ibis")
pytest.importorskip("tea_tasting")
pytest.importorskip("pyspark")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs Java (17), which is not installed", allow_module_level=True)

from _ab_logs import random_log

from rankmeter.online import ab, user_metrics


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("rankmeter-ab-tests")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def test_duckdb_and_spark_give_the_same_analysis(spark: Any) -> None:
    import ibis

    rates = {("control", True): 0.2, ("treatment", True): 0.1, ("treatment", False): 0.3}
    log = random_log(200, seed=11, ctr=rates)
    spark.createDataFrame(log).createOrReplaceTempView("ab_log")
    on_spark = ibis.pyspark.connect(spark).table("ab_log")

    users_spark = user_metrics(on_spark).to_pyarrow().sort_by("user_id")
    users_duckdb = user_metrics(log).to_pyarrow().sort_by("user_id")
    for column in users_duckdb.column_names:
        got, expected = users_spark[column].to_pylist(), users_duckdb[column].to_pylist()
        assert got == pytest.approx(expected, rel=1e-12) if column == "latency_ms_sum" else (
            got == expected
        ), column  # fmt: skip

    a = ab(on_spark, segments=["is_new_user"], validate=False)  # the log check: test_logs
    b = ab(log, segments=["is_new_user"], validate=False)
    assert a.srm == b.srm
    for x, y in zip(a.metrics + tuple(s.effect for s in a.segments),
                    b.metrics + tuple(s.effect for s in b.segments), strict=True):  # fmt: skip
        assert x.metric == y.metric and x.verdict == y.verdict
        for name in ("control", "treatment", "difference_low", "pvalue", "mde"):
            assert getattr(x, name) == pytest.approx(getattr(y, name), rel=1e-9), name
    for x, y in zip(a.latency, b.latency, strict=True):
        assert (x.p50, x.p95, x.p99) == pytest.approx((y.p50, y.p95, y.p99), rel=1e-12)
