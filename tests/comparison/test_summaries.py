"""Means and differences: numbers that agree with the per-query vectors and scipy, reproducible."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import scipy.stats

import rankmeter
from rankmeter import compare, evaluate
from rankmeter.report import comparison as report

from ._helpers import METRICS


def test_differences_match_the_per_query_vectors(
    data: tuple[dict, dict], result: rankmeter.Comparison
) -> None:
    qrels, runs = data
    base = evaluate(qrels, runs["base"], METRICS).per_query
    better = evaluate(qrels, runs["better"], METRICS).per_query
    d = result.difference("better", "nDCG@10")
    a, b = base["nDCG@10"], better["nDCG@10"]
    assert d.difference == pytest.approx(float(np.mean(b - a)), abs=1e-12)
    assert d.relative == pytest.approx(float(np.mean(b - a) / np.mean(a)))
    assert d.wins + d.ties + d.losses == 60
    assert d.wins == int(np.sum(b > a)) and d.losses == int(np.sum(b < a))
    assert d.effect_size == pytest.approx(float(np.mean(b - a) / np.std(b - a, ddof=1)))
    assert d.low <= d.difference <= d.high
    assert d.significant and d.difference > 0  # the better system is better
    assert not result.difference("noisy", "nDCG@10").difference > 0


def test_t_test_agrees_with_scipy(data: tuple[dict, dict]) -> None:
    qrels, runs = data
    result = compare(qrels, runs, METRICS, test="t", correction="none")
    base = evaluate(qrels, runs["base"], METRICS).per_query
    for system in ("better", "noisy"):
        other = evaluate(qrels, runs[system], METRICS).per_query
        for metric in METRICS:
            expected = scipy.stats.ttest_rel(other[metric], base[metric]).pvalue
            d = result.difference(system, metric)
            assert d.p_value == pytest.approx(expected, rel=1e-9)
            assert d.p_corrected == d.p_value  # no correction


def test_holm_correction_covers_every_comparison(result: rankmeter.Comparison) -> None:
    p = np.array([d.p_value for d in result.differences])
    order = np.argsort(p)
    m = len(p)
    expected = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        expected[i] = running
    assert [d.p_corrected for d in result.differences] == pytest.approx(list(expected))
    assert all(d.significant == (d.p_corrected < 0.05) for d in result.differences)


def test_same_seed_same_numbers_and_other_seeds_differ(data: tuple[dict, dict]) -> None:
    qrels, runs = data
    one = compare(qrels, runs, ["nDCG@10"], resamples=500, seed=11).to_dict()
    two = compare(qrels, runs, ["nDCG@10"], resamples=500, seed=11).to_dict()
    other = compare(qrels, runs, ["nDCG@10"], resamples=500, seed=12).to_dict()
    assert json.dumps(one) == json.dumps(two)
    assert json.dumps(one["differences"]) != json.dumps(other["differences"])


def test_a_systems_numbers_do_not_depend_on_the_other_systems(data: tuple[dict, dict]) -> None:
    qrels, runs = data
    pair = compare(qrels, {"base": runs["base"], "better": runs["better"]}, METRICS, seed=5)
    trio = compare(qrels, runs, METRICS, seed=5, correction="none")
    for metric in METRICS:
        a, b = pair.difference("better", metric), trio.difference("better", metric)
        assert (a.p_value, a.low, a.high) == (b.p_value, b.low, b.high)


@pytest.mark.parametrize(
    ("system", "counts"),
    [
        ({"a": {"n": 2.0, "x": 1.0}}, (0, 0, 1)),  # B loses its one query
        ({"a": {"x": 1.0}}, (0, 1, 0)),
    ],
)
def test_one_query_counts_wins_ties_and_losses(system: dict, counts: tuple[int, int, int]) -> None:
    # One query: no test, interval or effect size can be computed (NaN, shown as "–"), but
    # what happened on that query is known and counted.
    qrels = {"a": {"x": 1}}
    result = compare(qrels, {"A": {"a": {"x": 1.0}}, "B": system}, ["RR", "P@1"], resamples=50)
    for metric in ("RR", "P@1"):
        d = result.difference("B", metric)
        assert (d.wins, d.ties, d.losses) == counts
        assert d.n == 1
        for value in (d.p_value, d.p_corrected, d.low, d.high, d.effect_size):
            assert math.isnan(value)
        assert not d.significant
    row = report.difference_rows(result)[0]
    assert row[-1] == "{}/{}/{}".format(*counts)
    assert row[6] == "–"  # the p-value
