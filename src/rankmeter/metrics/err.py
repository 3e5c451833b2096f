"""ERR and nERR: the cascade user model of Chapelle et al. (2009), as gdeval computes it.

The user reads down the ranking and stops at rank i, satisfied, with probability
R_i = (2^g_i - 1) / 2^max_grade; ERR is the expected reciprocal rank where they stop. Each
rank's probability of being reached is a product over the ranks above it: a product per query,
taken for every query at once by a segmented scan (no loop over queries or documents).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from rankmeter.errors import MetricError
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

MAX_GRADE = Param(
    "max_grade",
    "number",
    4,
    "the top grade of the scale: a grade g stops the user with probability "
    "(2^g - 1) / 2^max_grade (default 4, gdeval's and the TREC Web track's 0-4 scale); a "
    "judgment above it is an error that names it",
    low=0,
    open_low=True,
    high=1000,
)


def exclusive_cumprod(values: FloatArray, groups: IntArray) -> FloatArray:
    """Per entry, the product of ``values`` of the entries before it in its group (1 for the
    first of each group); ``groups`` is sorted (entries of a group contiguous).

    A Hillis-Steele scan: log2(longest group) vectorised passes, each multiplying an entry by
    the one ``shift`` places before it when both are in one group; each query's products are
    its own, whatever other queries are evaluated with it.
    """
    out = np.array(values, dtype=np.float64)
    n = len(out)
    shift = 1
    while shift < n:
        same = groups[shift:] == groups[:-shift]
        if not same.any():
            break
        out[shift:] = np.where(same, out[shift:] * out[:-shift], out[shift:])
        shift *= 2
    exclusive = np.ones(n, dtype=np.float64)
    if n > 1:
        follows = groups[1:] == groups[:-1]
        exclusive[1:][follows] = out[:-1][follows]
    return exclusive


def stop_probability(grades: FloatArray, max_grade: float) -> FloatArray:
    """R = (2^g - 1) / 2^max_grade for g > 0; 0 for grades <= 0 and unjudged documents."""
    positive = np.maximum(grades, 0.0)
    return np.asarray((np.exp2(positive) - 1.0) / np.exp2(float(max_grade)), dtype=np.float64)


def _check_scale(ranked: Ranked, metric: Metric) -> float:
    top = float(metric.get("max_grade"))
    grades = ranked.judgment_grades
    if len(grades) and float(grades.max()) > top:
        # the top grade of all: a scale that holds it holds every judgment
        at = int(np.argmax(grades))
        query = str(ranked.query_ids[int(ranked.judgment_groups[at])])
        where = "in the grades given" if ranked.qrels is None else f"of query {query!r}"
        grade = float(grades[at])
        highest = next(p for p in metric.spec.params if p.name == "max_grade").high
        if highest is not None and np.ceil(grade) > highest:
            fix = (
                f"max_grade is at most {num(highest)}: rescale the grades to a scale of at "
                f"most {num(highest)}"
            )
        else:
            fix = f"give the top grade of your scale, e.g. {metric.spec.name}"
            fix += f"(max_grade={num(np.ceil(grade))})"
            if metric.cutoff is not None:
                fix += f"@{metric.cutoff}"
        raise MetricError(
            f"{metric.label}: a judgment of grade {num(grade)} ({where}) is above "
            f"max_grade={num(top)} (ERR's scale; gdeval's is 0-4): {fix}"
        )
    return top


def _contributions(
    grades: FloatArray, groups: IntArray, positions: IntArray, max_grade: float
) -> tuple[IntArray, IntArray, FloatArray]:
    """(group, position, R * reach / rank) of each ranked entry that can stop the user (R > 0);
    a rank's contribution depends only on the ranks above it, so one pass serves every cutoff."""
    stop = stop_probability(grades, max_grade)
    keep = stop > 0
    stop, groups, positions = stop[keep], groups[keep], positions[keep]
    reach = exclusive_cumprod(1.0 - stop, groups)
    return groups, positions, stop * reach / (positions + 1.0)


def _one(metric: Metric) -> tuple[int] | None:
    return None if metric.cutoff is None else (metric.cutoff,)


def err_at(ranked: Ranked, metric: Metric, cutoffs: Sequence[int] | None) -> FloatArray:
    """ERR@k for every k of ``cutoffs`` (None: the whole list): (n_queries, len(cutoffs))."""
    from rankmeter.metrics._ranked import totals_within  # not on the import path of names

    top = _check_scale(ranked, metric)
    within = ranked.within(None if cutoffs is None else max(cutoffs, default=0))
    groups, positions, terms = _contributions(
        ranked.grades[within], ranked.groups[within], ranked.positions[within], top
    )
    return totals_within(groups, positions, ranked.n_queries, cutoffs, terms)


