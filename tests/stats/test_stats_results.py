"""Result objects: paired_test, bootstrap_intervals, win_tie_loss and correct return frozen
objects (scipy.stats style) whose numbers are exactly those of the array functions."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rankmeter.errors import PolicyError
from rankmeter.stats import (
    INTERVALS,
    TESTS,
    ConfidenceInterval,
    Correction,
    PairedTest,
    WinTieLoss,
    adjust,
    bootstrap_intervals,
    correct,
    effect_sizes,
    paired_pvalues,
    paired_test,
    win_tie_loss,
)


def _diffs(n: int = 40, m: int = 3, seed: int = 2) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.round(rng.normal(np.linspace(-0.05, 0.1, m), 0.2, size=(n, m)), 2)


@pytest.mark.parametrize("test", TESTS)
@pytest.mark.parametrize("interval", INTERVALS)
def test_paired_test_gives_the_numbers_of_the_array_functions(test: str, interval: str) -> None:
    diffs = _diffs()
    result = paired_test(diffs, test, interval=interval, level=0.9, resamples=300, seed=4)
    assert isinstance(result, PairedTest)
    np.testing.assert_array_equal(result.pvalue, paired_pvalues(diffs, test, resamples=300, seed=4))
    low, high = bootstrap_intervals(diffs, level=0.9, method=interval, resamples=300, seed=4)
    np.testing.assert_array_equal(result.low, low)
    np.testing.assert_array_equal(result.high, high)
    np.testing.assert_array_equal(result.effect_size, effect_sizes(diffs))
    wins, ties, losses = win_tie_loss(diffs)
    np.testing.assert_array_equal(result.wins, wins)
    np.testing.assert_array_equal(result.ties, ties)
    np.testing.assert_array_equal(result.losses, losses)
    np.testing.assert_allclose(result.mean_difference, diffs.mean(axis=0), rtol=1e-12)
    assert (result.n, result.test, result.interval, result.level) == (40, test, interval, 0.9)
    assert (result.resamples, result.seed) == (300, 4)


def test_bounds_from_a_wider_pass_give_the_same_result() -> None:
    diffs = _diffs(m=4)
    others = _diffs(m=5, seed=9)
    both = bootstrap_intervals(np.hstack([others, diffs]), resamples=400, seed=1)
    shared = paired_test(diffs, resamples=400, seed=1, bounds=both.select(slice(5, None)))
    alone = paired_test(diffs, resamples=400, seed=1)
    for name in ("pvalue", "low", "high", "effect_size", "wins", "ties", "losses"):
        np.testing.assert_array_equal(getattr(shared, name), getattr(alone, name))


@pytest.mark.parametrize(
    ("bounds", "message"),
    [
        (
            lambda d: bootstrap_intervals(d[:, :2], resamples=100),
            r"^bounds holds 2 intervals for 3 columns$",
        ),
        (
            lambda d: bootstrap_intervals(d, resamples=100, seed=5),
            r"^bounds were made with interval='bca', level=0.95, resamples=100, seed=5; this "
            r"test uses interval='bca', level=0.95, resamples=100, seed=0$",
        ),
        (lambda d: (d[0], d[1]), r"^bounds must be a ConfidenceInterval .*, not tuple$"),
    ],
)
def test_bounds_that_do_not_belong_are_refused(bounds: object, message: str) -> None:
    diffs = _diffs()
    with pytest.raises(PolicyError, match=message):
        paired_test(diffs, resamples=100, bounds=bounds(diffs))  # type: ignore[operator]


@pytest.mark.parametrize("n", [0, 1])
def test_fewer_than_two_queries_are_counted_not_tested(n: int) -> None:
    diffs = np.full((n, 2), -0.25)
    result = paired_test(diffs, resamples=50)
    for name in ("pvalue", "low", "high", "effect_size"):
        assert np.isnan(getattr(result, name)).all()
    assert result.losses.tolist() == [n, n] and result.wins.tolist() == [0, 0]
    assert result.n == n
    expected = [-0.25, -0.25] if n else [np.nan, np.nan]
    np.testing.assert_array_equal(result.mean_difference, expected)


def test_results_are_frozen_and_never_share_the_callers_arrays() -> None:
    diffs = _diffs()
    result = paired_test(diffs, resamples=100)
    with pytest.raises(AttributeError):
        result.n = 3  # type: ignore[misc]
    with pytest.raises(ValueError, match="read-only"):
        result.pvalue[0] = 0.5
    low = np.array([0.1, 0.2])
    interval = ConfidenceInterval(low, low + 1, level=0.9, method="bca", resamples=10, seed=0)
    low[0] = 9.0
    assert interval.low[0] == 0.1 and low.flags.writeable


def test_intervals_and_counts_still_unpack_as_the_tuples_they_were() -> None:
    diffs = _diffs()
    interval = bootstrap_intervals(diffs, level=0.8, method="percentile", resamples=200, seed=3)
    assert isinstance(interval, ConfidenceInterval)
    low, high = interval
    assert len(interval) == 2 and interval[0] is interval.low and interval[1] is interval.high
    assert low is interval.low and high is interval.high
    assert (interval.level, interval.method, interval.resamples, interval.seed) == (
        0.8,
        "percentile",
        200,
        3,
    )
    part = interval.select([0, 2])
    np.testing.assert_array_equal(part.low, low[[0, 2]])
    assert part.level == 0.8
    counts = win_tie_loss(diffs)
    assert isinstance(counts, WinTieLoss)
    wins, ties, losses = counts
    assert wins is counts.wins and ties is counts.ties and losses is counts.losses


def test_correct_adds_significance_to_adjust() -> None:
    p = [0.01, float("nan"), 0.04, 0.03, 0.001]
    for method in ("holm", "bonferroni", "bh", "none"):
        result = correct(p, method, alpha=0.05)
        assert isinstance(result, Correction)
        np.testing.assert_array_equal(result.adjusted, adjust(p, method))
        with np.errstate(invalid="ignore"):
            np.testing.assert_array_equal(result.significant, adjust(p, method) < 0.05)
        assert result.family == 4 and result.method == method and result.alpha == 0.05
    assert correct(p, "holm").significant.tolist() == [True, False, False, False, True]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"alpha": 0}, r"^alpha=0 must be a number strictly between 0 and 1 \(the significance"),
        ({"alpha": True}, r"^alpha=True must be a number strictly between 0 and 1"),
        ({"method": "sidak"}, r"^method='sidak' must be one of 'holm', 'bonferroni', 'bh'"),
    ],
)
def test_correct_checks_its_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        correct([0.1, 0.2], **kwargs)


def test_results_know_to_dict() -> None:
    result = paired_test(_diffs(n=10, m=2), "t", resamples=100)
    payload = json.loads(json.dumps(result.to_dict()))
    assert payload["test"] == "t" and len(payload["pvalue"]) == 2
    assert payload["wins"] == result.wins.tolist()
    assert correct([0.2]).to_dict()["significant"] == [False]
    assert bootstrap_intervals([0.5, 0.5]).to_dict()["low"] == [0.5]
