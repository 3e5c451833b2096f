"""Randomised tests against exact enumeration, scipy.stats.permutation_test and a plain bootstrap."""

from __future__ import annotations

import inspect
import itertools
from typing import Any

import numpy as np
import pytest
import scipy.stats

from rankmeter.stats import paired_pvalues


def _rng_keyword(function: Any, seed: int) -> dict[str, Any]:
    """scipy >= 1.15 takes ``rng``; older versions ``random_state``."""
    name = "rng" if "rng" in inspect.signature(function).parameters else "random_state"
    return {name: np.random.default_rng(seed)}


def _exact_randomization_p(tenths: np.ndarray) -> float:
    """Two-sided p over all 2**n sign patterns, in exact integer arithmetic (tenths of a point)."""
    signs = np.array(list(itertools.product((1, -1), repeat=tenths.size)), dtype=np.int64)
    sums = signs @ tenths
    return float(np.mean(np.abs(sums) >= abs(int(tenths.sum()))))


# Differences in steps of 0.1, as precision-style metrics give: many sign patterns tie with the
# observed statistic exactly, though their floating-point sums are rounded differently.
@pytest.mark.parametrize(
    "tenths",
    [
        [1, 2, 3, -1, 0, 2, 1, 3],
        [1, 1, 1, 1, 1, 1, 1, -1],
        [3, -2, 1, 4, -1, 2, 2, 0],
        [1, -1, 2, -2, 3, -3, 1, 0],
        [5, 1, 2, 3, 2, 1, 4, 3],
    ],
)
def test_randomization_matches_exact_enumeration(tenths: list[int]) -> None:
    exact = _exact_randomization_p(np.array(tenths, dtype=np.int64))
    diffs = np.array(tenths) / 10
    resamples = 200_000
    p = paired_pvalues(diffs, "randomization", resamples=resamples, seed=5)[0]
    standard_error = np.sqrt(exact * (1 - exact) / resamples) + 1 / resamples
    assert abs(p - exact) < 5 * standard_error, (p, exact)


@pytest.mark.parametrize("tenths", [[1, 2, -3, 5], [1, 2, 3, -6, 1, 2]])
def test_exactly_tied_statistics_count_as_extreme(tenths: list[int]) -> None:
    # Flipping a subset that sums to zero leaves the sum unchanged, but 0.1 + 0.2 - 0.3 is not
    # 0.0 in floating point: without the tolerance such ties are missed (p 0.56 and 0.69 here).
    exact = _exact_randomization_p(np.array(tenths, dtype=np.int64))
    p = paired_pvalues(np.array(tenths) / 10, "randomization", resamples=100_000, seed=1)[0]
    assert abs(p - exact) < 0.005, (p, exact)


@pytest.mark.parametrize(
    ("n", "shift", "spread", "seed"),
    [(25, 0.05, 0.2, 0), (60, 0.02, 0.15, 1), (120, -0.03, 0.25, 2), (400, 0.0, 0.2, 3)],
)
def test_randomization_agrees_with_scipy_permutation_test(
    n: int, shift: float, spread: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    baseline = rng.random(n)
    system = np.clip(baseline + np.round(rng.normal(shift, spread, size=n), 2), 0, 1)

    def mean_difference(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
        return np.mean(x - y, axis=axis)

    expected = scipy.stats.permutation_test(
        (system, baseline),
        mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=10_000,
        alternative="two-sided",
        **_rng_keyword(scipy.stats.permutation_test, seed),
    ).pvalue
    p = paired_pvalues(system - baseline, "randomization", resamples=10_000, seed=seed)[0]
    assert abs(p - expected) < 0.02, (p, expected)


@pytest.mark.parametrize(("n", "shift", "seed"), [(30, 0.05, 0), (80, 0.02, 1), (300, 0.01, 2)])
def test_bootstrap_test_agrees_with_a_plain_bootstrap(n: int, shift: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    diffs = np.round(rng.normal(shift, 0.2, size=n), 2)
    resamples = 10_000
    centred = diffs - diffs.mean()
    draws = np.random.default_rng(seed + 100).integers(0, n, size=(resamples, n))
    means = centred[draws].mean(axis=1)
    expected = (np.sum(np.abs(means) >= abs(diffs.mean())) + 1) / (resamples + 1)
    p = paired_pvalues(diffs, "bootstrap", resamples=resamples, seed=seed)[0]
    assert abs(p - expected) < 0.02, (p, expected)


def test_randomised_tests_reject_a_real_difference_and_not_a_null_one() -> None:
    rng = np.random.default_rng(9)
    diffs = np.column_stack([rng.normal(0.1, 0.2, 200), rng.normal(0.0, 0.2, 200)])
    for test in ("randomization", "bootstrap", "t"):
        p = paired_pvalues(diffs, test, resamples=5000, seed=1)
        assert p[0] < 0.001 and p[1] > 0.05, (test, p)


def test_randomization_pvalue_is_never_zero() -> None:
    diffs = np.full(300, 0.2)
    p = paired_pvalues(diffs, "randomization", resamples=999, seed=0)
    assert p[0] == 1 / 1000