def ideal_err_at(ranked: Ranked, metric: Metric, cutoffs: Sequence[int] | None) -> FloatArray:
    """ERR@k of each query's judgments ordered by grade, best first, for every k."""
    from rankmeter.metrics._ranked import totals_within  # not on the import path of names

    top = _check_scale(ranked, metric)
    groups = ranked.judgment_groups
    positions = np.arange(len(groups), dtype=np.int64) - ranked.judgment_offsets[groups]
    if cutoffs is not None:
        keep = positions < max(cutoffs, default=0)
        groups, positions = groups[keep], positions[keep]
        grades = ranked.judgment_grades[keep]
    else:
        grades = ranked.judgment_grades
    groups, positions, terms = _contributions(grades, groups, positions, top)
    return totals_within(groups, positions, ranked.n_queries, cutoffs, terms)


def nerr_at(ranked: Ranked, metric: Metric, cutoffs: Sequence[int] | None) -> FloatArray:
    return ratio(err_at(ranked, metric, cutoffs), ideal_err_at(ranked, metric, cutoffs))


def err_values(ranked: Ranked, metric: Metric) -> FloatArray:
    return err_at(ranked, metric, _one(metric))[:, 0]


def ideal_err_values(ranked: Ranked, metric: Metric) -> FloatArray:
    return ideal_err_at(ranked, metric, _one(metric))[:, 0]


def nerr_values(ranked: Ranked, metric: Metric) -> FloatArray:
    return nerr_at(ranked, metric, _one(metric))[:, 0]


#: the most ideal-ordering rows an explanation lists (as nDCG's)
IDEAL_ROWS = 20


def _terms(stop: FloatArray, reach: FloatArray, positions: IntArray) -> str:
    shown = [
        f"{num(s)}*{num(r)}/{int(p) + 1}"
        for s, r, p in zip(stop.tolist(), reach.tolist(), positions.tolist(), strict=True)
    ]
    if not shown:
        return "0"
    if len(shown) > 12:
        shown = [*shown[:10], f"... ({len(shown) - 11} more)", shown[-1]]
    return " + ".join(shown)


