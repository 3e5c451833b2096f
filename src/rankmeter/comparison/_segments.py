"""Segments of queries (``column=value``): each system against the baseline within each.

Segments of at least ``min_segment`` queries are tested and corrected together, as one family
across segments, systems and metrics; smaller ones are shown but never flagged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from rankmeter.comparison._records import SegmentMean, SegmentResult, Settings, better_of
from rankmeter.comparison._summaries import Scores, Summary, mean_pair, summarise
from rankmeter.data.arrays import FloatArray, IntArray
from rankmeter.data.ids import natural_order


def segment_groups(
    segments: Mapping[str, Mapping[str, str]], query_ids: tuple[str, ...]
) -> list[tuple[str, IntArray]]:
    """``(column=value, rows of the compared queries in it)`` for every tag value."""
    position = {q: i for i, q in enumerate(query_ids)}
    groups: list[tuple[str, IntArray]] = []
    for column, values in segments.items():
        labels = sorted(set(values.values()))
        for label in [labels[i] for i in natural_order(labels)]:
            rows = sorted(position[q] for q, v in values.items() if v == label and q in position)
            groups.append((f"{column}={label}", np.asarray(rows, dtype=np.int64)))
    return groups


def _subset(scores: Scores, rows: IntArray) -> dict[str, dict[str, FloatArray]]:
    return {m: {s: v[rows] for s, v in by_system.items()} for m, by_system in scores.items()}


def segment_results(
    groups: list[tuple[str, IntArray]],
    order: Sequence[str],
    metrics: Sequence[str],
    scores: Scores,
    settings: Settings,
    geometric: frozenset[str] = frozenset(),
) -> tuple[tuple[SegmentResult, ...], tuple[SegmentMean, ...]]:
    """Each segment's means, and each system against the baseline within each segment
    (``geometric``: the metrics whose per-query values are logs, see ``summarise``)."""
    from rankmeter import stats

    base = order[0]
    summaries: list[tuple[str, Scores, Summary]] = []
    means: list[SegmentMean] = []
    for name, rows in groups:
        if len(rows) == 0:
            continue
        subset = _subset(scores, rows)
        # A segment's intervals are each on its own (the legend of the segments says so).
        summary = summarise(
            order, metrics, subset, replace(settings, simultaneous=False), geometric
        )
        summaries.append((name, subset, summary))
        means += [
            SegmentMean(
                segment=name,
                system=system,
                metric=metric,
                mean=float(summary.mean_values[i]),
                low=float(summary.low[i]),
                high=float(summary.high[i]),
                n=summary.n,
            )
            for i, (metric, system) in enumerate(summary.means)
        ]
    # The family: every comparison in a segment of at least min_segment queries (NaN: not in
    # it, so it neither counts in the family nor gets a corrected p-value).
    in_family = [
        summary.tested.pvalue[i] if summary.n >= settings.min_segment else np.nan
        for _, _, summary in summaries
        for i in range(len(summary.differences))
    ]
    corrected = stats.correct(
        np.asarray(in_family, dtype=np.float64), settings.correction, alpha=settings.alpha
    )
    out = []
    position = 0
    for name, part, summary in summaries:
        small = summary.n < settings.min_segment
        tested = summary.tested
        for i, (metric, system) in enumerate(summary.differences):
            b, v = mean_pair(part[metric], base, system, metric in geometric)
            significant = bool(corrected.significant[position])
            better = better_of(metric)
            worse = v > b if better == "lower" else v < b
            out.append(
                SegmentResult(
                    segment=name,
                    system=system,
                    metric=metric,
                    n=summary.n,
                    baseline_mean=b,
                    system_mean=v,
                    difference=float(np.log(v) - np.log(b)) if metric in geometric else v - b,
                    low=float(tested.low[i]),
                    high=float(tested.high[i]),
                    p_value=float(tested.pvalue[i]),
                    p_corrected=float(corrected.adjusted[position]),
                    small=small,
                    flagged=bool(not small and worse and significant),
                    better=better,
                )
            )
            position += 1
    return tuple(out), tuple(means)
