"""Paired significance tests, effect sizes and win/tie/loss counts over columns of differences;
:func:`paired_test` gives them all at once, with the interval of each mean difference."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from rankmeter import _validate
from rankmeter.errors import PolicyError
from rankmeter.stats import _checks
from rankmeter.stats._checks import FloatArray
from rankmeter.stats._intervals import intervals_of
from rankmeter.stats._names import INTERVALS, TESTS
from rankmeter.stats._resampling import (
    RELATIVE_TOLERANCE,
    Columns,
    bootstrap_weights,
    column_sums,
    constant_columns,
    every_flip,
    exact_randomization,
    flip_weights,
)
from rankmeter.stats._results import ConfidenceInterval, PairedTest, WinTieLoss

#: Differences within this distance of zero are ties (the default of win_tie_loss).
TIE_TOLERANCE = 1e-12


def paired_pvalues(
    diffs: Any,
    test: str = "randomization",
    *,
    resamples: int = 10_000,
    seed: int = 0,
) -> FloatArray:
    r"""Two-sided p-values of paired tests that the mean difference of each column is zero.

    Each column of ``diffs`` holds the per-query differences between two systems (system minus
    baseline) for one comparison; rows are queries, paired across columns.

    Parameters
    ----------
    diffs : array_like, shape (n, m) or (n,)
        Per-query differences; a 1-D input is one comparison. Must be finite.
    test : {"randomization", "t", "bootstrap", "wilcoxon", "sign"}, default "randomization"
        - ``"randomization"``: paired randomization (sign-flip) test of the mean difference.
          Under the null hypothesis each difference is as likely to have either sign; ``B``
          random sign patterns give the statistics :math:`T^*_b = \sum_i s_{bi} d_i` and
          :math:`p = (\#\{b : |T^*_b| \ge |T|\} + 1) / (B + 1)`. Agrees, up to Monte Carlo
          error, with ``scipy.stats.permutation_test(..., permutation_type="samples")`` on the
          mean difference, and tends to the exact test over all :math:`2^n` sign patterns.
          Where :math:`2^n \le B` (up to 13 queries at the default 10,000) every sign pattern
          is counted instead: the exact :math:`p = \#\{s : |T^*_s| \ge |T|\} / 2^n`, the same
          for every seed (the smallest is :math:`2 / 2^n`: 0.25 with 3 queries).
        - ``"t"``: paired t-test, the same as ``scipy.stats.ttest_rel(a, b)`` (equivalently
          ``ttest_1samp(diffs, 0)``).
        - ``"bootstrap"``: paired bootstrap test of the mean difference: the centred
          differences :math:`d_i - \bar d` are resampled with replacement ``B`` times and
          :math:`p = (\#\{b : |\bar d^*_b - \bar d| \ge |\bar d|\} + 1) / (B + 1)`.
        - ``"wilcoxon"``: ``scipy.stats.wilcoxon`` signed-rank test with
          ``zero_method="wilcox"`` (zero differences are dropped) and ``method="auto"``.
        - ``"sign"``: ``scipy.stats.binomtest`` of wins against losses with p = 1/2 (ties
          dropped).

        Wilcoxon and sign tests are not recommended (see ``NOT_RECOMMENDED``): they test
        medians or signs, not the difference of means that an IR metric reports.
    resamples : int, default 10_000
        Number of random sign patterns or bootstrap resamples ``B`` (randomised tests only).
    seed : int, default 0
        Seed of ``numpy.random.Generator(PCG64(seed))`` (randomised tests only).

    Returns
    -------
    numpy.ndarray of float64, shape (m,)
        One p-value per column, in [0, 1].

    Notes
    -----
    - A column whose differences are all zero has p = 1.0; with fewer than 2 queries every
      p-value is NaN (there is nothing to test). For the t-test, a column of one constant,
      non-zero difference has p = 0.0 (infinite t, as scipy returns for zero variance).
    - Randomised tests draw the sign patterns or resamples from ``(seed, n, resamples)`` only
      and use the same ones for every column (common random numbers): the same seed gives the
      same p-values on every run and machine for the same numpy version, and a column's
      p-value does not depend on which other columns are passed with it, or in which order.
    - Statistics equal up to floating-point rounding count as equal ("at least as extreme"):
      they are compared with a tolerance of 1e-9 times the sum of the column's absolute
      differences, so that exactly tied sign patterns count however the sums were rounded.
    - For the Wilcoxon and sign tests, differences within 1e-12 of zero are treated as ties
      (zero), as in :func:`win_tie_loss`.

    Examples
    --------
    A new ranker against a baseline on eight queries (nDCG differences):

    >>> import numpy as np
    >>> diffs = np.array([0.10, 0.25, 0.05, 0.0, 0.30, -0.05, 0.15, 0.20])
    >>> paired_pvalues(diffs, "t").round(4)
    array([0.0234])
    >>> paired_pvalues(diffs, "randomization", resamples=200, seed=1).round(3)
    array([0.045])
    >>> paired_pvalues(diffs, "randomization", resamples=20_000, seed=1)  # 2**8 <= 20,000
    array([0.046875])

    (With 20,000 resamples all 2**8 sign patterns are counted: exactly 12/256.)

    Several comparisons at once, one per column; a column of zeros has p = 1:

    >>> two = np.column_stack([diffs, np.zeros(8)])
    >>> paired_pvalues(two, "sign").round(4)
    array([0.125, 1.   ])
    """
    values = _checks.matrix("diffs", diffs)
    test = _validate.choice("test", test, TESTS)
    resamples = _validate.resamples(resamples, what="random sign patterns or bootstrap resamples")
    seed = _validate.seed(seed)
    return pvalues_of(values, test, resamples, seed)


def pvalues_of(values: FloatArray, test: str, resamples: int, seed: int) -> FloatArray:
    """The p-values of :func:`paired_pvalues` for a checked (n, m) matrix and settings."""
    n, m = values.shape
    pvalues = np.full(m, np.nan)
    if n < 2:
        return pvalues
    all_zero = ~values.any(axis=0)
    pvalues[all_zero] = 1.0
    tested = ~all_zero
    if tested.any():
        # The tests that add values up see them scaled (exactly, by a power of two) where they
        # are huge: their p-values do not change with the scale, their sums would overflow.
        given = _checks.scaled(values)[0] if test in _ARITHMETIC else values
        pvalues[tested] = _TESTS[test](given[:, tested], resamples, seed)
    return pvalues


def _randomization(values: FloatArray, resamples: int, seed: int) -> FloatArray:
    # Flipping the signs of the queries in F turns the sum S into S - 2 * sum_{i in F} d_i.
    n = values.shape[0]
    observed = column_sums(values)
    threshold = np.abs(observed) - RELATIVE_TOLERANCE * column_sums(np.abs(values))
    columns = Columns(values)
    extreme = np.zeros(values.shape[1], dtype=np.int64)
    if exact_randomization(n, resamples):
        # Every sign pattern fits in the resamples: count them all (the identity included),
        # an exact p-value that no seed changes, instead of a sample of them.
        for flips in every_flip(n):
            flipped = observed - 2.0 * columns.weighted_sums(flips)
            extreme += (np.abs(flipped) >= threshold).sum(axis=0)
        return np.asarray(extreme / float(2**n), dtype=np.float64)
    for flips in flip_weights(n, resamples, seed):
        flipped = observed - 2.0 * columns.weighted_sums(flips)
        extreme += (np.abs(flipped) >= threshold).sum(axis=0)
    return np.asarray((extreme + 1.0) / (resamples + 1.0), dtype=np.float64)


def _bootstrap(values: FloatArray, resamples: int, seed: int) -> FloatArray:
    # Resampling the centred differences d - mean gives sums S* - S, where S* resamples d.
    n = values.shape[0]
    observed = column_sums(values)
    threshold = np.abs(observed) - RELATIVE_TOLERANCE * column_sums(np.abs(values))
    columns = Columns(values)
    extreme = np.zeros(values.shape[1], dtype=np.int64)
    for counts in bootstrap_weights(n, resamples, seed):
        centred = columns.weighted_sums(counts) - observed
        extreme += (np.abs(centred) >= threshold).sum(axis=0)
    return np.asarray((extreme + 1.0) / (resamples + 1.0), dtype=np.float64)


def _t(values: FloatArray, resamples: int, seed: int) -> FloatArray:
    import scipy.stats  # imported when used: it is heavy

    constant = constant_columns(values)
    pvalues = np.zeros(values.shape[1])  # constant non-zero differences: t is infinite
    if (~constant).any():
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            result = scipy.stats.ttest_1samp(values[:, ~constant], 0.0, axis=0)
        pvalues[~constant] = np.asarray(result.pvalue, dtype=np.float64)
    return pvalues


def _wilcoxon(values: FloatArray, resamples: int, seed: int) -> FloatArray:
    import scipy.stats  # imported when used: it is heavy

    snapped = np.where(np.abs(values) <= TIE_TOLERANCE, 0.0, values)
    pvalues = np.ones(values.shape[1])
    # One scipy call per column: its vectorised form handles zeros differently per column.
    for j in range(values.shape[1]):
        if snapped[:, j].any():
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore", UserWarning)
                warnings.simplefilter("ignore", RuntimeWarning)
                result = scipy.stats.wilcoxon(snapped[:, j], zero_method="wilcox", method="auto")
            pvalues[j] = float(result.pvalue)
    return pvalues


def _sign(values: FloatArray, resamples: int, seed: int) -> FloatArray:
    import scipy.stats  # imported when used: it is heavy

    wins, _, losses = counts_of(values)
    pvalues = np.ones(values.shape[1])
    for j in range(values.shape[1]):
        if wins[j] + losses[j]:
            result = scipy.stats.binomtest(int(wins[j]), int(wins[j] + losses[j]), 0.5)
            pvalues[j] = float(result.pvalue)
    return pvalues


_ARITHMETIC = ("randomization", "bootstrap", "t")
_TESTS: dict[str, Callable[[FloatArray, int, int], FloatArray]] = {
    "randomization": _randomization,
    "t": _t,
    "bootstrap": _bootstrap,
    "wilcoxon": _wilcoxon,
    "sign": _sign,
}


def paired_test(
    diffs: Any,
    test: str = "randomization",
    *,
    interval: str = "bca",
    level: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    bounds: ConfidenceInterval | None = None,
) -> PairedTest:
    r"""Everything a paired comparison reports, for each column of per-query differences.

    The p-value of :func:`paired_pvalues`, the bootstrap interval of the mean difference of
    :func:`bootstrap_intervals`, the effect size of :func:`effect_sizes` and the counts of
    :func:`win_tie_loss`, each the same numbers those functions give.

    Parameters
    ----------
    diffs : array_like, shape (n, m) or (n,)
        Per-query differences (system minus baseline), one comparison per column. Finite.
    test : {"randomization", "t", "bootstrap", "wilcoxon", "sign"}, default "randomization"
        The paired test (see :func:`paired_pvalues`).
    interval : {"bca", "percentile"}, default "bca"
        The bootstrap interval method (see :func:`bootstrap_intervals`).
    level : float, default 0.95
        Confidence level of the intervals.
    resamples, seed : int, default 10_000 and 0
        Random sign patterns or resamples of the test, and resamples of the intervals, all from
        ``numpy.random.Generator(PCG64(seed))``.
    bounds : ConfidenceInterval, optional
        The intervals of these columns, when they were already computed (for instance in one
        bootstrap pass with other columns: a column's interval does not depend on the columns
        that come with it). Must hold one interval per column, made with the same
        ``interval``, ``level``, ``resamples`` and ``seed``.

    Returns
    -------
    PairedTest
        Arrays of shape (m,): ``mean_difference``, ``pvalue``, ``low``, ``high``,
        ``effect_size``, ``wins``, ``ties``, ``losses``; and ``n``, ``test``, ``interval``,
        ``level``, ``resamples``, ``seed``. With fewer than two queries nothing is tested:
        the p-value, the interval and the effect size are NaN.

    Examples
    --------
    >>> import numpy as np
    >>> diffs = np.array([0.10, 0.25, 0.05, 0.0, 0.30, -0.05, 0.15, 0.20])
    >>> result = paired_test(diffs, "t", resamples=20_000, seed=1)
    >>> result.pvalue.round(4), result.effect_size.round(3)
    (array([0.0234]), array([1.021]))
    >>> round(float(result.low[0]), 3), round(float(result.high[0]), 3)
    (0.044, 0.206)
    >>> int(result.wins[0]), int(result.ties[0]), int(result.losses[0])
    (6, 1, 1)
    """
    values = _checks.matrix("diffs", diffs)
    test = _validate.choice("test", test, TESTS)
    interval = _validate.choice("interval", interval, INTERVALS)
    level = _validate.level(level)
    resamples = _validate.resamples(resamples, what="random sign patterns or bootstrap resamples")
    seed = _validate.seed(seed)
    n, m = values.shape
    counts = counts_of(values)
    mean = np.full(m, np.nan) if n == 0 else column_sums(values) / n
    nan = np.full(m, np.nan)
    if n < 2:
        pvalue, low, high, effect = nan, nan, nan, nan
    else:
        pvalue = pvalues_of(values, test, resamples, seed)
        effect = effect_sizes_of(values)
        if bounds is None:
            low, high = intervals_of(values, level, interval, resamples, seed)
        else:
            low, high = _given_bounds(bounds, m, interval, level, resamples, seed)
    return PairedTest(
        mean_difference=mean,
        pvalue=pvalue,
        low=low,
        high=high,
        effect_size=effect,
        wins=counts.wins,
        ties=counts.ties,
        losses=counts.losses,
        n=n,
        test=test,
        interval=interval,
        level=level,
        resamples=resamples,
        seed=seed,
    )


def _given_bounds(
    bounds: ConfidenceInterval, m: int, interval: str, level: float, resamples: int, seed: int
) -> tuple[FloatArray, FloatArray]:
    """The bounds passed to :func:`paired_test`, if they belong to its columns and settings."""
    if not isinstance(bounds, ConfidenceInterval):
        raise PolicyError(
            f"bounds must be a ConfidenceInterval (from bootstrap_intervals), not "
            f"{type(bounds).__name__}"
        )
    if len(bounds.low) != m:
        raise PolicyError(f"bounds holds {len(bounds.low)} intervals for {m} columns")
    made = (bounds.method, bounds.level, bounds.resamples, bounds.seed)
    if made != (interval, level, resamples, seed):
        raise PolicyError(
            f"bounds were made with interval={bounds.method!r}, level={bounds.level!r}, "
            f"resamples={bounds.resamples!r}, seed={bounds.seed!r}; this test uses "
            f"interval={interval!r}, level={level!r}, resamples={resamples!r}, seed={seed!r}"
        )
    return bounds.low, bounds.high


def effect_sizes(diffs: Any) -> FloatArray:
    r"""Paired standardised effect size (Cohen's :math:`d_z`) of each column of differences.

    .. math:: d_z = \bar d / s_d, \qquad s_d = \sqrt{\textstyle\sum_i (d_i - \bar d)^2 / (n - 1)}

    Parameters
    ----------
    diffs : array_like, shape (n, m) or (n,)
        Per-query differences (system minus baseline). Must be finite.

    Returns
    -------
    numpy.ndarray of float64, shape (m,)
        :math:`d_z` per column: 0.0 where every difference is 0; +inf or -inf where the
        differences are one constant non-zero value (no spread); NaN with fewer than 2 queries.

    Examples
    --------
    >>> import numpy as np
    >>> effect_sizes(np.array([0.1, 0.3, 0.2, 0.0])).round(3)
    array([1.162])
    >>> effect_sizes(np.array([[0.0, 0.2], [0.0, 0.2], [0.0, 0.2]]))
    array([ 0., inf])
    """
    return effect_sizes_of(_checks.matrix("diffs", diffs))


def effect_sizes_of(values: FloatArray) -> FloatArray:
    """The effect sizes of :func:`effect_sizes` for a checked (n, m) matrix."""
    values = _checks.scaled(values)[0]  # d_z has no scale: huge columns are scaled first
    n, m = values.shape
    sizes = np.full(m, np.nan)
    if n < 2:
        return sizes
    rows = np.ascontiguousarray(values.T)  # reduce along rows: each column on its own
    constant = constant_columns(values)
    first = values[0, constant]
    sizes[constant] = np.where(first > 0, np.inf, np.where(first < 0, -np.inf, 0.0))
    varied = ~constant
    if varied.any():
        sizes[varied] = rows[varied].mean(axis=1) / rows[varied].std(axis=1, ddof=1)
    return sizes


def win_tie_loss(diffs: Any, *, tolerance: float = TIE_TOLERANCE) -> WinTieLoss:
    """Count the queries each column wins, ties and loses.

    A query is a win where its difference is above ``tolerance``, a loss where it is below
    ``-tolerance``, a tie otherwise (so that rounding noise in equal scores is a tie).

    Parameters
    ----------
    diffs : array_like, shape (n, m) or (n,)
        Per-query differences (system minus baseline). Must be finite.
    tolerance : float, default 1e-12
        Differences with absolute value at most this are ties.

    Returns
    -------
    WinTieLoss
        ``wins``, ``ties``, ``losses``: numpy.ndarray of int64, shape (m,), counts per column;
        ``wins + ties + losses == n``. It unpacks as ``wins, ties, losses``.

    Examples
    --------
    >>> import numpy as np
    >>> wins, ties, losses = win_tie_loss(np.array([0.2, 0.0, -0.1, 0.3, 1e-15]))
    >>> int(wins[0]), int(ties[0]), int(losses[0])
    (2, 2, 1)
    """
    values = _checks.matrix("diffs", diffs)
    return counts_of(values, _checks.tolerance(tolerance))


def counts_of(values: FloatArray, tolerance: float = TIE_TOLERANCE) -> WinTieLoss:
    """The counts of :func:`win_tie_loss` for a checked (n, m) matrix."""
    wins = (values > tolerance).sum(axis=0, dtype=np.int64)
    losses = (values < -tolerance).sum(axis=0, dtype=np.int64)
    ties = values.shape[0] - wins - losses
    return WinTieLoss(wins, ties.astype(np.int64), losses)