def explain(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    top = _check_scale(ranked, metric)
    within = ranked.within(metric.cutoff)
    stop_all = stop_probability(ranked.grades, top)
    stop_all[~ranked.judged] = 0.0
    reach_all = exclusive_cumprod(1.0 - stop_all, np.asarray(ranked.groups))
    contribution = np.where(within, stop_all * reach_all / (ranked.positions + 1.0), 0.0)
    label = "ERR" if metric.cutoff is None else f"ERR@{metric.cutoff}"
    if metric.spec is ERR:
        label = str(metric)
    err = float(err_values(ranked, metric)[0])
    hit = np.flatnonzero(within & (stop_all > 0))
    steps = [
        f"a result of grade g stops the user with probability R = (2^g - 1) / 2^{num(top)} "
        f"(max_grade={num(top)}); unjudged results and grades <= 0 never stop them",
        "reach = the probability the user gets to the rank: the product of (1 - R) over the "
        "ranks above; a rank adds R * reach / rank",
        f"{label} = {_terms(stop_all[hit], reach_all[hit], ranked.positions[hit])} = {approx(err)}",
    ]
    ideal: tuple[dict[str, object], ...] = ()
    if metric.spec is NERR:
        grades = np.asarray(ranked.judgment_grades, dtype=np.float64)
        if metric.cutoff is not None:
            grades = grades[: metric.cutoff]
        ideal_stop = stop_probability(grades, top)
        positive = int((ideal_stop > 0).sum())
        ideal_reach = exclusive_cumprod(1.0 - ideal_stop, np.zeros(len(grades), dtype=np.int64))
        places = np.arange(len(grades), dtype=np.int64)
        ideal = tuple(
            {
                "rank": i + 1,
                "grade": grades[i].item(),
                "stop": float(ideal_stop[i]),
                "reach": float(ideal_reach[i]),
                "contribution": float(ideal_stop[i] * ideal_reach[i] / (i + 1)),
            }
            for i in range(min(positive, IDEAL_ROWS))
        )
        best = float(ideal_err_values(ranked, metric)[0])
        order = ", ".join(num(g) for g in grades[:12].tolist()) + (
            ", ..." if len(grades) > 12 else ""
        )
        steps.append(
            f"ideal ordering (the query's judgments, best first): grades {order or 'none'}"
        )
        keep = ideal_stop > 0
        steps.append(
            f"ideal {label} = {_terms(ideal_stop[keep], ideal_reach[keep], places[keep])} "
            f"= {approx(best)}"
        )
        if best == 0:
            steps.append(f"no judgment has a positive grade, so the ideal is 0: {metric} = 0")
        else:
            steps.append(f"{metric} = {approx(err)} / {approx(best)} = {approx(value)}")
        if positive > IDEAL_ROWS:
            steps.append(
                f"the ideal ordering lists its first {IDEAL_ROWS} of {positive} ranks that can "
                "stop the user"
            )
    return Breakdown(
        steps=tuple(steps),
        columns={
            "stop": stop_all,
            "reach": reach_all,
            "contribution": contribution,
        },
        contributes=within & (stop_all > 0),
        limit=metric.cutoff,
        ideal=ideal,
    )


_EDGES = (
    "Unjudged results, grade 0 and negative grades (pooled, not judged) never stop the user: "
    "R = 0, and the ranks below are reached as if the result were not there.",
    "A judgment above max_grade (default 4, gdeval's 0-4 scale) is an error naming the query "
    "and the grade: R would exceed 1. Give the top of your scale, e.g. ERR(max_grade=5)@20.",
    "Grades need not be integers (gdeval refuses them; the formula takes any grade).",
    "Ties in score are broken by doc id, descending, as trec_eval and gdeval do.",
)

ERR = MetricSpec(
    name="ERR",
    description="Expected reciprocal rank (Chapelle et al. 2009), the cascade model: the user "
    "reads down the ranking and stops at a result of grade g with probability "
    "R = (2^g - 1) / 2^max_grade; ERR@k is the expected 1/rank at which they stop within the "
    "top k. max_grade is 4 by default, as gdeval (the TREC Web track) takes it. Uses raw "
    "grades (not --rel).",
    formula="ERR@k = sum_{i<=k} R_i / i * prod_{j<i} (1 - R_j);  R = (2^g - 1) / 2^max_grade",
    kernel=err_values,
    params=(MAX_GRADE,),
    reference="Chapelle, Metzler, Zhang & Grinspan 2009 (CIKM); gdeval.pl err@k (TREC Web track)",
    uses=("grade", "stop", "reach", "contribution"),
    explain=explain,
    at_cutoffs=err_at,
    edge_cases=(*_EDGES, "No judgment with a positive grade among the results: 0."),
    example=WorkedExample(
        judgments={"d1": 2, "d2": 0, "d3": 4},
        ranking=("d1", "d2", "d9", "d3"),
        metric="ERR@10",
        value="0.3779",
        working="R(d1) = (2^2 - 1)/16 = 0.1875 at rank 1 adds 0.1875; d2 (grade 0) and d9 "
        "(unjudged) never stop the user; R(d3) = 15/16 at rank 4, reached with probability "
        "1 - 0.1875 = 0.8125, adds 0.9375 * 0.8125 / 4 = 0.1904; ERR@10 = 0.1875 + 0.1904 = 0.3779.",
    ),
)

NERR = MetricSpec(
    name="nERR",
    description="Normalised ERR: ERR@k divided by the ERR@k of the ideal ordering of the "
    "query's judgments (grades descending), so 1 is the best ranking the judgments allow. "
    "0 when no judgment has a positive grade. max_grade as in ERR (default 4).",
    formula="nERR@k = ERR@k / ERR@k(ideal ordering)",
    kernel=nerr_values,
    params=(MAX_GRADE,),
    reference="Chapelle et al. 2009; ndeval's nERR-IA@k with one intent per query",
    uses=("grade", "stop", "reach", "contribution"),
    explain=explain,
    at_cutoffs=nerr_at,
    edge_cases=(*_EDGES, "No judgment with a positive grade: the ideal ERR is 0 and nERR is 0."),
    example=WorkedExample(
        judgments={"d1": 2, "d2": 0, "d3": 4},
        ranking=("d1", "d2", "d9", "d3"),
        metric="nERR@10",
        value="0.4006",
        working="ERR@10 = 0.3779 (see ERR); the ideal ordering d3, d1, d2 has "
        "ERR@10 = 0.9375 + 0.1875 * (1 - 0.9375) / 2 = 0.9434; nERR@10 = 0.3779 / 0.9434 = 0.4006.",
    ),
)

SPECS = (ERR, NERR)
