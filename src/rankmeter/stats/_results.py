"""What the statistics return: frozen result objects in the style of scipy.stats.

Every result is vectorised over columns (one comparison per column), so its fields are arrays
with one value per column, read-only; the settings that made it (test, level, resamples, seed)
travel with it. Results that used to be tuples still unpack as those tuples
(``low, high = bootstrap_intervals(...)``, ``wins, ties, losses = win_tie_loss(...)``), as
scipy's result objects unpack as ``statistic, pvalue``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields, replace
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from rankmeter.stats._checks import FloatArray, IntArray

BoolArray = npt.NDArray[np.bool_]
#: Which columns of a result to keep: a slice, or positions.
Columns = slice | list[int] | IntArray


def _frozen(result: Any, dtypes: dict[str, type]) -> None:
    """Store read-only copies of a result's arrays: never the caller's arrays, never writable."""
    for name, dtype in dtypes.items():
        array: npt.NDArray[Any] = np.array(getattr(result, name), dtype=dtype)
        array.flags.writeable = False
        object.__setattr__(result, name, array)


def _to_dict(result: Any) -> dict[str, Any]:
    """A result's fields as plain Python values (arrays as lists), for JSON."""
    out: dict[str, Any] = {}
    for f in fields(result):
        value = getattr(result, f.name)
        out[f.name] = value.tolist() if isinstance(value, np.ndarray) else value
    return out


class WinTieLoss(NamedTuple):
    """How many queries each column wins, ties and loses (``wins + ties + losses == n``)."""

    wins: IntArray
    ties: IntArray
    losses: IntArray


@dataclass(frozen=True, eq=False)
class ConfidenceInterval:
    """Bootstrap confidence intervals of column means: what :func:`bootstrap_intervals` returns.

    Attributes
    ----------
    low, high : float64 arrays, one bound per column (NaN where there was nothing to resample)
    level : the confidence level, e.g. 0.95
    method : ``"bca"`` or ``"percentile"``
    resamples, seed : the bootstrap resamples drawn and the seed they were drawn from

    Unpacks and indexes as the pair ``(low, high)``.
    """

    low: FloatArray
    high: FloatArray
    level: float
    method: str
    resamples: int
    seed: int

    def __post_init__(self) -> None:
        _frozen(self, {"low": np.float64, "high": np.float64})

    # The (low, high) pair bootstrap_intervals returned before it returned this object.
    def __iter__(self) -> Iterator[FloatArray]:
        return iter((self.low, self.high))

    def __len__(self) -> int:
        return 2

    def __getitem__(self, index: int) -> FloatArray:
        return (self.low, self.high)[index]

    def select(self, columns: Columns) -> ConfidenceInterval:
        """The intervals of some columns only (the bounds of a column never depend on the
        columns computed with it, see :func:`bootstrap_intervals`)."""
        return replace(self, low=self.low[columns], high=self.high[columns])

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


@dataclass(frozen=True, eq=False)
class PairedTest:
    """A paired comparison of each column of per-query differences (system minus baseline):
    what :func:`paired_test` returns.

    Attributes
    ----------
    mean_difference : the mean of each column (the statistic of the randomization and
        bootstrap tests; the t, Wilcoxon and sign tests' own statistics are not kept)
    pvalue : two-sided p-value of ``test`` that the mean difference is zero
    low, high : the bootstrap confidence interval of the mean difference
    effect_size : Cohen's :math:`d_z`, mean difference / standard deviation of the differences
    wins, ties, losses : queries with a difference above, within and below the tie tolerance
    n : queries (rows)
    test, interval, level, resamples, seed : how the numbers were made

    With fewer than two queries nothing can be tested: ``pvalue``, ``low``, ``high`` and
    ``effect_size`` are NaN, while the mean and the win/tie/loss counts are known.
    """

    mean_difference: FloatArray
    pvalue: FloatArray
    low: FloatArray
    high: FloatArray
    effect_size: FloatArray
    wins: IntArray
    ties: IntArray
    losses: IntArray
    n: int
    test: str
    interval: str
    level: float
    resamples: int
    seed: int

    def __post_init__(self) -> None:
        floats = ("mean_difference", "pvalue", "low", "high", "effect_size")
        _frozen(self, {name: np.float64 for name in floats})
        _frozen(self, {name: np.int64 for name in ("wins", "ties", "losses")})

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


@dataclass(frozen=True, eq=False)
class Correction:
    """P-values corrected for multiple comparisons: what :func:`correct` returns.

    Attributes
    ----------
    pvalue : the p-values as given (NaN: not tested)
    adjusted : the corrected p-values, in the same order (NaN stays NaN)
    significant : ``adjusted < alpha`` (False where NaN)
    method : ``"holm"``, ``"bonferroni"``, ``"bh"`` or ``"none"``
    alpha : the significance level
    family : how many p-values were corrected together (those that are not NaN)
    """

    pvalue: FloatArray
    adjusted: FloatArray
    significant: BoolArray
    method: str
    alpha: float
    family: int

    def __post_init__(self) -> None:
        _frozen(self, {"pvalue": np.float64, "adjusted": np.float64, "significant": np.bool_})

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)
