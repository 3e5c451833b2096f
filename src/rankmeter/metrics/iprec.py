"""Interpolated precision at a recall level, and its average over the 11 levels 0, 0.1, ..., 1.

As trec_eval 9 computes them (m_iprec_at_recall.c, m_11pt_avg.c, the version inside
pytrec_eval): recall level L asks for c = floor(L * R + 0.9) relevant documents (R: the query's
relevant judgments; trec_eval 10 rounds L * R instead); the value is the best precision at or
below the rank where the c-th relevant result is found, 0 when fewer than c are returned. With
c = 0 (level 0, or R = 0) it is the best precision anywhere in the ranking.

Precision only rises at a relevant result, so the best precision at or below a rank is the best
of j / rank_j over the relevant results j >= c: a suffix maximum within each query, taken here
for every query at once with one ``np.maximum.reduceat``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rankmeter.metrics._spec import (
    REL,
    Breakdown,
    Metric,
    MetricSpec,
    Param,
    WorkedExample,
    approx,
    num,
    plural,
    zeros,
)

if TYPE_CHECKING:
    from rankmeter.data.arrays import FloatArray, IntArray
    from rankmeter.metrics._ranked import Ranked

#: trec_eval's default recall levels (iprec_at_recall, 11pt_avg), lowest first.
ELEVEN_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

RECALL = Param(
    "recall",
    "number",
    None,
    "the recall level, from 0 to 1 (written IPrec@0.5; trec_eval: iprec_at_recall_0.50)",
    low=0,
    high=1,
)


def needed(level: float, num_rel: IntArray) -> IntArray:
    """How many relevant documents recall ``level`` asks for: trec_eval 9's
    ``(long) (level * R + 0.9)``."""
    counts: IntArray = np.floor(level * num_rel.astype(np.float64) + 0.9).astype(np.int64)
    return counts


class _Precisions:
    """The precision at each relevant result, grouped by query (the kernel's one pass)."""

    def __init__(self, ranked: Ranked, rel: float) -> None:
        from rankmeter.metrics.ap import relevant_so_far

        relevant = ranked.relevant(rel)
        self.so_far = relevant_so_far(ranked, relevant)[relevant]
        self.precision = self.so_far / (ranked.positions[relevant] + 1.0)
        self.found = ranked.count(ranked.groups[relevant])  # relevant results per query
        self.start = np.concatenate(([0], np.cumsum(self.found)[:-1])).astype(np.int64)
        self.num_rel = ranked.num_rel(rel)
        # one spare element: reduceat's indices must lie inside the array
        self.padded = np.concatenate((self.precision, [0.0]))

    def at(self, level: float) -> FloatArray:
        """Interpolated precision at ``level`` for every query."""
        first = np.maximum(needed(level, self.num_rel), 1)
        valid = (first <= self.found) & (self.found > 0)
        out = np.zeros(len(self.found), dtype=np.float64)
        if not valid.any():
            return out
        lo = (self.start + first - 1)[valid]
        hi = (self.start + self.found)[valid]
        bounds = np.empty(2 * len(lo), dtype=np.int64)
        bounds[0::2], bounds[1::2] = lo, hi
        out[valid] = np.maximum.reduceat(self.padded, bounds)[0::2]
        return out


def _precisions(ranked: Ranked, metric: Metric) -> _Precisions:
    rel = metric.rel(ranked)
    key = ("iprec", rel)
    if key not in ranked._cache:  # the 11 levels of one evaluation share one pass
        ranked._cache[key] = _Precisions(ranked, rel)
    found: _Precisions = ranked._cache[key]
    return found


def interpolated_precision(ranked: Ranked, metric: Metric) -> FloatArray:
    if ranked.n_queries == 0:
        return zeros(ranked)
    return _precisions(ranked, metric).at(float(metric.get("recall")))


def eleven_point_average(ranked: Ranked, metric: Metric) -> FloatArray:
    if ranked.n_queries == 0:
        return zeros(ranked)
    precisions = _precisions(ranked, metric)
    total = zeros(ranked)
    for level in reversed(ELEVEN_LEVELS):  # trec_eval adds the highest level first
        total += precisions.at(level)
    return total / len(ELEVEN_LEVELS)


def _steps_at(ranked: Ranked, metric: Metric, level: float) -> tuple[str, int | None]:
    """One line on the value at ``level``, and the 0-based position that gives it."""
    precisions = _precisions(ranked, metric)
    num_rel = int(precisions.num_rel[0])
    count = int(needed(level, precisions.num_rel)[0])
    found = int(precisions.found[0])
    value = float(precisions.at(level)[0])
    wanted = f"recall {num(level)} of R = {num_rel} asks for {count} relevant (floor({num(level)}"
    wanted += f" * {num_rel} + 0.9))"
    if count > found:
        return f"{wanted}; only {found} returned: 0", None
    if found == 0:
        return f"{wanted}; no relevant result returned: 0", None
    first = max(count, 1)
    best = first - 1 + int(np.argmax(precisions.precision[first - 1 :]))
    at = np.flatnonzero(ranked.relevant(metric.rel(ranked)))[best]
    rank = int(ranked.positions[at]) + 1
    return (
        f"{wanted}; the best precision from the {_nth(first)} relevant result down is at rank "
        f"{rank}: {best + 1}/{rank} = {approx(value)}",
        int(at),
    )


def _nth(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _columns(ranked: Ranked, metric: Metric) -> dict[str, list[float | None]]:
    from rankmeter.metrics.ap import relevant_so_far

    relevant = ranked.relevant(metric.rel(ranked))
    so_far = relevant_so_far(ranked, relevant)
    precision = so_far / (ranked.positions + 1.0)
    return {
        "relevant_so_far": so_far.tolist(),
        "precision": [
            p if r else None for p, r in zip(precision.tolist(), relevant.tolist(), strict=True)
        ],
    }


def explain_iprec(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    line, at = _steps_at(ranked, metric, float(metric.get("recall")))
    contributes = np.zeros(len(ranked.positions), dtype=bool)
    if at is not None:
        contributes[at] = True
    steps = [
        "interpolated precision at a rank = the best precision at that rank or below it",
        f"{metric} = {line}" if at is None else line,
    ]
    if at is not None:
        steps.append(f"{metric} = {approx(value)}")
    return Breakdown(steps=tuple(steps), columns=_columns(ranked, metric), contributes=contributes)


def explain_eleven(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    precisions = _precisions(ranked, metric)
    values = [float(precisions.at(level)[0]) for level in ELEVEN_LEVELS]
    num_rel = int(precisions.num_rel[0])
    shown = ", ".join(
        f"{num(level)}: {approx(v)}" for level, v in zip(ELEVEN_LEVELS, values, strict=True)
    )
    steps = (
        f"interpolated precision (the best precision at or below a rank) at recall 0, 0.1, ..., "
        f"1 of R = {plural(num_rel, 'relevant judgment')}: {shown}",
        f"{metric} = {num(sum(values))} / 11 = {approx(value)}",
    )
    return Breakdown(steps=steps, columns=_columns(ranked, metric))


IPREC = MetricSpec(
    name="IPrec",
    description="Interpolated precision at a recall level r: the best precision at or below "
    "the rank where a share r of the relevant documents has been found (the points of the "
    "recall-precision graph). r is a fraction from 0 to 1, not a rank.",
    formula="IPrec@r = max{P@i : i >= rank of the c-th relevant result}, c = floor(r * R + 0.9)",
    kernel=interpolated_precision,
    cutoff="none",
    params=(RECALL, REL),
    trec_names=(("iprec_at_recall", True),),
    reference="trec_eval 9 iprec_at_recall; ir_measures IPrec@r",
    uses=("grade", "relevant", "relevant_so_far", "precision"),
    explain=explain_iprec,
    cutoff_kind="recall level",
    edge_cases=(
        "Fewer relevant results returned than the level asks for: 0.",
        "Level 0 (or no relevant judgment): the best precision anywhere in the ranking, 0 "
        "when nothing relevant is returned.",
        "The number of relevant documents a level asks for is floor(r * R + 0.9), as in "
        "trec_eval 9 and pytrec_eval (trec_eval 10 rounds r * R): IPrec@0.31 with R = 10 asks "
        "for 4.",
        "The bare trec_eval name iprec_at_recall is the 11 levels 0.00, 0.10, ..., 1.00, "
        "labelled iprec_at_recall_0.00 ... as trec_eval prints them.",
    ),
    example=WorkedExample(
        judgments={"d1": 1, "d2": 1, "d3": 1, "d4": 1, "n1": 0},
        ranking=("d1", "n1", "x", "d2", "d3"),
        metric="IPrec@0.5",
        value="0.6000",
        working="R = 4, so recall 0.5 asks for floor(0.5 * 4 + 0.9) = 2 relevant results. The "
        "2nd relevant result is at rank 4 (P = 2/4) and the 3rd at rank 5 (P = 3/5); the best "
        "precision from rank 4 down is 3/5 = 0.6.",
    ),
)

ELEVEN_POINT = MetricSpec(
    name="AP_11pt",
    description="11-point interpolated average precision: the mean of IPrec at the recall "
    "levels 0, 0.1, ..., 1 (the area under the interpolated recall-precision graph; trec_eval "
    "calls it obsolete beside AP, kept to compare with old results).",
    formula="AP_11pt = (1/11) sum_{r in 0, 0.1, ..., 1} IPrec@r",
    kernel=eleven_point_average,
    cutoff="none",
    params=(REL,),
    aliases=("11pt-AP",),
    trec_names=(("11pt_avg", False),),
    reference="trec_eval 9 11pt_avg",
    uses=("grade", "relevant", "relevant_so_far", "precision"),
    explain=explain_eleven,
    edge_cases=(
        "No relevant result returned: 0.",
        "Levels asking for more relevant results than were returned add 0.",
        "Always trec_eval's 11 default levels (its 11pt_avg.0.2,0.5,0.8 three-point variant is "
        "not offered).",
    ),
    example=WorkedExample(
        judgments={"d1": 1, "d2": 1},
        ranking=("d1", "x", "d2"),
        metric="11pt_avg",
        value="0.8485",
        working="R = 2: levels 0 to 0.5 ask for at most 1 relevant result (floor(0.5 * 2 + "
        "0.9) = 1; best precision 1/1), 0.6 to 1 for 2 (2/3). (6 * 1 + 5 * 2/3) / 11 = 0.8485.",
    ),
)
