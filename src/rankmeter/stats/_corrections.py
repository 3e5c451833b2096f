"""Multiple-comparison corrections: Holm, Bonferroni, Benjamini-Hochberg."""

from __future__ import annotations

from typing import Any

import numpy as np

from rankmeter import _validate
from rankmeter.stats import _checks
from rankmeter.stats._checks import FloatArray
from rankmeter.stats._names import CORRECTIONS
from rankmeter.stats._results import Correction


def adjust(pvalues: Any, method: str = "holm") -> FloatArray:
    r"""Adjust p-values for multiple comparisons.

    With :math:`k` p-values sorted ascending, :math:`p_{(1)} \le \dots \le p_{(k)}`:

    - ``"holm"`` (step-down, controls the family-wise error rate):
      :math:`\tilde p_{(i)} = \max_{j \le i} \min(1, (k - j + 1)\, p_{(j)})`.
    - ``"bonferroni"`` (family-wise error rate): :math:`\tilde p_i = \min(1, k\, p_i)`.
    - ``"bh"`` (Benjamini-Hochberg step-up, controls the false discovery rate):
      :math:`\tilde p_{(i)} = \min_{j \ge i} \min(1, k\, p_{(j)} / j)`.
    - ``"none"``: the p-values unchanged.

    These are the values of ``statsmodels.stats.multitest.multipletests`` with methods
    ``"holm"``, ``"bonferroni"`` and ``"fdr_bh"``.

    Parameters
    ----------
    pvalues : array_like, shape (k,)
        P-values in [0, 1]. NaN entries (comparisons not tested) stay NaN and are not counted
        in the family size :math:`k`.
    method : {"holm", "bonferroni", "bh", "none"}, default "holm"
        The correction.

    Returns
    -------
    numpy.ndarray of float64, shape (k,)
        Adjusted p-values in the order of the input, each at most 1.

    Examples
    --------
    >>> adjust([0.01, 0.04, 0.03, 0.005])
    array([0.03, 0.06, 0.06, 0.02])
    >>> adjust([0.01, 0.04, 0.03, 0.005], "bh")
    array([0.02, 0.04, 0.04, 0.02])
    >>> adjust([0.01, float("nan"), 0.04], "bonferroni")
    array([0.02,  nan, 0.08])
    """
    values = _checks.pvalue_vector(pvalues)
    method = _validate.choice("method", method, CORRECTIONS)
    return adjusted_of(values, method)


def correct(pvalues: Any, method: str = "holm", *, alpha: float = 0.05) -> Correction:
    """Correct p-values for multiple comparisons and say which are significant at ``alpha``.

    Parameters
    ----------
    pvalues : array_like, shape (k,)
        P-values in [0, 1]; NaN entries (not tested) stay NaN, are never significant and are
        not counted in the family.
    method : {"holm", "bonferroni", "bh", "none"}, default "holm"
        The correction, as in :func:`adjust`.
    alpha : float, default 0.05
        The significance level, strictly between 0 and 1.

    Returns
    -------
    Correction
        ``pvalue`` (as given), ``adjusted`` (as :func:`adjust` returns them), ``significant``
        (``adjusted < alpha``), ``method``, ``alpha`` and ``family`` (how many were corrected
        together).

    Examples
    --------
    >>> result = correct([0.01, 0.04, 0.03, float("nan")], "holm", alpha=0.05)
    >>> result.adjusted
    array([0.03, 0.06, 0.06,  nan])
    >>> result.significant, result.family
    (array([ True, False, False, False]), 3)
    """
    values = _checks.pvalue_vector(pvalues)
    method = _validate.choice("method", method, CORRECTIONS)
    alpha = _validate.alpha(alpha)
    adjusted = adjusted_of(values, method)
    with np.errstate(invalid="ignore"):
        significant = adjusted < alpha
    return Correction(
        pvalue=values,
        adjusted=adjusted,
        significant=significant,
        method=method,
        alpha=alpha,
        family=int(np.count_nonzero(~np.isnan(values))),
    )


def adjusted_of(values: FloatArray, method: str) -> FloatArray:
    """The p-values of :func:`adjust` for a checked vector and method."""
    adjusted = values.copy()
    known = np.flatnonzero(~np.isnan(values))
    k = known.size
    if k == 0 or method == "none":
        return adjusted
    if method == "bonferroni":
        adjusted[known] = np.minimum(1.0, k * values[known])
        return adjusted
    order = known[np.argsort(values[known], kind="stable")]
    ordered = values[order]
    rank = np.arange(1, k + 1)
    if method == "holm":
        stepped = np.maximum.accumulate(np.minimum(1.0, (k - rank + 1) * ordered))
    else:  # "bh"
        stepped = np.minimum.accumulate(np.minimum(1.0, k * ordered / rank)[::-1])[::-1]
    adjusted[order] = stepped
    return adjusted
