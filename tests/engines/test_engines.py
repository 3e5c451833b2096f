"""rankmeter.engines.connect: DuckDB embedded, Spark local, the same numbers from one expression."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ibis", reason="search logs need the [online] extra (ibis-framework)")

import pyarrow as pa
import pyarrow.parquet as pq

from rankmeter.engines import connect, engine_name
from rankmeter.errors import PolicyError


@pytest.fixture
def tiny_parquet(tmp_path: Path) -> Path:
    table = pa.table(
        {
            "variant": ["control", "treatment", "control", "treatment", "control"],
            "clicked": [True, False, False, True, True],
            "latency_ms": [10.0, 20.5, 30.0, 41.0, 50.25],
        }
    )
    path = tmp_path / "tiny.parquet"
    pq.write_table(table, path)
    return path


def _aggregates(backend: Any, path: Path) -> list[dict[str, Any]]:
    log = backend.read_parquet(str(path))
    summary = log.group_by("variant").aggregate(
        impressions=log.count(),
        clicks=log.clicked.cast("int64").sum(),
        latency=log.latency_ms.sum(),
    )
    rows: list[dict[str, Any]] = summary.order_by("variant").to_pyarrow().to_pylist()
    return rows


def test_duckdb_is_embedded_and_reads_parquet(tiny_parquet: Path) -> None:
    backend = connect()
    assert engine_name(backend) == "duckdb"
    assert _aggregates(backend, tiny_parquet) == [
        {"variant": "control", "impressions": 3, "clicks": 2, "latency": 90.25},
        {"variant": "treatment", "impressions": 2, "clicks": 1, "latency": 61.5},
    ]


def test_unknown_engine_is_refused() -> None:
    with pytest.raises(PolicyError, match=r"engine='flink' must be one of 'duckdb', 'spark'"):
        connect("flink")


def test_spark_settings_are_refused_for_duckdb() -> None:
    with pytest.raises(
        PolicyError, match=r"spark_master and spark_conf are settings of engine='spark'"
    ):
        connect("duckdb", spark_master="local[1]")


def test_missing_online_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ibis", None)  # import ibis now raises ImportError
    with pytest.raises(PolicyError, match=r"\[online\] extra.*pip install 'rankmeter\[online\]'"):
        connect("duckdb")


def test_missing_spark_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import rankmeter.engines as engines

    monkeypatch.setattr(engines, "_spark_backend", [])
    monkeypatch.setitem(sys.modules, "pyspark", None)
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    with pytest.raises(PolicyError, match=r"engine='spark' needs the \[spark\] extra"):
        connect("spark")


@pytest.mark.spark
def test_spark_and_duckdb_give_equal_aggregates(spark_backend: Any, tiny_parquet: Path) -> None:
    assert engine_name(spark_backend) == "spark"
    assert _aggregates(spark_backend, tiny_parquet) == _aggregates(connect(), tiny_parquet)


@pytest.mark.spark
def test_spark_session_is_started_once_and_reused(spark_backend: Any) -> None:
    assert connect("spark") is spark_backend
    assert connect("spark", spark_master="local[2]") is spark_backend
    with pytest.raises(PolicyError, match=r"a Spark session .* already runs in this process"):
        connect("spark", spark_master="local[1]")
