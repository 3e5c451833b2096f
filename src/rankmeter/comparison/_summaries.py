"""Means, differences and their statistics: what rankmeter.stats computes, made into records."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from rankmeter.comparison._records import Difference
from rankmeter.data._columns import FloatArray


def _matrix(
    scores: Mapping[str, Mapping[str, FloatArray]], pairs: list[tuple[str, str]], base: str | None
) -> FloatArray:
    """Columns of per-query values (or differences from ``base``) for (metric, system) pairs."""
    columns = []
    for metric, system in pairs:
        column = scores[metric][system]
        columns.append(column if base is None else column - scores[metric][base])
    return np.column_stack(columns) if columns else np.zeros((0, 0))


class _Options:
    """The statistical settings every summary of a comparison is made with."""

    def __init__(
        self,
        stats: Any,
        test: str,
        correction: str,
        interval: str,
        level: float,
        resamples: int,
        seed: int,
    ) -> None:
        self.stats, self.test, self.correction = stats, test, correction
        self.interval, self.level, self.resamples, self.seed = interval, level, resamples, seed


Tested = tuple[float, float, float, float, float, int, int, int]


def _summaries(
    order: list[str],
    metrics: tuple[str, ...],
    scores: Mapping[str, Mapping[str, FloatArray]],
    options: _Options,
    correction: str,
) -> tuple[list[tuple[str, str, float, float, float, int]], list[tuple[str, str, Tested]]]:
    """Every system's mean with its interval, and every system against the baseline (p,
    corrected p, interval, effect size, win/tie/loss): one bootstrap pass serves both, the
    resamples being shared by all columns."""
    stats = options.stats
    base = order[0]
    mean_pairs = [(m, s) for m in metrics for s in order]
    diff_pairs = [(m, s) for m in metrics for s in order[1:]]
    values = _matrix(scores, mean_pairs, None)
    diffs = _matrix(scores, diff_pairs, base)
    n = len(values)
    # What happened on each query is known whatever n is: counted always.
    wins, ties, losses = stats.win_tie_loss(diffs)
    if n < 2:
        # No interval, test or effect size from fewer than two queries: NaN (shown as "–").
        nan = float("nan")
        means = [
            (s, m, float(values[:, i].mean()), nan, nan, n) for i, (m, s) in enumerate(mean_pairs)
        ]
        untested = [
            (m, s, (nan, nan, nan, nan, nan, int(wins[i]), int(ties[i]), int(losses[i])))
            for i, (m, s) in enumerate(diff_pairs)
        ]
        return means, untested
    low, high = stats.bootstrap_intervals(
        np.hstack([values, diffs]),
        level=options.level,
        method=options.interval,
        resamples=options.resamples,
        seed=options.seed,
    )
    k = values.shape[1]
    means = [
        (s, m, float(values[:, i].mean()), float(low[i]), float(high[i]), n)
        for i, (m, s) in enumerate(mean_pairs)
    ]
    p = stats.paired_pvalues(diffs, options.test, resamples=options.resamples, seed=options.seed)
    corrected = stats.adjust(p, correction)
    d_z = stats.effect_sizes(diffs)
    tested = [
        (
            m,
            s,
            (
                float(p[i]),
                float(corrected[i]),
                float(low[k + i]),
                float(high[k + i]),
                float(d_z[i]),
                int(wins[i]),
                int(ties[i]),
                int(losses[i]),
            ),
        )
        for i, (m, s) in enumerate(diff_pairs)
    ]
    return means, tested


def _differences(
    tested: list[tuple[str, str, Tested]],
    scores: Mapping[str, Mapping[str, FloatArray]],
    base: str,
    alpha: float,
) -> tuple[Difference, ...]:
    out = []
    for m, s, (p, pc, low, high, d_z, wins, ties, losses) in tested:
        b, v = float(scores[m][base].mean()), float(scores[m][s].mean())
        out.append(
            Difference(
                s,
                base,
                m,
                len(scores[m][base]),
                b,
                v,
                v - b,
                (v - b) / b if b else float("nan"),
                low,
                high,
                d_z,
                p,
                pc,
                bool(pc < alpha),
                wins,
                ties,
                losses,
            )
        )
    return tuple(out)
