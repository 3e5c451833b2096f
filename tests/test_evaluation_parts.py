"""rankmeter.evaluation.per_query_values: the per-query work that the streaming engine runs on a
run file's chunks and the Spark engine on each bucket of queries (one function for both, so
the two cannot drift apart), given a run in parts, equals the evaluation of the whole run."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import rankmeter
from rankmeter.evaluation import check_policies, per_query_values, resolve_metrics
from rankmeter.io import as_qrels, as_run

METRICS = ["nDCG@10", "P(rel=2)@5", "AP", "RR", "R@100", "bpref", "Judged@100", "num_ret"]


def _case(seed: int) -> tuple[dict[str, Any], dict[str, dict[str, float]]]:
    rng = np.random.default_rng(seed)
    qrels = {
        str(q): {f"d{d}": int(rng.integers(0, 4)) for d in rng.choice(80, 12, replace=False)}
        for q in range(1, 41)
    }
    run = {
        str(q): {f"d{d}": float(rng.integers(0, 4)) for d in rng.choice(80, 30, replace=False)}
        for q in [*range(1, 41, 2), *range(2, 30, 2), 99]  # queries 30, 32, ... 40 missing
    }
    return qrels, run


@pytest.mark.parametrize(
    "policies",
    [{}, {"include_missing": True}, {"judged_only": True, "rel": 2}],
    ids=["default", "include_missing", "judged_only-rel2"],
)
def test_a_run_in_parts_scores_as_the_whole_run(policies: dict[str, Any]) -> None:
    qrels, run = _case(seed=1)
    queries = list(run)
    parts = [as_run({q: run[q] for q in queries[i::3]}) for i in range(3)]  # out of order
    measures = resolve_metrics(METRICS)
    got = per_query_values(as_qrels(qrels), parts, measures, check_policies(**policies))
    expected = rankmeter.evaluate(qrels, run, METRICS, **policies)
    loaded = as_qrels(qrels)
    assert tuple(str(q) for q in loaded.segment_ids[got.rows]) == expected.per_query.query_ids
    for metric in METRICS:
        np.testing.assert_array_equal(got.values[metric], expected.per_query[metric])
    assert got.judged_k == expected.judged_k == 100
    np.testing.assert_array_equal(got.judged, expected.per_query["Judged@100"])
    np.testing.assert_array_equal(got.num_ret, expected.per_query["num_ret"])


def test_no_part_in_common_gives_no_queries() -> None:
    qrels = as_qrels({"1": {"a": 1}})
    measures = resolve_metrics("AP")
    got = per_query_values(qrels, [as_run({"9": {"a": 1.0}})], measures, check_policies())
    assert got.n_queries == 0 and got.values["AP"].shape == (0,) and got.judged_k == 10
    none = per_query_values(qrels, [], measures, check_policies(include_missing=True))
    assert none.rows.tolist() == [0] and none.values["AP"].tolist() == [0.0]
