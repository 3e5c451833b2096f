"""stability(qrels, runs, metrics) (issue 13, item 3): compare's query set (every judged query,
a missing query scoring 0), one stats.query_stability per metric on compare's very scores;
adding a run leaves the query set alone; bad input is one line, before any file is read."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rankmeter import compare
from rankmeter.comparison import QueryStability, stability
from rankmeter.errors import PolicyError
from rankmeter.stats import query_stability

QRELS = {f"q{i}": {"a": 1, "b": 1 if i % 3 else 0} for i in range(30)}
GOOD = {f"q{i}": {"a": 2.0, "b": 1.5, "x": 1.0} for i in range(30)}
MIXED = {f"q{i}": ({"a": 2.0, "x": 1.0} if i % 2 else {"x": 2.0, "a": 1.0}) for i in range(30)}
# Answers only ten queries: the other twenty score 0 for it.
PARTIAL = {f"q{i}": {"a": 2.0} for i in range(10)}


def test_each_metric_is_query_stability_of_compares_scores() -> None:
    runs = {"mixed": MIXED, "good": GOOD, "partial": PARTIAL}
    result = stability(QRELS, runs, ["RR", "P@2"], resamples=200, splits=150, seed=4)
    assert isinstance(result, QueryStability)
    compared = compare(QRELS, runs, ["RR", "P@2"], resamples=200)
    assert result.n == len(compared.query_ids) == 30
    for label in ("RR", "P@2"):
        scores = np.column_stack([compared.scores[label][n] for n in ("mixed", "good", "partial")])
        expected = query_stability(
            scores, ["mixed", "good", "partial"], resamples=200, splits=150, seed=4
        )
        assert result[label] == expected
    assert result["RR"].order == ("good", "mixed", "partial")
    assert result.filled == {"mixed": 0, "good": 0, "partial": 20}
    assert "without results: mixed 0, good 0, partial 20" in result.notes[-1]
    data = result.to_dict()
    assert data["by_metric"]["RR"]["order"] == ["good", "mixed", "partial"]
    assert data["policies"]["include_missing"] is True


def test_adding_a_run_leaves_the_query_set_and_the_other_pairs_alone() -> None:
    two = stability(QRELS, {"mixed": MIXED, "good": GOOD}, ["RR"], resamples=200, splits=100)
    three = stability(
        QRELS, {"mixed": MIXED, "good": GOOD, "partial": PARTIAL}, ["RR"], resamples=200, splits=100
    )
    assert two.n == three.n == 30
    before, after = two["RR"].pair("good", "mixed"), three["RR"].pair("good", "mixed")
    assert before == after


def test_an_unknown_metric_label_is_named() -> None:
    result = stability(QRELS, {"mixed": MIXED, "good": GOOD}, ["RR"], resamples=100, splits=100)
    with pytest.raises(PolicyError, match=r"no metric 'AP' in this result; it has RR"):
        result["AP"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"resamples": 50}, r"resamples=50 must be an integer from 100 to 10,000,000"),
        ({"splits": 10**9}, r"splits=1000000000 must be an integer from 100 to 10,000,000"),
        ({"seed": -3}, r"seed=-3 must be an integer >= 0"),
        ({"ties": "random"}, r"ties"),
    ],
)
def test_bad_arguments_are_refused_before_any_file_is_read(
    kwargs: dict, message: str, tmp_path: Path
) -> None:
    missing = tmp_path / "none.qrels"
    with pytest.raises(PolicyError, match=message):
        stability(missing, [missing, missing], ["RR"], **kwargs)


def test_one_run_or_runs_without_judged_queries_are_one_line() -> None:
    with pytest.raises(PolicyError, match=r"stability needs two runs or more; got 1"):
        stability(QRELS, {"good": GOOD}, ["RR"])
    stray = {"z1": {"a": 1.0}}
    with pytest.raises(PolicyError, match=r"no run has results for any judged query"):
        stability(QRELS, {"s": stray, "t": stray}, ["RR"])
