"""Means, differences and their statistics: rankmeter.stats results, made into records.

One bootstrap pass serves every mean and every difference of a set of queries: the resamples
are shared by all columns (common random numbers), and a column's interval does not depend on
the columns that come with it, so the intervals of the differences are handed on to
:func:`rankmeter.stats.paired_test` instead of being resampled again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rankmeter.comparison._records import Difference, Settings, SystemMean, better_of
from rankmeter.data.arrays import FloatArray

if TYPE_CHECKING:
    # rankmeter.stats imports scipy: imported where a comparison is made, not with the records.
    from rankmeter.stats import Correction, PairedTest

#: ``{metric: {system: per-query values}}``, all aligned with the same queries.
Scores = Mapping[str, Mapping[str, FloatArray]]


@dataclass(frozen=True)
class Summary:
    """Every system's mean with its interval, and every other system tested against the
    baseline, on one set of queries.

    Attributes
    ----------
    means : ``(metric, system)`` of each mean, baseline first, per metric
    mean_values, low, high : each mean and its bootstrap interval (NaN below two queries)
    differences : ``(metric, system)`` of each comparison with the baseline
    tested : the paired test of each comparison, in the order of ``differences``
    n : the number of queries
    """

    means: tuple[tuple[str, str], ...]
    mean_values: FloatArray
    low: FloatArray
    high: FloatArray
    differences: tuple[tuple[str, str], ...]
    tested: PairedTest
    n: int


def summarise(
    order: Sequence[str],
    metrics: Sequence[str],
    scores: Scores,
    settings: Settings,
    geometric: frozenset[str] = frozenset(),
) -> Summary:
    """The means and the paired tests of ``scores``; ``order[0]`` is the baseline.

    The metrics named in ``geometric`` have logs as per-query values (GMAP: log AP): their
    means and intervals are exp of the mean of the logs and of its interval's ends (the
    geometric mean, trec_eval's gm_map), while their differences and tests stay on the logs.
    """
    from rankmeter import stats

    base = order[0]
    means = tuple((m, s) for m in metrics for s in order)
    differences = tuple((m, s) for m in metrics for s in order[1:])
    values = score_matrix(scores, means)
    diffs = score_matrix(scores, differences, base)
    n, k = values.shape
    if n < 2:
        # No interval, test or effect size from fewer than two queries: NaN (shown as "–");
        # what happened on each query is known whatever n is, and counted.
        low = high = np.full(k, np.nan)
        bounds = None
    else:
        both = stats.bootstrap_intervals(
            np.hstack([values, diffs]),
            level=settings.level,
            method=settings.interval,
            resamples=settings.resamples,
            seed=settings.seed,
        )
        low, high = both.low[:k], both.high[:k]
        bounds = both.select(slice(k, None))
    level = settings.difference_level(len(differences))
    if bounds is not None and level != settings.level:
        # Simultaneous intervals: the same resamples (same seed), wider quantiles.
        bounds = stats.bootstrap_intervals(
            diffs,
            level=level,
            method=settings.interval,
            resamples=settings.resamples,
            seed=settings.seed,
        )
    tested = stats.paired_test(
        diffs,
        settings.test,
        interval=settings.interval,
        level=level,
        resamples=settings.resamples,
        seed=settings.seed,
        bounds=bounds,
    )
    mean_values = stats.means(values)  # finite where the values are, whatever their sum
    logs = [i for i, (metric, _) in enumerate(means) if metric in geometric]
    if logs:
        mean_values, low, high = (np.array(a, dtype=np.float64) for a in (mean_values, low, high))
        for column in (mean_values, low, high):
            column[logs] = np.exp(column[logs])
    return Summary(
        means=means,
        mean_values=mean_values,
        low=low,
        high=high,
        differences=differences,
        tested=tested,
        n=n,
    )


def mean_pair(
    by_system: Mapping[str, FloatArray], base: str, system: str, geometric: bool
) -> tuple[float, float]:
    """The baseline's and the system's means (geometric means of per-query logs where asked)."""
    from rankmeter import stats

    pair = [float(stats.means(by_system[name])[0]) for name in (base, system)]
    b, v = (float(np.exp(x)) for x in pair) if geometric else pair
    return b, v


def _difference(b: float, v: float, geometric: bool) -> float:
    """The system's mean minus the baseline's; for geometric means, of their logs."""
    return float(np.log(v) - np.log(b)) if geometric else v - b


def score_matrix(
    scores: Scores, pairs: Sequence[tuple[str, str]], base: str | None = None
) -> FloatArray:
    """Columns of per-query values (or differences from ``base``) for (metric, system) pairs."""
    columns = []
    for metric, system in pairs:
        column = scores[metric][system]
        columns.append(column if base is None else column - scores[metric][base])
    return np.column_stack(columns) if columns else np.zeros((0, 0))


def system_means(summary: Summary) -> tuple[SystemMean, ...]:
    return tuple(
        SystemMean(
            system=system,
            metric=metric,
            mean=float(summary.mean_values[i]),
            low=float(summary.low[i]),
            high=float(summary.high[i]),
            n=summary.n,
        )
        for i, (metric, system) in enumerate(summary.means)
    )


def differences(
    summary: Summary,
    scores: Scores,
    base: str,
    corrected: Correction,
    geometric: frozenset[str] = frozenset(),
) -> tuple[Difference, ...]:
    """Each system against the baseline, with the p-values ``corrected`` for the family.

    For a metric in ``geometric`` (per-query logs: GMAP) the two means are geometric means and
    the difference is that of the mean logs, log(system / baseline), the scale of its interval
    and test; ``relative`` is system / baseline - 1 either way."""

    tested = summary.tested
    out = []
    for i, (metric, system) in enumerate(summary.differences):
        b, v = mean_pair(scores[metric], base, system, metric in geometric)
        better = better_of(metric)
        wins, losses = int(tested.wins[i]), int(tested.losses[i])
        if better == "lower":  # a query the system is lower on is one it wins
            wins, losses = losses, wins
        out.append(
            Difference(
                system=system,
                baseline=base,
                metric=metric,
                n=len(scores[metric][base]),
                baseline_mean=b,
                system_mean=v,
                difference=_difference(b, v, metric in geometric),
                relative=(v - b) / b if b else float("nan"),
                low=float(tested.low[i]),
                high=float(tested.high[i]),
                effect_size=float(tested.effect_size[i]),
                p_value=float(tested.pvalue[i]),
                p_corrected=float(corrected.adjusted[i]),
                significant=bool(corrected.significant[i]),
                wins=wins,
                ties=int(tested.ties[i]),
                losses=losses,
                better=better,
            )
        )
    return tuple(out)
