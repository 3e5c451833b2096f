"""compare_power: `rankmeter power` as a Python call (both runs on every judged query, each
metric's differences analysed by stats.power, the correction over the metrics asked)."""

from __future__ import annotations

import numpy as np
import pytest

from rankmeter.comparison import compare_power
from rankmeter.data import Qrels, Run
from rankmeter.errors import PolicyError
from rankmeter.evaluation import evaluate
from rankmeter.stats import power


def _data() -> tuple[Qrels, dict[str, Run]]:
    rng = np.random.default_rng(7)
    qrels = Qrels.from_dict({f"q{i}": {"d1": 1, "d2": int(i % 2)} for i in range(30)})
    base = Run.from_dict(
        {f"q{i}": {f"d{j}": float(rng.random()) for j in range(1, 6)} for i in range(30)}
    )
    # The new system answers only 25 of the 30 judged queries.
    new = Run.from_dict(
        {f"q{i}": {f"d{j}": float(rng.random()) + (j < 3) for j in range(1, 6)} for i in range(25)}
    )
    return qrels, {"base": base, "new": new}


def test_each_metric_is_the_power_of_its_differences_on_every_judged_query() -> None:
    qrels, runs = _data()
    result = compare_power(qrels, runs, ["RR", "P@5"], alpha=0.1, seed=3)
    assert (result.baseline, result.system, list(result.analyses)) == ("base", "new", ["RR", "P@5"])
    scores = evaluate(qrels, runs, ["RR", "P@5"], include_missing=True)
    for label in ("RR", "P@5"):
        before = dict(
            zip(scores["base"].per_query.query_ids, scores["base"].per_query[label], strict=True)
        )
        after = dict(
            zip(scores["new"].per_query.query_ids, scores["new"].per_query[label], strict=True)
        )
        diffs = np.array([after[q] - before[q] for q in scores["new"].per_query.query_ids])
        expected = power(diffs, alpha=0.1, correction="holm", comparisons=2, seed=3)
        assert result.analyses[label] == expected
        assert result.analyses[label].n == 30
    assert result.notes == (
        "queries: every judged query (30); a run without results for one scores 0 on it "
        "(trec_eval -c); without results: base 0, new 5",
    )
    assert result.to_dict()["metrics"]["RR"] == result.analyses["RR"].to_dict()


def test_the_default_metrics_are_compares_and_two_runs_are_needed() -> None:
    qrels, runs = _data()
    assert list(compare_power(qrels, runs).analyses) == ["nDCG@10", "P@10", "R@100", "RR", "AP"]
    with pytest.raises(PolicyError, match="power compares two runs"):
        compare_power(qrels, {"base": runs["base"]})
