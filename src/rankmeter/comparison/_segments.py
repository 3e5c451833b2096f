"""Segments of queries (``column=value``), each system against the baseline within each."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from rankmeter.comparison._records import SegmentMean, SegmentResult
from rankmeter.comparison._summaries import _Options, _summaries
from rankmeter.data._columns import FloatArray, IntArray, natural_order


def _segment_groups(
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


def _subset(
    scores: Mapping[str, Mapping[str, FloatArray]], rows: IntArray
) -> dict[str, dict[str, FloatArray]]:
    return {m: {s: v[rows] for s, v in by_system.items()} for m, by_system in scores.items()}


def _segments(
    groups: list[tuple[str, IntArray]],
    order: list[str],
    metrics: tuple[str, ...],
    scores: Mapping[str, Mapping[str, FloatArray]],
    options: _Options,
    alpha: float,
    min_segment: int,
) -> tuple[tuple[SegmentResult, ...], tuple[SegmentMean, ...]]:
    """Each segment's means and differences. Segments of at least ``min_segment`` queries are
    tested and corrected together (one family across segments, systems and metrics); smaller
    ones are shown but never flagged."""
    base = order[0]
    found = []
    means = []
    for name, rows in groups:
        if len(rows) == 0:
            continue
        subset = _subset(scores, rows)
        mean_rows, tested = _summaries(order, metrics, subset, options, "none")
        means += [SegmentMean(name, *row) for row in mean_rows]
        found += [(name, subset, m, s, len(rows), row) for m, s, row in tested]
    family = [i for i, f in enumerate(found) if f[4] >= min_segment]
    corrected = np.full(len(found), np.nan)
    if family:
        tested_p = np.asarray([found[i][5][0] for i in family], dtype=np.float64)
        corrected[family] = options.stats.adjust(tested_p, options.correction)
    out = []
    for i, (name, subset, m, s, n, row) in enumerate(found):
        p, low, high = row[0], row[2], row[3]
        small = n < min_segment
        b = float(subset[m][base].mean())
        v = float(subset[m][s].mean())
        pc = float(corrected[i])
        flagged = bool(not small and v < b and pc < alpha)
        out.append(SegmentResult(name, s, m, n, b, v, v - b, low, high, p, pc, small, flagged))
    return tuple(out), tuple(means)
