"""A metric where lower is better (RBP_resid, issue 24): compare's wins and losses, its verdict,
the regression gate, the failures, all-pairs letters and the leaderboard follow the spec's
``better``, while the differences stay system minus baseline."""

from __future__ import annotations

import numpy as np
import pytest

from rankmeter import compare
from rankmeter.comparison import compare_all
from rankmeter.metrics import parse_metric
from rankmeter.metrics.docs import metric_rows
from rankmeter.report.comparison import verdict

N = 30


def case() -> tuple[dict, dict, dict]:
    """Qrels judging d0..d9 of every query; ``judged`` ranks those ten, ``shallow`` puts 1 to 5
    unjudged documents above the judged ones (a larger residual: worse)."""
    rng = np.random.default_rng(24)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in range(10)} for i in range(N)}
    judged = {q: {f"d{j}": 10.0 - j for j in range(10)} for q in qrels}
    shallow = {}
    for i, q in enumerate(qrels):
        unjudged = 1 + i % 5
        docs = {f"u{j}": 30.0 - j for j in range(unjudged)}
        docs.update({f"d{j}": 10.0 - j for j in range(10 - unjudged)})
        shallow[q] = docs
    return qrels, judged, shallow


def test_the_spec_says_lower_and_the_catalogue_shows_it() -> None:
    assert parse_metric("RBP_resid@10").spec.better == "lower"
    assert parse_metric("RBP@10").spec.better == "higher"
    for name in ("NumRet", "NumRel", "DCG@10", "nDCG@10", "AP"):
        assert parse_metric(name).spec.better == "higher"
    rows = {row["name"]: row for row in metric_rows()}
    assert rows["RBP_resid"]["better"] == "lower" and rows["RBP"]["better"] == "higher"


def test_a_lower_residual_wins_and_passes_the_gate() -> None:
    qrels, judged, shallow = case()
    result = compare(qrels, {"shallow": shallow, "judged": judged}, ["RBP_resid", "RBP"])
    d = result.difference("judged", "RBP_resid")
    assert d.better == "lower" and d.difference < 0 and d.gain > 0
    assert (d.wins, d.ties, d.losses) == (N, 0, 0)
    assert d.significant
    assert result.gate().passed
    assert "judged beats shallow on RBP_resid" in verdict(result)
    assert result.to_dict()["differences"][0]["better"] == "lower"
    (failures,) = [f for f in result.failures if f.system == "judged"]
    assert failures.worst == ()  # it lost no query on the residual


def test_a_higher_residual_is_a_regression() -> None:
    qrels, judged, shallow = case()
    result = compare(qrels, {"judged": judged, "shallow": shallow}, ["RBP_resid"])
    d = result.difference("shallow", "RBP_resid")
    assert d.difference > 0 and (d.wins, d.losses) == (0, N)
    gate = result.gate()
    assert not gate.passed
    assert [(r.system, r.metric) for r in gate.regressions] == [("shallow", "RBP_resid")]
    assert "shallow is worse than judged on RBP_resid" in verdict(result)
    (failures,) = [f for f in result.failures if f.system == "shallow"]
    # the worst first: the queries with the most unjudged documents on top
    assert failures.worst and failures.worst[0].difference == max(
        w.difference for w in failures.worst
    )
    assert all(w.difference > 0 for w in failures.worst)
    # a rise smaller than --min-effect passes
    assert result.gate(min_effect=d.difference + 0.01).passed


def test_all_pairs_letters_start_from_the_lowest_residual() -> None:
    qrels, judged, shallow = case()
    worst = {q: {f"u{j}": 40.0 - j for j in range(8)} | {"d0": 1.0} for q in qrels}
    result = compare_all(
        qrels, {"worst": worst, "shallow": shallow, "judged": judged}, ["RBP_resid"]
    )
    analysis = result.analyses["RBP_resid"]
    assert analysis.better == "lower"
    letters = dict(zip(analysis.systems, analysis.letters, strict=True))
    assert letters == {"judged": "a", "shallow": "b", "worst": "c"}


def test_better_is_checked() -> None:
    from rankmeter import stats
    from rankmeter.errors import RankmeterError

    with pytest.raises(RankmeterError, match="better"):
        stats.all_pairs(np.eye(3), better="more")


def test_stability_orders_the_lowest_residual_first() -> None:
    from rankmeter.comparison import stability

    qrels, judged, shallow = case()
    result = stability(qrels, {"shallow": shallow, "judged": judged}, ["RBP_resid", "RBP"])
    residual = result["RBP_resid"]
    assert residual.better == "lower" and residual.order == ("judged", "shallow")
    (pair,) = residual.pairs
    assert (pair.first, pair.second) == ("judged", "shallow")
    assert pair.difference < 0 and pair.kept == 1.0
    assert result["RBP"].better == "higher"
