"""A click log's sufficient statistics: counted from the request by position matrix or as
aggregations in the log's engine (DuckDB, Spark), they are the same cells, and PBM, UBM and
cascade fitted on either give the same numbers; EM on the counts equals EM written out per
impression."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from _click_collection import collection

from rankmeter.clicks import ClickCounts, click_counts, click_log, fit, labels, simulate
from rankmeter.errors import FormatError, PolicyError

ibis = pytest.importorskip("ibis", reason="engine counts need the [online] extra (Ibis)")


def simulated(model: str = "ubm", sessions: int = 4_000, seed: int = 7) -> pa.Table:
    qrels, run = collection()
    return simulate(qrels, run, sessions=sessions, model=model, seed=seed)


def cells(counts: ClickCounts) -> list[tuple[Any, ...]]:
    return list(
        zip(
            counts.query_ids.take(pa.array(counts.pair)).to_pylist(),
            counts.doc_ids.take(pa.array(counts.pair)).to_pylist(),
            counts.rank.tolist(),
            counts.previous.tolist(),
            counts.clicked.tolist(),
            counts.count.tolist(),
            strict=True,
        )
    )


def test_counts_by_hand() -> None:
    # r1: a (1, clicked), b (2), c (3, clicked), d (4); r2: b (1), a (2)
    log = pa.table(
        {
            "request_id": ["r1"] * 4 + ["r2"] * 2 + ["r3"],
            "query_id": ["q"] * 7,
            "doc_id": ["a", "b", "c", "d", "b", "a", None],
            "position": [1, 2, 3, 4, 1, 2, None],
            "clicked": [True, False, True, False, False, False, False],
        }
    )
    counts = click_counts(log)
    assert cells(counts) == [
        ("q", "a", 0, 0, True, 1),
        ("q", "a", 1, 0, False, 1),
        ("q", "b", 0, 0, False, 1),
        ("q", "b", 1, 1, False, 1),
        ("q", "c", 2, 1, True, 1),
        ("q", "d", 3, 3, False, 1),
    ]
    assert (counts.sessions, counts.depth, counts.n_impressions) == (2, 4, 6)


def test_the_engine_counts_what_the_matrix_counts() -> None:
    table = simulated()
    from_matrix = click_counts(table)
    from_engine = click_counts(ibis.memtable(table))
    assert cells(from_engine) == cells(from_matrix)
    assert (from_engine.sessions, from_engine.depth) == (from_matrix.sessions, from_matrix.depth)
    # many impressions share a cell: the counts are what travels, not the log
    assert len(from_engine.count) < table.num_rows / 2


@pytest.mark.parametrize("model", ["pbm", "ubm", "cascade"])
def test_a_fit_in_the_engine_equals_the_fit_in_memory(model: str) -> None:
    table = simulated(model)
    in_memory = fit(table, model)
    in_engine = fit(ibis.memtable(table), model)
    assert in_engine.pairs().equals(in_memory.pairs())
    np.testing.assert_array_equal(in_engine.propensities, in_memory.propensities)
    assert in_engine.log_likelihood == in_memory.log_likelihood
    assert (in_engine.iterations, in_engine.sessions) == (in_memory.iterations, in_memory.sessions)


def test_click_labels_from_the_engine_equal_those_in_memory() -> None:
    table = simulated("pbm")
    assert (
        labels(ibis.memtable(table), min_impressions=5).to_dict()
        == labels(table, min_impressions=5).to_dict()
    )
    # DBN needs each request's clicks in order: an Ibis table is read whole for it
    assert (
        labels(ibis.memtable(table), "dbn", min_impressions=5).to_dict()
        == labels(table, "dbn", min_impressions=5).to_dict()
    )


def _pbm_per_impression(table: pa.Table, iterations: int) -> tuple[dict[Any, float], list[float]]:
    """PBM's EM written out one impression at a time (the textbook loop), from the same
    starting values :func:`fit` draws (seed 0, pairs in (query, doc) order)."""
    rows = table.filter(pa.compute.is_valid(table["doc_id"])).to_pylist()
    pairs = sorted({(r["query_id"], r["doc_id"]) for r in rows})
    depth = max(r["position"] for r in rows)
    rng = np.random.default_rng(0)
    start = np.clip(0.5 + rng.uniform(-0.1, 0.1, len(pairs)), 1e-6, 1 - 1e-6)
    alpha = dict(zip(pairs, start, strict=True))
    theta = list(np.clip(0.5 + rng.uniform(-0.1, 0.1, depth), 1e-6, 1 - 1e-6))
    for _ in range(iterations):
        a_sum = dict.fromkeys(pairs, 0.0)
        a_n = dict.fromkeys(pairs, 0)
        e_sum = [0.0] * depth
        e_n = [0] * depth
        for r in rows:
            pair, k = (r["query_id"], r["doc_id"]), r["position"] - 1
            e, a = theta[k], alpha[pair]
            if r["clicked"]:
                pe = pa_ = 1.0
            else:
                pe = e * (1 - a) / (1 - e * a)
                pa_ = (1 - e) * a / (1 - e * a)
            a_sum[pair] += pa_
            a_n[pair] += 1
            e_sum[k] += pe
            e_n[k] += 1
        alpha = {p: min(max(a_sum[p] / a_n[p], 1e-6), 1 - 1e-6) for p in pairs}
        theta = [min(max(e_sum[k] / e_n[k], 1e-6), 1 - 1e-6) for k in range(depth)]
    return alpha, theta


def test_em_on_counts_equals_em_per_impression() -> None:
    table = simulated("pbm", sessions=600, seed=2)
    model = fit(table, "pbm", max_iter=5, tol=1e-300)
    assert model.iterations == 5
    alpha, theta = _pbm_per_impression(table, 5)
    got = model.pairs().to_pydict()
    for q, d, a in zip(got["query_id"], got["doc_id"], got["attractiveness"], strict=True):
        assert a == pytest.approx(alpha[(q, d)], rel=1e-12, abs=1e-15)
    assert model.examination is not None
    assert model.examination.tolist() == pytest.approx(theta, rel=1e-12)


def test_engine_errors_name_the_request() -> None:
    rows = {
        "request_id": ["r1", "r1", "r2"],
        "query_id": ["q", "q", "q"],
        "doc_id": ["a", "b", "a"],
        "position": [1, 1, 1],
        "clicked": [True, False, False],
    }
    with pytest.raises(FormatError, match=r"request 'r1': a position appears twice") as error:
        click_counts(ibis.memtable(pa.table(rows)), source="log.parquet")
    assert str(error.value).startswith("log.parquet") and "\n" not in str(error.value)
    del rows["clicked"]
    with pytest.raises(FormatError, match=r"missing column 'clicked'"):
        click_counts(ibis.memtable(pa.table(rows)))


def test_dbn_and_held_out_measures_need_the_log_not_its_counts() -> None:
    counts = click_counts(simulated())
    with pytest.raises(PolicyError, match=r"each request's clicks in order"):
        fit(counts, "dbn")
    assert math.isfinite(fit(counts, "pbm").log_likelihood)
    assert click_counts(click_log(simulated())).n_pairs == counts.n_pairs


@pytest.mark.spark
def test_spark_counts_what_duckdb_counts(spark_backend: Any, tmp_path: Any) -> None:
    import pyarrow.parquet as pq

    table = simulated(sessions=1_000)
    path = tmp_path / "log.parquet"
    pq.write_table(table, path)
    duck = click_counts(ibis.duckdb.connect().read_parquet(str(path)))
    spark = click_counts(spark_backend.read_parquet(str(path)))
    assert cells(spark) == cells(duck)
    assert (spark.sessions, spark.depth) == (duck.sessions, duck.depth)
