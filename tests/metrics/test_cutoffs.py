"""Metric.compute_at: a metric at many cutoffs at once is exactly the metric at each cutoff.

The metric@k curves of rankmeter.compare read compute_at, so these equalities are what makes
every point of a curve the number evaluate() reports for that cutoff.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from rankmeter.data import Qrels, Run
from rankmeter.errors import MetricError, RankmeterError
from rankmeter.metrics import SPECS, Metric, parse_metric
from rankmeter.metrics._ranked import Ranked, join, totals_within

CUTOFFS = (1, 2, 3, 5, 10, 37, 100, 150, 400)


def _ranked(seed: int, *, rel: float = 1, judged_only: bool = False) -> Ranked:
    """Up to 40 queries, lists up to 300 long, graded (and negative) judgments, tied scores,
    queries without results and results of unjudged queries."""
    rng = np.random.default_rng(seed)
    judgments: dict[str, dict[str, float]] = {}
    results: dict[str, dict[str, float]] = {}
    for q in range(int(rng.integers(1, 40))):
        docs = [f"d{q}_{i}" for i in range(int(rng.integers(0, 300)))]
        grades = rng.choice([-1, 0, 0, 1, 1, 2, 3, 0.5], size=len(docs))
        judged = rng.random(len(docs)) < 0.3
        judgments[f"q{q}"] = {
            d: float(g) for d, g, j in zip(docs, grades, judged, strict=True) if j
        }
        judgments[f"q{q}"][f"never{q}"] = float(rng.integers(1, 4))  # relevant, never retrieved
        if rng.random() < 0.9:
            scores = np.round(rng.normal(size=len(docs)), 1)  # ties
            results[f"q{q}"] = {d: float(s) for d, s in zip(docs, scores, strict=True)}
    results["unjudged"] = {"x": 1.0}
    return join(
        Qrels.from_dict(judgments),
        Run.from_dict(results),
        rel=rel,
        include_missing=True,
        judged_only=judged_only,
    )


def _variants() -> list[Metric]:
    out = []
    for spec in SPECS:
        if spec.cutoff == "none":
            continue
        out.append(Metric(spec))
        for p in spec.params:
            out += [Metric(spec, None, ((p.name, c),)) for c in p.choices if c != p.default]
            if p.name == "rel":
                out.append(Metric(spec, None, (("rel", 2),)))
    return out


@pytest.mark.parametrize("metric", _variants(), ids=str)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_cutoff_equals_the_metric_at_that_cutoff(metric: Metric, seed: int) -> None:
    for ranked in (_ranked(seed), _ranked(seed, rel=2, judged_only=True)):
        at = metric.compute_at(ranked, CUTOFFS)
        assert at.shape == (ranked.n_queries, len(CUTOFFS)) and at.dtype == np.float64
        for j, k in enumerate(CUTOFFS):
            # Bit for bit, not approximately: one definition of each metric.
            np.testing.assert_array_equal(at[:, j], replace(metric, cutoff=k).compute(ranked))


def test_the_families_that_add_up_ranks_give_every_cutoff_from_one_kernel() -> None:
    families = {spec.name for spec in SPECS if spec.at_cutoffs is not None}
    assert families == {
        "P",
        "R",
        "nDCG",
        "DCG",
        "ERR",
        "nERR",
        "RBP",
        "RBP_resid",
        "stat_P",
        "stat_nDCG",
    }
    ranked = _ranked(4)
    for family in sorted(families):
        metric = parse_metric(family)
        many = metric.compute_at(ranked, range(1, 101))
        one_by_one = np.column_stack(
            [parse_metric(f"{family}@{k}").compute(ranked) for k in range(1, 101)]
        )
        np.testing.assert_array_equal(many, one_by_one)


def test_running_totals_equal_one_total_per_cutoff() -> None:
    rng = np.random.default_rng(0)
    lengths = rng.integers(0, 130, size=50)
    groups = np.repeat(np.arange(50), lengths)
    positions = np.concatenate([np.arange(n) for n in lengths])
    weights = rng.random(len(groups)) / np.log2(positions + 2.0)
    ks = list(range(1, 121))
    many = totals_within(groups, positions, 50, ks, weights)
    for j, k in enumerate(ks):
        np.testing.assert_array_equal(
            many[:, j], totals_within(groups, positions, 50, [k], weights)[:, 0]
        )
    counts = totals_within(groups, positions, 50, [3, 200])
    np.testing.assert_array_equal(counts[:, 0], np.minimum(lengths, 3))
    np.testing.assert_array_equal(counts[:, 1], lengths)
    assert totals_within(groups, positions, 50, []).shape == (50, 0)
    np.testing.assert_array_equal(totals_within(groups, positions, 50, None)[:, 0], lengths)


def test_bad_cutoffs_are_refused() -> None:
    ranked = _ranked(5)
    with pytest.raises(MetricError, match=r"^cutoff=0 must be an integer >= 1 \(a rank\)$"):
        parse_metric("P").compute_at(ranked, [1, 0])
    with pytest.raises(MetricError, match=r"^cutoff=2.5 must be an integer >= 1"):
        parse_metric("nDCG").compute_at(ranked, [2.5])  # type: ignore[list-item]
    with pytest.raises(MetricError, match=r"^R-Prec takes no cutoff"):
        parse_metric("R-Prec").compute_at(ranked, [1])
    assert parse_metric("AP").compute_at(ranked, []).shape == (ranked.n_queries, 0)


def test_an_exp_gain_beyond_float64_is_still_an_error_at_many_cutoffs() -> None:
    qrels = Qrels.from_dict({"q": {"a": 2000, "b": 1}})
    ranked = join(qrels, Run.from_dict({"q": {"b": 2.0, "a": 1.0}}))
    with pytest.raises(RankmeterError, match=r"grade 2000 of query 'q' has the gain 2\^2000 - 1"):
        parse_metric("nDCG(gain=exp)").compute_at(ranked, [1, 2, 3])
