"""Argument checks shared by the statistics functions: clear PolicyErrors, never asserts.

Scalars go through rankmeter._validate (one wording for every parameter of the library); the
arrays (per-query differences, p-values) are checked here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter import _validate
from rankmeter.errors import PolicyError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: The most resamples a statistic draws (:data:`rankmeter._validate.MAX_RESAMPLES`, where the
#: count is checked with alpha, level and seed).
MAX_RESAMPLES = _validate.MAX_RESAMPLES


def tolerance(value: Any) -> float:
    """A finite, non-negative tolerance."""
    return _validate.real("tolerance", value, low=0)


def matrix(name: str, values: Any) -> FloatArray:
    """``values`` as a float64 (n, m) matrix: a 1-D input is one column; NaN and inf are refused.

    The result is a new array, so nothing the caller passed is ever written to.
    """
    try:
        array = np.array(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise PolicyError(
            f"{name} must be numbers, shape (n_queries,) or (n_queries, n_columns): {error}"
        ) from None
    if array.ndim == 1:
        array = array.reshape(-1, 1)
    if array.ndim != 2:
        raise PolicyError(
            f"{name} has shape {array.shape}; expected (n_queries,) or (n_queries, n_columns)"
        )
    if not np.isfinite(array).all():
        bad = np.argwhere(~np.isfinite(array))[0]
        raise PolicyError(
            f"{name} contains {float(array[tuple(bad)])!r} at row {bad[0]}, column {bad[1]}; "
            "every value must be a finite number (drop or fill the missing queries first)"
        )
    return array


def pvalue_vector(values: Any) -> FloatArray:
    """P-values as a 1-D float64 array: each in [0, 1] or NaN (NaN means 'not tested')."""
    try:
        array = np.array(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise PolicyError(f"pvalues must be numbers: {error}") from None
    if array.ndim != 1:
        raise PolicyError(f"pvalues has shape {array.shape}; expected a 1-D array of p-values")
    known = array[~np.isnan(array)]
    outside = known[(known < 0.0) | (known > 1.0)]
    if outside.size:
        raise PolicyError(
            f"pvalues contains {float(outside[0])!r}; every p-value must be in [0, 1] (or NaN)"
        )
    return array


#: Columns whose largest magnitude passes this are scaled down by a power of two for the
#: arithmetic of the statistics: sums of squares and cubes of values beyond about 1e100 (DCGs of
#: absurd grades) overflow float64. A power of two scales exactly, and columns below it are not
#: touched at all, so ordinary values give bit-for-bit the results they always gave.
_LARGEST_UNSCALED = 2.0**256


def scaled(values: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``(values / scale, scale)``: per column, ``scale`` is 1, or the power of two that brings
    the column's largest magnitude to at most 2^256. Means, intervals and differences are
    multiplied back by ``scale``; p-values and effect sizes do not change with it."""
    if values.shape[0] == 0:
        return values, np.ones(values.shape[1])
    peak = np.abs(values).max(axis=0)
    exponent = np.where(peak > _LARGEST_UNSCALED, np.frexp(peak)[1] - 256, 0)
    if not exponent.any():
        return values, np.ones(values.shape[1])
    return np.ldexp(values, -exponent), np.ldexp(1.0, exponent)


def means(values: Any) -> FloatArray:
    """The mean of each column of finite ``values`` (n, m), finite even where the column's sum
    is beyond float64; NaN for an empty column."""
    data = np.asarray(values, dtype=np.float64)
    if data.ndim == 1:
        data = data.reshape(-1, 1)
    if data.shape[0] == 0:
        return np.full(data.shape[1], np.nan)
    small, scale = scaled(data)
    # Column by column: a mean along axis 0 adds row by row and rounds differently from the
    # pairwise sum of one column, which every other mean in rankmeter is.
    column_means = [small[:, j].mean() for j in range(small.shape[1])]
    return np.asarray(column_means, dtype=np.float64) * scale
