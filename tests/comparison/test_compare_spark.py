"""compare(..., engine="spark"): the runs evaluated on Spark give the comparison the
in-process engine gives, and docs/spark.md's Python call runs as written. The Spark tests share
the test run's one local[2] session (tests/conftest.py)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rankmeter
from rankmeter.errors import PolicyError

DOCS = Path(__file__).resolve().parents[2] / "docs"
METRICS = ["nDCG@10", "AP"]


def write_collection(folder: Path) -> None:
    """qrels.txt, bm25.run and dense.run (tagged bm25 and dense): 12 queries, dense better on
    most, bm25 missing two of them."""
    qrels = "".join(f"q{q} 0 d{d} {(q + d) % 3}\n" for q in range(12) for d in range(6))
    (folder / "qrels.txt").write_text(qrels)
    for name, shift in (("bm25", 3), ("dense", 0)):
        lines = []
        for q in range(12):
            if name == "bm25" and q in (4, 9):
                continue  # two queries bm25 has no results for
            ranked = sorted(range(8), key=lambda d: (-((q + d) % 3), (d * (q + shift)) % 5))
            if name == "bm25":
                ranked = ranked[::-1] if q % 2 else ranked[shift:] + ranked[:shift]
            lines += [f"q{q} Q0 d{d} {r} {20 - r} {name}\n" for r, d in enumerate(ranked, 1)]
        (folder / f"{name}.run").write_text("".join(lines))


def same_comparison(got: rankmeter.Comparison, expected: rankmeter.Comparison) -> None:
    for field in dataclasses.fields(expected):
        if field.name not in ("scores", "curves"):
            assert repr(getattr(got, field.name)) == repr(getattr(expected, field.name)), field.name
    for family, by_system in expected.curves.items():
        for run, curve in by_system.items():
            np.testing.assert_array_equal(got.curves[family][run], curve)
    for metric, by_system in expected.scores.items():
        for run, values in by_system.items():
            np.testing.assert_array_equal(got.scores[metric][run], values)


@pytest.mark.spark
def test_the_docs_compare_on_spark_runs_as_written(tmp_path: Path, spark_backend: Any) -> None:
    text = (DOCS / "spark.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", text, re.DOTALL) if "engine=" in b]
    write_collection(tmp_path)
    # Spark reads a relative path from the directory its JVM started in, not from this
    # process's: the example's files are named by their full paths.
    for name in ("qrels.txt", "bm25.run", "dense.run"):
        assert f'"{name}"' in block, name
        block = block.replace(f'"{name}"', repr(str(tmp_path / name)))
    scope: dict[str, Any] = {}
    exec(compile(block, "docs/spark.md", "exec"), scope)
    runs = [str(tmp_path / "bm25.run"), str(tmp_path / "dense.run")]
    expected = rankmeter.compare(str(tmp_path / "qrels.txt"), runs, METRICS)
    same_comparison(scope["result"], expected)


@pytest.mark.spark
def test_compare_on_spark_is_compare_here(tmp_path: Path, spark_backend: Any) -> None:
    write_collection(tmp_path)
    qrels = str(tmp_path / "qrels.txt")
    runs = {"new": str(tmp_path / "dense.run"), "old": str(tmp_path / "bm25.run")}
    options: dict[str, Any] = {"baseline": "old", "rel": 2, "cutoff": 3, "worst": 2}
    options |= {"include_missing": False, "test": "t", "queries": {"q1": "first"}}
    got = rankmeter.compare(qrels, runs, METRICS, engine="spark", spark=spark_backend, **options)
    same_comparison(got, rankmeter.compare(qrels, runs, METRICS, **options))


@pytest.mark.spark
def test_compare_on_spark_takes_dataframes(tmp_path: Path, spark_backend: Any) -> None:
    # A notebook's tables: the qrels DataFrame is collected on the driver, the runs stay.
    from rankmeter.io import as_qrels, as_run

    write_collection(tmp_path)
    session = spark_backend._session
    qrels = as_qrels(tmp_path / "qrels.txt")
    runs = {name: as_run(tmp_path / f"{name}.run") for name in ("bm25", "dense")}
    frames = {
        name: session.createDataFrame(
            run.to_arrow().select(["query_id", "doc_id", "score"]).to_pandas()
        )
        for name, run in runs.items()
    }
    got = rankmeter.compare(
        session.createDataFrame(qrels.to_pandas()), frames, METRICS, engine="spark", spark=session
    )
    expected = rankmeter.compare(qrels, runs, METRICS)
    for metric in METRICS:
        assert repr(got.difference("dense", metric)) == repr(expected.difference("dense", metric))
    assert got.query_ids == expected.query_ids


def test_the_engine_is_checked_before_any_work() -> None:
    qrels = {"q1": {"a": 1}}
    runs = {"x": {"q1": {"a": 1.0}}, "y": {"q1": {"b": 1.0}}}
    with pytest.raises(PolicyError, match=r"engine='gpu' must be one of 'process', 'spark'"):
        rankmeter.compare(qrels, runs, engine="gpu")
    with pytest.raises(PolicyError, match=r"spark is a setting of engine='spark'"):
        rankmeter.compare(qrels, runs, spark=object())
