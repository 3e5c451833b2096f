"""Paired bootstrap confidence intervals of column means (percentile and BCa)."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import ndtr, ndtri  # the normal cdf and its inverse (light to import)

from rankmeter import _validate
from rankmeter.stats import _checks
from rankmeter.stats._checks import FloatArray
from rankmeter.stats._names import INTERVALS
from rankmeter.stats._resampling import (
    RELATIVE_TOLERANCE,
    Columns,
    bootstrap_weights,
    column_sums,
    constant_columns,
)
from rankmeter.stats._results import ConfidenceInterval


def bootstrap_intervals(
    values: Any,
    *,
    level: float = 0.95,
    method: str = "bca",
    resamples: int = 10_000,
    seed: int = 0,
) -> ConfidenceInterval:
    r"""Bootstrap confidence interval of the mean of each column.

    The paired bootstrap resamples whole rows (queries) with replacement, the same resampled
    rows for every column, and takes the mean of each column in each of ``B`` resamples. Use it
    on per-query differences for the interval of a difference, or on per-query scores for the
    interval of a system's mean.

    Parameters
    ----------
    values : array_like, shape (n, m) or (n,)
        Per-query values; a 1-D input is one column. Must be finite.
    level : float, default 0.95
        Confidence level, strictly between 0 and 1.
    method : {"bca", "percentile"}, default "bca"
        - ``"percentile"``: the :math:`\alpha/2` and :math:`1 - \alpha/2` quantiles of the
          bootstrap means, :math:`\alpha = 1 - \text{level}`.
        - ``"bca"``: bias-corrected and accelerated (Efron 1987): the quantiles
          :math:`\Phi\big(z_0 + (z_0 + z_q) / (1 - a (z_0 + z_q))\big)` with
          :math:`z_q = \Phi^{-1}(q)`, the bias correction :math:`z_0 = \Phi^{-1}` (share of
          bootstrap means below the observed mean, ties counted half) and the acceleration
          :math:`a = \sum_i u_i^3 / (6 (\sum_i u_i^2)^{3/2})` from the jackknife, where the
          leave-one-out means give :math:`u_i \propto x_i - \bar x`. More accurate than the
          percentile interval for skewed data.
    resamples : int, default 10_000
        Number of bootstrap resamples ``B``.
    seed : int, default 0
        Seed of ``numpy.random.Generator(PCG64(seed))``.

    Returns
    -------
    ConfidenceInterval
        ``low`` and ``high``, numpy.ndarray of float64, shape (m,): the bounds per column, with
        the ``level``, ``method``, ``resamples`` and ``seed`` that made them; it unpacks as
        ``low, high``. Quantiles interpolate linearly between the sorted bootstrap means
        (numpy's default ``"linear"`` method).

    Notes
    -----
    - A column whose values are all equal (including a single query) has the interval
      (value, value); with no queries the bounds are NaN.
    - The share of bootstrap means below the mean is kept within [1/(2B), 1 - 1/(2B)] so that
      :math:`z_0` stays finite. Where the BCa formula leaves its range of validity
      (:math:`1 - a (z_0 + z_q) \le 0`, reached only by very skewed samples, such as one
      query far from all others), that bound falls back to the percentile bound.
    - Resamples come from ``(seed, n, resamples)`` only and are shared by all columns (common
      random numbers): the same seed gives the same intervals on every run for the same numpy
      version, and a column's interval does not depend on the other columns or their order.

    Examples
    --------
    >>> import numpy as np
    >>> diffs = np.array([0.10, 0.25, 0.05, 0.0, 0.30, -0.05, 0.15, 0.20])
    >>> low, high = bootstrap_intervals(diffs, resamples=20_000, seed=1)
    >>> round(float(low[0]), 3), round(float(high[0]), 3)
    (0.044, 0.206)
    >>> low, high = bootstrap_intervals(np.array([0.5, 0.5, 0.5]))
    >>> float(low[0]), float(high[0])
    (0.5, 0.5)
    """
    data = _checks.matrix("values", values)
    level = _validate.level(level)
    method = _validate.choice("method", method, INTERVALS)
    resamples = _validate.resamples(resamples, what="bootstrap resamples", p_values=False)
    seed = _validate.seed(seed)
    low, high = intervals_of(data, level, method, resamples, seed)
    return ConfidenceInterval(low, high, level=level, method=method, resamples=resamples, seed=seed)


def intervals_of(
    data: FloatArray, level: float, method: str, resamples: int, seed: int
) -> tuple[FloatArray, FloatArray]:
    """The bounds of :func:`bootstrap_intervals` for a checked (n, m) matrix."""
    n, m = data.shape
    low = np.full(m, np.nan)
    high = np.full(m, np.nan)
    if n == 0:
        return low, high
    data, scale = _checks.scaled(data)  # (power-of-two scaling: huge values do not overflow)
    low, high = _intervals(data, level, method, resamples, seed)
    return low * scale, high * scale


def _intervals(
    data: FloatArray, level: float, method: str, resamples: int, seed: int
) -> tuple[FloatArray, FloatArray]:
    n, m = data.shape
    low = np.full(m, np.nan)
    high = np.full(m, np.nan)
    constant = constant_columns(data)
    low[constant] = high[constant] = data[0, constant]
    varied = ~constant
    if not varied.any():
        return low, high

    x = data[:, varied]
    means = column_sums(x) / n
    columns = Columns(x)
    boot = np.empty((resamples, x.shape[1]), dtype=np.float64)
    row = 0
    for counts in bootstrap_weights(n, resamples, seed):
        boot[row : row + counts.shape[0]] = columns.weighted_sums(counts)
        row += counts.shape[0]
    boot /= n

    alpha = (1.0 - level) / 2.0
    tails = np.array([[alpha], [1.0 - alpha]])  # shape (2, 1): lower and upper
    if method == "bca":
        quantiles = _bca_quantiles(x, means, boot, tails)
    else:
        quantiles = np.broadcast_to(tails, (2, x.shape[1]))
    boot.sort(axis=0)
    bounds = _sorted_quantiles(boot, quantiles)
    low[varied] = bounds[0]
    high[varied] = bounds[1]
    return low, high


def _bca_quantiles(
    x: FloatArray, means: FloatArray, boot: FloatArray, tails: FloatArray
) -> FloatArray:
    """The BCa-adjusted quantile levels, shape (2, m), for the tails ``tails`` (2, 1)."""
    resamples = boot.shape[0]
    # Bootstrap means equal to the observed mean up to rounding count half below, half above.
    tolerance = RELATIVE_TOLERANCE * column_sums(np.abs(x)) / x.shape[0]
    below = (boot < means - tolerance).sum(axis=0)
    equal = (np.abs(boot - means) <= tolerance).sum(axis=0)
    share = np.clip((below + 0.5 * equal) / resamples, 0.5 / resamples, 1.0 - 0.5 / resamples)
    z0 = ndtri(share)
    # Jackknife: leave-one-out means are (sum - x_i) / (n - 1), so mean - loo_i ∝ x_i - mean.
    centred = np.ascontiguousarray(x.T) - means[:, None]
    acceleration = (centred**3).sum(axis=1) / (6.0 * (centred**2).sum(axis=1) ** 1.5)
    shifted = z0 + ndtri(tails)
    denominator = 1.0 - acceleration * shifted
    with np.errstate(divide="ignore", invalid="ignore"):
        adjusted = ndtr(z0 + shifted / denominator)
    # Past 1 - a (z0 + z) = 0 the BCa map stops being monotone: use the percentile level there.
    percentile = np.broadcast_to(tails, adjusted.shape)
    return np.asarray(np.where(denominator > 0, adjusted, percentile), dtype=np.float64)


def _sorted_quantiles(ordered: FloatArray, quantiles: FloatArray) -> FloatArray:
    """Linear-interpolation quantiles of each column of ``ordered`` (sorted along axis 0)."""
    last = ordered.shape[0] - 1
    position = np.clip(quantiles, 0.0, 1.0) * last
    below = np.floor(position).astype(np.intp)
    above = np.minimum(below + 1, last)
    fraction = position - below
    lower = np.take_along_axis(ordered, below, axis=0)
    upper = np.take_along_axis(ordered, above, axis=0)
    return np.asarray(lower + fraction * (upper - lower), dtype=np.float64)
