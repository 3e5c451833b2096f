"""The click simulator: a log with the online contract's columns, seeded, and clicks that
follow the click model asked for."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from _click_collection import collection

from rankmeter.clicks import default_attractiveness, simulate
from rankmeter.errors import PolicyError

CONTRACT = {
    "event_ts": pa.timestamp("us"),
    "user_id": pa.string(),
    "session_id": pa.string(),
    "request_id": pa.string(),
    "query_id": pa.string(),
    "result_count": pa.int64(),
    "latency_ms": pa.float64(),
    "variant": pa.string(),
    "doc_id": pa.string(),
    "position": pa.int64(),
    "clicked": pa.bool_(),
    "dwell_ms": pa.float64(),
}


def test_the_log_has_the_contract_columns_and_types() -> None:
    qrels, run = collection()
    log = simulate(qrels, run, sessions=500, seed=1)
    assert {name: log.schema.field(name).type for name in log.column_names} == CONTRACT
    assert log.num_rows == 500 * 10
    columns = log.to_pydict()
    assert len(set(columns["request_id"])) == 500
    assert set(columns["result_count"]) == {10}
    clicked = np.array(columns["clicked"])
    dwell = np.array(columns["dwell_ms"], dtype=object)
    assert all(d is None for d in dwell[~clicked]) and all(d > 0 for d in dwell[clicked])
    assert all(t > 0 for t in columns["latency_ms"])
    assert len(set(columns["user_id"])) <= 100


def test_same_seed_same_log_and_another_seed_another() -> None:
    qrels, run = collection()
    first = simulate(qrels, run, sessions=300, seed=4)
    assert first.equals(simulate(qrels, run, sessions=300, seed=4))
    assert not first.equals(simulate(qrels, run, sessions=300, seed=5))


def test_without_shuffling_the_run_order_is_shown() -> None:
    qrels = {"q1": {"a": 1}}
    run = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}}
    log = simulate(qrels, run, sessions=5, shuffle=0.0).to_pydict()
    assert log["doc_id"] == ["a", "b", "c"] * 5
    assert log["position"] == [1, 2, 3] * 5
    shuffled = simulate(qrels, run, sessions=200, shuffle=1.0).to_pydict()
    assert shuffled["doc_id"][::3].count("a") < 150  # a shown first about a third of the time


def test_click_rates_follow_the_model() -> None:
    # Every result of grade 1 of 1 (attractiveness 0.95): PBM clicks rank r about 0.95 / r of
    # the time; the cascade user clicks at most once.
    run = {"q": {f"d{i}": float(10 - i) for i in range(10)}}
    qrels = {"q": {f"d{i}": 1 for i in range(10)}}
    pbm = simulate(qrels, run, sessions=4000, shuffle=0.0, seed=2)
    rate = np.array(pbm.column("clicked").to_pylist()).reshape(-1, 10).mean(axis=0)
    assert np.allclose(rate, 0.95 / np.arange(1, 11), atol=0.03)
    cascade = simulate(qrels, run, sessions=1000, model="cascade", seed=2)
    per_request = np.array(cascade.column("clicked").to_pylist()).reshape(-1, 10).sum(axis=1)
    assert per_request.max() == 1
    dbn = simulate(qrels, run, sessions=1000, model="dbn", gamma=1.0, seed=2)
    clicks = np.array(dbn.column("clicked").to_pylist()).reshape(-1, 10).sum(axis=1)
    assert clicks.max() > 1  # not satisfied after a click: the user goes on


def test_unjudged_documents_count_as_grade_zero() -> None:
    log = simulate({"q": {"a": 1}}, {"q": {"b": 1.0}}, sessions=2000, seed=3)
    rate = np.mean(log.column("clicked").to_pylist())
    assert abs(rate - default_attractiveness(1)[0]) < 0.02


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sessions": 0}, r"sessions=0 must be an integer from 1 to"),
        ({"model": "dcm"}, r"model='dcm' must be one of 'pbm', 'cascade', 'dbn', 'ubm'"),
        ({"shuffle": 2}, r"shuffle=2 must be a number from 0 to 1"),
        ({"propensities": [1.0, 0.5]}, r"propensities gives 2 ranks but depth=10"),
        ({"propensities": [1.0, 1.5] + [0.1] * 8}, r"propensities\[1\]=1.5 must be a number"),
        ({"attractiveness": [0.1]}, r"attractiveness gives 1 probabilities but the qrels grade"),
    ],
)
def test_bad_parameters_are_one_line_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        simulate({"q": {"a": 1}}, {"q": {"a": 1.0}}, **kwargs)  # type: ignore[arg-type]
