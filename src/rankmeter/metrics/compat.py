"""Compatibility (Clarke, Vtyurina & Smucker 2021): the ranking against an ideal ranking.

The ideal ranking is the query's relevant judgments (grade > 0), grades descending; among equal
grades the retrieved documents come first, in the run's order (the ideal most compatible with
the run), then the others. Compat is the rank-biased overlap (RBO, persistence p) of the run
with that ideal, over the depth D = max(results, ideal), divided by the RBO of the ideal with
itself over the same depth, as ir_measures' compat provider computes it.

A relevant retrieved document at 0-based run position r and ideal position s is in the overlap
of both prefixes from depth max(r, s) + 1 on, so with H(d) = sum_{j<=d} p^(j-1) / j the RBO sum
is sum over such documents of H(D) - H(max(r, s)): no loop over depths, queries or documents.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rankmeter.metrics._spec import (
    Breakdown,
    Metric,
    MetricSpec,
    Param,
    WorkedExample,
    approx,
    num,
    ratio,
)

if TYPE_CHECKING:
    from rankmeter.data.arrays import FloatArray, IntArray
    from rankmeter.metrics._ranked import Ranked

PERSISTENCE = Param(
    "p",
    "number",
    0.95,
    "RBO's persistence: depth d weighs p^(d-1) (default 0.95, as ir_measures)",
    low=0,
    high=1,
    open_low=True,
    open_high=True,
)


def ideal_positions(ranked: Ranked, entries: IntArray) -> IntArray:
    """The 0-based place in the ideal ranking of each of ``entries`` (judged, grade > 0):
    the query's judgments of a higher grade, then the retrieved ones of the same grade above it.
    """
    grades = ranked.grades[entries]
    groups = ranked.groups[entries]
    j_grades = ranked.judgment_grades
    # Grades as integer codes, so that (query, grade descending) is one sortable integer key:
    # the judgments are sorted by it already. (Every entry's grade is one of its query's
    # judgments'; a sort and a search, as np.unique's inverse is many times slower.)
    values = np.sort(j_grades)
    distinct = values[np.flatnonzero(np.diff(values, prepend=-np.inf))]
    top = max(len(distinct), 1)
    j_key = ranked.judgment_groups * top + (top - 1 - np.searchsorted(distinct, j_grades))
    e_key = groups * top + (top - 1 - np.searchsorted(distinct, grades))
    above = np.searchsorted(j_key, e_key, side="left") - ranked.judgment_offsets[groups]
    # Among the retrieved documents of one grade, the ones ranked higher come first.
    # (entries are in query and rank order: a stable sort by the key keeps the ranks' order)
    order = np.argsort(e_key, kind="stable")
    key_sorted = e_key[order]
    starts = np.ones(len(order), dtype=bool)
    starts[1:] = key_sorted[1:] != key_sorted[:-1]
    first = np.maximum.accumulate(np.where(starts, np.arange(len(order)), 0))
    same_above = np.empty(len(order), dtype=np.int64)
    same_above[order] = np.arange(len(order)) - first
    return np.asarray(above + same_above, dtype=np.int64)


def _parts(ranked: Ranked, metric: Metric) -> tuple[FloatArray, FloatArray, IntArray, IntArray]:
    """(RBO sum of the run, RBO sum of the ideal with itself) per query, unnormalised (the
    common factor 1 / sum_{d<=D} p^(d-1) cancels), with each relevant retrieved entry and the
    depth from which it is in the overlap (0-based)."""
    p = float(metric.get("p"))
    entries = np.flatnonzero(ranked.judged & (ranked.grades > 0))
    ideal_size = ranked.count(ranked.judgment_groups[ranked.judgment_grades > 0])
    depth = np.maximum(ranked.num_ret, ideal_size)
    deepest = int(depth.max()) if len(depth) else 0
    d = np.arange(1, deepest + 1, dtype=np.float64)
    h = np.zeros(deepest + 1, dtype=np.float64)  # H(d) = sum_{j<=d} p^(j-1) / j
    g = np.zeros(deepest + 1, dtype=np.float64)  # G(d) = sum_{j<=d} p^(j-1)
    powers = np.power(p, d - 1.0)
    np.cumsum(powers / d, out=h[1:])
    np.cumsum(powers, out=g[1:])
    groups = ranked.groups[entries]
    start = np.maximum(ranked.positions[entries], ideal_positions(ranked, entries))
    score = ranked.total(groups, h[depth[groups]] - h[start])
    best = g[ideal_size] + ideal_size * (h[depth] - h[ideal_size])
    return score, best, entries, start


def compat_values(ranked: Ranked, metric: Metric) -> FloatArray:
    score, best, *_ = _parts(ranked, metric)
    # The run's overlap never exceeds the ideal's; its sum may by a rounding (1 + 2e-16).
    return np.minimum(ratio(score, best), 1.0)


def explain(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    p = float(metric.get("p"))
    score, best, entries, start = _parts(ranked, metric)
    n = len(ranked.positions)
    ideal_rank: list[int | None] = [None] * n
    positions = ranked.positions[entries]
    places = ideal_positions(ranked, entries)
    for at, place in zip(positions.tolist(), places.tolist(), strict=True):
        ideal_rank[at] = place + 1
    overlap = np.cumsum(np.bincount(start, minlength=n)[:n]) if n else np.zeros(0)
    size = int((ranked.judgment_grades > 0).sum())
    depth = max(int(ranked.num_ret[0]), size)
    grades = ranked.judgment_grades[:size]
    order = ", ".join(num(x) for x in grades[:12].tolist()) + (", ..." if size > 12 else "")
    steps = [
        f"ideal ranking: the {size} judgments with a grade > 0, grades {order or 'none'}; "
        "among equal grades the retrieved ones first, in the run's order",
        f"overlap at depth d = how many of the top d results are among the top d of the ideal; "
        f"RBO sum = sum over d <= {depth} (= max(results, ideal)) of {num(p)}^(d-1) * "
        f"overlap_d / d = {approx(score[0])}",
        f"the ideal against itself (overlap = min(d, {size})): {approx(best[0])}",
    ]
    if best[0] == 0:
        steps.append(f"no judgment has a grade > 0, so there is no ideal ranking: {metric} = 0")
    else:
        steps.append(f"{metric} = {approx(score[0])} / {approx(best[0])} = {approx(value)}")
    return Breakdown(
        steps=tuple(steps),
        columns={"ideal_rank": ideal_rank, "overlap": overlap},
        contributes=np.asarray(ranked.judged & (ranked.grades > 0), dtype=bool),
        quiet="not relevant (grade <= 0 or unjudged): they only take up ranks",
    )


COMPAT = MetricSpec(
    name="Compat",
    description="Compatibility (Clarke, Vtyurina & Smucker 2021): the rank-biased overlap "
    "(persistence p) of the ranking with the ideal ranking of the query's judgments (grade > "
    "0, best first; equal grades in the run's order, retrieved before unretrieved), divided by "
    "the ideal's overlap with itself, both over the depth max(results, relevant judgments), as "
    "ir_measures computes it. Uses raw grades (not --rel).",
    formula="Compat(p) = RBO(run, ideal) / RBO(ideal, ideal);  RBO = sum_{d<=D} p^(d-1) "
    "|run[:d] & ideal[:d]| / d, D = max(n, |ideal|)",
    kernel=compat_values,
    cutoff="none",
    params=(PERSISTENCE,),
    aliases=("Compatibility",),
    reference="Clarke, Vtyurina & Smucker 2021 (TOIS); ir_measures Compat(p) (compat provider)",
    uses=("grade", "ideal_rank", "overlap"),
    explain=explain,
    edge_cases=(
        "No judgment with a grade > 0: 0.",
        "Equal grades are one preference level: the ideal orders them as the run does, so a "
        "run is not penalised for its order within a grade.",
        "Unjudged results and grades <= 0 (negative: pooled, not judged) are not in the ideal; "
        "they only push the relevant results down and deepen D.",
        "ir_measures breaks ties among equal grades by run score, an unretrieved document "
        "scoring 0: where a retrieved one has a negative score it goes after the unretrieved "
        "ones there; rankmeter always puts the retrieved ones first.",
    ),
    example=WorkedExample(
        judgments={"d1": 1, "d2": 0, "d3": 2},
        ranking=("d1", "d2", "d3"),
        metric="Compat(p=0.5)",
        value="0.2500",
        working="ideal d3, d1; D = max(3, 2) = 3; overlaps 0, 1, 2 at depths 1-3: RBO sum = "
        "0 + 0.5 * 1/2 + 0.25 * 2/3 = 0.4167; the ideal with itself: 1 + 0.5 + 0.25 * 2/3 = "
        "1.6667; Compat = 0.4167 / 1.6667 = 0.25.",
    ),
)

SPECS = (COMPAT,)
