"""Multiple-comparison corrections: Holm, Bonferroni, Benjamini-Hochberg."""

from __future__ import annotations

from typing import Any

import numpy as np

from rankmeter.stats import _checks
from rankmeter.stats._checks import FloatArray
from rankmeter.stats._names import CORRECTIONS


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
    _checks.choice("method", method, CORRECTIONS)
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
