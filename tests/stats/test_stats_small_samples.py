"""Tiny samples and too few resamples (issue 13, defects 2 and 3): the exact randomization
test, the smallest attainable p-value, and the cautions a comparison carries."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rankmeter import compare, stats
from rankmeter.errors import PolicyError


def _enumerated(diffs: np.ndarray) -> float:
    """The exact two-sided randomization p-value over all 2^n sign patterns, by brute force."""
    observed = abs(diffs.sum())
    extreme = 0
    for signs in itertools.product((1.0, -1.0), repeat=len(diffs)):
        extreme += abs((np.array(signs) * diffs).sum()) >= observed - 1e-12
    return extreme / 2 ** len(diffs)


@pytest.mark.parametrize("n", [2, 3, 5, 8, 10])
def test_randomization_is_exact_when_every_sign_pattern_fits(n: int) -> None:
    rng = np.random.default_rng(n)
    diffs = np.column_stack([rng.normal(0.05, 0.1, n), np.abs(rng.normal(0, 0.1, n))])
    got = stats.paired_pvalues(diffs, "randomization", resamples=2**n, seed=3)
    expected = [_enumerated(diffs[:, j]) for j in range(2)]
    assert got.tolist() == expected  # exactly: the same count over the same patterns
    # any seed, any resamples >= 2^n: the same exact p-values
    again = stats.paired_pvalues(diffs, "randomization", resamples=10_000, seed=99)
    assert again.tolist() == expected


def test_three_queries_all_better_is_p_one_quarter() -> None:
    diffs = np.array([0.1, 0.2, 0.3])
    assert stats.paired_pvalues(diffs, "randomization").tolist() == [0.25]
    assert stats.smallest_pvalue("randomization", 3, 10_000) == 0.25


def test_smallest_pvalue() -> None:
    assert stats.smallest_pvalue("randomization", 100, 50) == 1 / 51
    assert stats.smallest_pvalue("bootstrap", 3, 999) == 1 / 1000
    assert stats.smallest_pvalue("t", 3, 10) == 0.0
    assert stats.smallest_pvalue("sign", 4, 10) == 2 / 16


def test_too_few_resamples_to_reach_alpha_is_a_caution() -> None:
    rng = np.random.default_rng(1)
    qrels = {f"q{i}": {"a": 1, "b": 1} for i in range(40)}
    runs = {
        name: {
            f"q{i}": {"a": rng.random(), "b": rng.random(), "c": rng.random()} for i in range(40)
        }
        for name in ("x", "y", "z")
    }
    result = compare(qrels, runs, ["P@1", "RR"], resamples=50)
    (caution,) = [c for c in result.cautions if "resamples" in c]
    assert caution == (
        "with 50 resamples the smallest p-value the paired randomization test can give is "
        "1/51 = 0.0196, which the Holm correction over 4 comparisons makes 0.0784, not below "
        "alpha 0.05: no difference can be significant; use at least 80 resamples"
    )
    assert not [c for c in compare(qrels, runs, ["P@1"], resamples=2000).cautions]


@pytest.mark.parametrize("resamples", [1, 2, 19])
def test_compare_refuses_fewer_than_the_minimum_resamples(resamples: int) -> None:
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}}
    runs = {"x": {"q1": {"a": 1.0}}, "y": {"q2": {"a": 1.0}}}
    with pytest.raises(
        PolicyError,
        match=rf"^resamples={resamples} must be an integer from 20 to 10,000,000 \(randomizations and "
        r"bootstrap resamples; fewer cannot give a p-value below 0\.05\)$",
    ):
        compare(qrels, runs, ["P@1"], resamples=resamples)


def _tiny(test: str) -> object:
    qrels = {f"q{i}": {"a": 1, "b": 0} for i in range(3)}
    base = {f"q{i}": {"b": 2.0, "a": 1.0} for i in range(3)}
    better = {f"q{i}": {"a": 2.0, "b": 1.0} for i in range(3)}
    return compare(qrels, {"base": base, "better": better}, ["P@1"], test=test)


def test_three_queries_warn_and_the_exact_test_is_used() -> None:
    result = _tiny("randomization")
    d = result.difference("better", "P@1")  # type: ignore[attr-defined]
    assert d.p_value == 0.25 and not d.significant
    cautions = result.cautions  # type: ignore[attr-defined]
    assert (
        "with 3 queries the smallest p-value the exact paired randomization test can give is "
        "2/8 = 0.25, not below alpha 0.05: no difference can be significant; it takes at "
        "least 6 queries"
    ) in cautions
    assert any(c.startswith("only 3 queries: bootstrap intervals are too narrow") for c in cautions)
    assert any("all 2^3 = 8 sign patterns" in n for n in result.notes)  # type: ignore[attr-defined]


def test_the_bootstrap_test_is_refused_below_twenty_queries() -> None:
    with pytest.raises(
        PolicyError,
        match=r"^test='bootstrap' needs at least 20 queries \(got 3\): with fewer its p-values "
        r"are too small",
    ):
        _tiny("bootstrap")


def test_the_t_test_warns_with_few_queries() -> None:
    cautions = _tiny("t").cautions  # type: ignore[attr-defined]
    assert any(c.startswith("only 3 queries: the paired t-test relies on") for c in cautions)
