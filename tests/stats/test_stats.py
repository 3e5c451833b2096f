"""rankmeter.stats: the API, argument checks, edge cases, scipy agreement, determinism."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import scipy.stats

from rankmeter.errors import PolicyError
from rankmeter.stats import (
    CORRECTIONS,
    INTERVALS,
    NOT_RECOMMENDED,
    TESTS,
    adjust,
    bootstrap_intervals,
    effect_sizes,
    paired_pvalues,
    win_tie_loss,
)

RANDOMISED = ("randomization", "bootstrap")


def _diffs(n: int, m: int, seed: int = 0) -> np.ndarray:
    """Per-query differences that look like metric differences (steps of 0.01, many ties)."""
    rng = np.random.default_rng(seed)
    shift = np.linspace(-0.05, 0.1, m)
    return np.round(rng.normal(shift, 0.2, size=(n, m)), 2)


# ---------------------------------------------------------------- names


def test_names_are_the_documented_ones() -> None:
    assert TESTS == ("randomization", "t", "bootstrap", "wilcoxon", "sign")
    assert CORRECTIONS == ("holm", "bonferroni", "bh", "none")
    assert INTERVALS == ("bca", "percentile")
    assert set(NOT_RECOMMENDED) == {"wilcoxon", "sign"}
    assert all(isinstance(reason, str) and reason for reason in NOT_RECOMMENDED.values())
    with pytest.raises(TypeError):
        NOT_RECOMMENDED["t"] = "read-only"


# ---------------------------------------------------------------- shapes


@pytest.mark.parametrize("test", TESTS)
def test_pvalue_shapes(test: str) -> None:
    diffs = _diffs(30, 3)
    one = paired_pvalues(diffs[:, 0], test, resamples=200)
    many = paired_pvalues(diffs, test, resamples=200)
    assert one.shape == (1,) and many.shape == (3,)
    assert one.dtype == np.float64 and many.dtype == np.float64
    assert ((many >= 0) & (many <= 1)).all()
    assert paired_pvalues(np.empty((30, 0)), test).shape == (0,)


def test_other_shapes() -> None:
    diffs = _diffs(30, 3)
    low, high = bootstrap_intervals(diffs, resamples=200)
    assert low.shape == high.shape == (3,)
    assert (low <= high).all()
    assert effect_sizes(diffs).shape == (3,)
    wins, ties, losses = win_tie_loss(diffs)
    assert all(counts.dtype == np.int64 and counts.shape == (3,) for counts in (wins, ties, losses))
    np.testing.assert_array_equal(wins + ties + losses, [30, 30, 30])


def test_lists_are_accepted_and_inputs_are_not_written() -> None:
    diffs = _diffs(20, 2)
    kept = diffs.copy()
    diffs.flags.writeable = False
    for test in TESTS:
        paired_pvalues(diffs, test, resamples=100)
    bootstrap_intervals(diffs, resamples=100)
    effect_sizes(diffs)
    win_tie_loss(diffs)
    np.testing.assert_array_equal(diffs, kept)
    np.testing.assert_array_equal(paired_pvalues(diffs.tolist(), "t"), paired_pvalues(diffs, "t"))


# ---------------------------------------------------------------- argument checks


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: paired_pvalues([0.1, 0.2], "ttest"),
            r"test='ttest' must be one of 'randomization', 't', 'bootstrap', 'wilcoxon', 'sign'",
        ),
        (lambda: paired_pvalues([0.1, 0.2], None), r"test=None must be one of 'randomization'"),
        (
            lambda: paired_pvalues([0.1, 0.2], resamples=0),
            r"resamples=0 must be an integer from 1 to 10,000,000",
        ),
        (
            lambda: paired_pvalues([0.1, 0.2], resamples=10.5),
            r"resamples=10.5 must be an integer from 1 to 10,000,000",
        ),
        (lambda: paired_pvalues([0.1, 0.2], resamples=True), r"resamples=True must be an integer"),
        (lambda: paired_pvalues([0.1, 0.2], seed=-1), r"seed=-1 must be an integer >= 0"),
        (lambda: paired_pvalues([0.1, 0.2], seed="1"), r"seed='1' must be an integer >= 0"),
        (
            lambda: paired_pvalues([0.1, np.nan]),
            r"diffs contains nan at row 1, column 0; every value must be a finite number",
        ),
        (
            lambda: paired_pvalues([[0.1, 0.2], [np.inf, 0.0]]),
            r"diffs contains inf at row 1, column 0",
        ),
        (
            lambda: paired_pvalues(np.zeros((2, 2, 2))),
            r"diffs has shape \(2, 2, 2\); expected \(n_queries,\) or \(n_queries, n_columns\)",
        ),
        (lambda: paired_pvalues(0.5), r"diffs has shape \(\); expected"),
        (lambda: paired_pvalues(["a", "b"]), r"diffs must be numbers"),
        (
            lambda: bootstrap_intervals([0.1, 0.2], level=1.0),
            r"level=1.0 must be a number strictly between 0 and 1",
        ),
        (
            lambda: bootstrap_intervals([0.1, 0.2], level=0),
            r"level=0 must be a number strictly between 0 and 1",
        ),
        (
            lambda: bootstrap_intervals([0.1, 0.2], level=95),
            r"level=95 must be a number strictly between 0 and 1 \(e.g. 0.95 for 95%\)",
        ),
        (lambda: bootstrap_intervals([0.1, 0.2], level=float("nan")), r"level=nan must be"),
        (
            lambda: bootstrap_intervals([0.1, 0.2], method="bc"),
            r"method='bc' must be one of 'bca', 'percentile'",
        ),
        (
            lambda: bootstrap_intervals([0.1, 0.2], resamples=-5),
            r"resamples=-5 must be an integer from 1 to 10,000,000",
        ),
        (lambda: bootstrap_intervals([0.1, 0.2], seed=-3), r"seed=-3 must be an integer >= 0"),
        (lambda: bootstrap_intervals([0.1, np.nan]), r"values contains nan at row 1, column 0"),
        (lambda: effect_sizes([[0.1], [np.nan]]), r"diffs contains nan at row 1, column 0"),
        (lambda: win_tie_loss([0.1, np.nan]), r"diffs contains nan"),
        (
            lambda: win_tie_loss([0.1, 0.2], tolerance=-1e-3),
            r"tolerance=-0.001 must be a number >= 0",
        ),
        (
            lambda: adjust([0.1, 0.2], "fdr"),
            r"method='fdr' must be one of 'holm', 'bonferroni', 'bh', 'none'",
        ),
        (
            lambda: adjust([0.1, 1.2]),
            r"pvalues contains 1.2; every p-value must be in \[0, 1\] \(or NaN\)",
        ),
        (lambda: adjust([-0.1, 0.2]), r"pvalues contains -0.1"),
        (
            lambda: adjust([[0.1, 0.2]]),
            r"pvalues has shape \(1, 2\); expected a 1-D array of p-values",
        ),
    ],
)
def test_bad_arguments_raise_policy_errors(call: Callable[[], object], message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        call()


# ---------------------------------------------------------------- agreement with scipy


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("n", [5, 40, 700])
def test_t_test_is_scipy_ttest_rel(n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.random((n, 4))
    b = np.clip(a + rng.normal(0.02, 0.1, size=(n, 4)), 0, 1)
    expected = scipy.stats.ttest_rel(b, a, axis=0).pvalue
    np.testing.assert_allclose(paired_pvalues(b - a, "t"), expected, rtol=1e-12)
    one = scipy.stats.ttest_1samp(b - a, 0.0, axis=0).pvalue
    np.testing.assert_allclose(paired_pvalues(b - a, "t"), one, rtol=1e-12)


@pytest.mark.parametrize("n", [6, 20, 45, 80, 500])
def test_wilcoxon_is_scipy(n: int) -> None:
    diffs = _diffs(n, 4, seed=n)
    diffs[:, 3] = np.random.default_rng(n).normal(0.1, 0.3, size=n)  # no ties: the exact path
    expected = [
        scipy.stats.wilcoxon(diffs[:, j], zero_method="wilcox", method="auto").pvalue
        for j in range(4)
        if diffs[:, j].any()
    ]
    np.testing.assert_allclose(paired_pvalues(diffs, "wilcoxon"), expected, rtol=1e-12)


@pytest.mark.parametrize("n", [6, 20, 45, 500])
def test_sign_test_is_scipy_binomtest(n: int) -> None:
    diffs = _diffs(n, 4, seed=n)
    expected = []
    for j in range(4):
        wins = int((diffs[:, j] > 0).sum())
        losses = int((diffs[:, j] < 0).sum())
        expected.append(scipy.stats.binomtest(wins, wins + losses, 0.5).pvalue)
    np.testing.assert_allclose(paired_pvalues(diffs, "sign"), expected, rtol=1e-12)


def test_wilcoxon_and_sign_treat_rounding_noise_as_ties() -> None:
    diffs = np.array([0.2, 0.1, 0.3, 0.25, -0.05, 0.15, 0.2, 0.1])
    noisy = np.append(diffs, [1e-16, -2e-16, 5e-17])
    for test in ("wilcoxon", "sign"):
        np.testing.assert_array_equal(paired_pvalues(noisy, test), paired_pvalues(diffs, test))


# ---------------------------------------------------------------- edge cases


@pytest.mark.parametrize("test", TESTS)
def test_fewer_than_two_queries_give_nan(test: str) -> None:
    assert np.isnan(paired_pvalues([0.3], test)).all()
    assert np.isnan(paired_pvalues(np.empty((0, 2)), test)).all()
    assert np.isnan(paired_pvalues([[0.3, 0.0]], test)).all()


@pytest.mark.parametrize("test", TESTS)
def test_all_zero_differences_give_p_one(test: str) -> None:
    diffs = np.zeros((25, 3))
    diffs[:, 1] = _diffs(25, 1)[:, 0]
    p = paired_pvalues(diffs, test, resamples=500)
    assert p[0] == 1.0 and p[2] == 1.0
    assert p[1] < 1.0 or test in ("wilcoxon", "sign")


@pytest.mark.parametrize("test", TESTS)
def test_two_queries(test: str) -> None:
    p = paired_pvalues([[0.1, 0.0], [0.3, 0.0]], test, resamples=4000)
    assert p[1] == 1.0
    assert 0.0 <= p[0] <= 1.0
    if test == "randomization":  # sign patterns ++ and -- reach |0.4|: exactly half of them
        assert abs(p[0] - 0.5) < 0.03
    if test == "t":
        assert p[0] == pytest.approx(scipy.stats.ttest_1samp([0.1, 0.3], 0.0).pvalue)


def test_constant_differences() -> None:
    diffs = np.column_stack([np.full(10, 0.2), np.full(10, -0.1), np.zeros(10)])
    assert paired_pvalues(diffs, "t").tolist() == [0.0, 0.0, 1.0]
    # Only the all-plus and all-minus sign patterns reach |sum|: 2 / 2**10 of them.
    randomization = paired_pvalues(diffs, "randomization", resamples=100_000)
    np.testing.assert_allclose(randomization[:2], 2 / 1024, atol=0.0005)
    # Every bootstrap resample of constant differences has mean exactly the observed mean.
    bootstrap = paired_pvalues(diffs, "bootstrap", resamples=999)
    assert bootstrap.tolist() == [0.001, 0.001, 1.0]
    sign = paired_pvalues(diffs, "sign")
    np.testing.assert_allclose(sign, [2 / 1024, 2 / 1024, 1.0])
    assert effect_sizes(diffs).tolist() == [np.inf, -np.inf, 0.0]
    low, high = bootstrap_intervals(diffs)
    assert low.tolist() == high.tolist() == [0.2, -0.1, 0.0]


def test_edge_cases_of_effect_sizes_and_intervals() -> None:
    assert np.isnan(effect_sizes([0.4])).all()
    assert np.isnan(effect_sizes(np.empty((0, 1)))).all()
    low, high = bootstrap_intervals([[0.4, -0.2]])
    assert low.tolist() == high.tolist() == [0.4, -0.2]
    low, high = bootstrap_intervals(np.empty((0, 1)))
    assert np.isnan(low).all() and np.isnan(high).all()
    low, high = bootstrap_intervals([0.1, 0.3], method="percentile", resamples=5000)
    assert 0.1 <= low[0] < 0.2 < high[0] <= 0.3


def test_effect_size_is_mean_over_sample_sd() -> None:
    diffs = _diffs(50, 4, seed=3)
    expected = diffs.mean(axis=0) / diffs.std(axis=0, ddof=1)
    np.testing.assert_allclose(effect_sizes(diffs), expected, rtol=1e-12)
    assert effect_sizes([0.1, 0.3, 0.2, 0.0])[0] == pytest.approx(
        0.15 / np.std([0.1, 0.3, 0.2, 0.0], ddof=1)
    )


def test_win_tie_loss_counts() -> None:
    diffs = np.array([[0.2, 0.0], [0.0, 1e-13], [-0.1, -0.3], [0.3, 0.05], [1e-15, 0.0]])
    wins, ties, losses = win_tie_loss(diffs)
    assert (wins.tolist(), ties.tolist(), losses.tolist()) == ([2, 1], [2, 3], [1, 1])
    wins, ties, losses = win_tie_loss(diffs, tolerance=0.0)
    assert (wins.tolist(), ties.tolist(), losses.tolist()) == ([3, 2], [1, 2], [1, 1])
    wins, ties, losses = win_tie_loss(diffs, tolerance=0.1)
    assert (wins.tolist(), ties.tolist(), losses.tolist()) == ([2, 0], [3, 4], [0, 1])


# ---------------------------------------------------------------- determinism


@pytest.mark.parametrize("test", RANDOMISED)
def test_same_seed_same_pvalues_other_seed_other_pvalues(test: str) -> None:
    diffs = _diffs(200, 6, seed=4)
    first = paired_pvalues(diffs, test, resamples=3000, seed=11)
    np.testing.assert_array_equal(paired_pvalues(diffs, test, resamples=3000, seed=11), first)
    assert not np.array_equal(paired_pvalues(diffs, test, resamples=3000, seed=12), first)


@pytest.mark.parametrize("method", INTERVALS)
def test_same_seed_same_intervals_other_seed_other_intervals(method: str) -> None:
    diffs = _diffs(200, 6, seed=4)
    first = bootstrap_intervals(diffs, method=method, resamples=3000, seed=11)
    again = bootstrap_intervals(diffs, method=method, resamples=3000, seed=11)
    np.testing.assert_array_equal(again[0], first[0])
    np.testing.assert_array_equal(again[1], first[1])
    other = bootstrap_intervals(diffs, method=method, resamples=3000, seed=12)
    assert not np.array_equal(other[0], first[0])
    assert not np.array_equal(other[1], first[1])


# n = 3000 spans several chunks of resamples; 40 columns span three column blocks.
@pytest.mark.parametrize("n", [9, 150, 3000])
def test_a_column_does_not_depend_on_the_other_columns(n: int) -> None:
    diffs = _diffs(n, 40, seed=n)
    diffs[:, 5] = 0.0
    order = np.random.default_rng(1).permutation(40)
    resamples = 1500
    for test in RANDOMISED:
        together = paired_pvalues(diffs, test, resamples=resamples, seed=3)
        shuffled = paired_pvalues(diffs[:, order], test, resamples=resamples, seed=3)
        np.testing.assert_array_equal(shuffled, together[order])
        for j in (0, 5, 17, 39):
            alone = paired_pvalues(diffs[:, j], test, resamples=resamples, seed=3)
            assert alone[0] == together[j], (test, j)
    for method in INTERVALS:
        low, high = bootstrap_intervals(diffs, method=method, resamples=resamples, seed=3)
        low_s, high_s = bootstrap_intervals(
            diffs[:, order], method=method, resamples=resamples, seed=3
        )
        np.testing.assert_array_equal(low_s, low[order])
        np.testing.assert_array_equal(high_s, high[order])
        for j in (0, 5, 17, 39):
            alone_low, alone_high = bootstrap_intervals(
                diffs[:, j], method=method, resamples=resamples, seed=3
            )
            assert (alone_low[0], alone_high[0]) == (low[j], high[j]), (method, j)
    effects = effect_sizes(diffs)
    for j in (0, 17):
        assert effect_sizes(diffs[:, j])[0] == effects[j]


def test_intervals_move_with_the_data() -> None:
    """Adding a constant to every value moves both bounds by that constant (same resamples)."""
    rng = np.random.default_rng(8)
    scores = rng.random((60, 3))
    low, high = bootstrap_intervals(scores, resamples=2000, seed=5)
    shifted = bootstrap_intervals(scores + 1.0, resamples=2000, seed=5)
    np.testing.assert_allclose(shifted[0], low + 1.0, rtol=1e-12)
    np.testing.assert_allclose(shifted[1], high + 1.0, rtol=1e-12)
