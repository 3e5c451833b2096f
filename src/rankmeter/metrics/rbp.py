"""RBP, rank-biased precision (Moffat & Zobel 2008), and its residual.

A user reads rank 1, then goes on to each next rank with probability p (the persistence), so
rank i is read with probability p^(i-1) and has the weight (1 - p) p^(i-1); the weights of all
ranks add up to 1. RBP adds the weights of the relevant ranks. The residual is what RBP could
still gain: the weights of the unjudged ranks and of every rank past the end of the list (or
past the cutoff), p^n together; RBP + residual is the most RBP could be once all is judged.
"""

from __future__ import annotations

from collections.abc import Sequence
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
)

if TYPE_CHECKING:
    from rankmeter.data.arrays import FloatArray
    from rankmeter.metrics._ranked import BoolArray, Ranked

PERSISTENCE = Param(
    "p",
    "number",
    0.8,
    "persistence: the probability of reading on to the next rank (default 0.8, as ir_measures; "
    "0.5 an impatient user, 0.95 a patient one)",
    low=0,
    high=1,
    open_low=True,
    open_high=True,
)


def weights(positions: FloatArray, p: float) -> FloatArray:
    """(1 - p) p^(i-1) of each 0-based position (rank i = position + 1)."""
    return (1.0 - p) * np.power(p, positions.astype(np.float64))


def _one(metric: Metric) -> tuple[int] | None:
    return None if metric.cutoff is None else (metric.cutoff,)


def _weight_at(
    ranked: Ranked, metric: Metric, where: BoolArray, cutoffs: Sequence[int] | None
) -> FloatArray:
    """Per query, the weights of the ranks ``where`` is True within each cutoff."""
    from rankmeter.metrics._ranked import totals_within  # not on the import path of names

    chosen = where & ranked.within(None if cutoffs is None else max(cutoffs, default=0))
    w = weights(ranked.positions[chosen], float(metric.get("p")))
    return totals_within(
        ranked.groups[chosen], ranked.positions[chosen], ranked.n_queries, cutoffs, w
    )


def rbp_at(ranked: Ranked, metric: Metric, cutoffs: Sequence[int] | None) -> FloatArray:
    """RBP@k for every k of ``cutoffs`` (None: the whole list): (n_queries, len(cutoffs))."""
    return _weight_at(ranked, metric, ranked.relevant(metric.rel(ranked)), cutoffs)


def residual_at(ranked: Ranked, metric: Metric, cutoffs: Sequence[int] | None) -> FloatArray:
    # The weights of every rank add up to 1: what the judged ranks (within the cutoff) do not
    # take is the unjudged ranks' and that of the ranks beyond the list or the cutoff.
    judged = _weight_at(ranked, metric, np.asarray(ranked.judged, dtype=bool), cutoffs)
    return np.maximum(1.0 - judged, 0.0)


def rbp_values(ranked: Ranked, metric: Metric) -> FloatArray:
    return rbp_at(ranked, metric, _one(metric))[:, 0]


def residual_values(ranked: Ranked, metric: Metric) -> FloatArray:
    return residual_at(ranked, metric, _one(metric))[:, 0]


def explain(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    p = float(metric.get("p"))
    positions = ranked.positions
    within = ranked.within(metric.cutoff)
    w = weights(positions, p)
    relevant = np.asarray(ranked.relevant(metric.rel(ranked)), dtype=bool) & within
    unjudged = ~np.asarray(ranked.judged, dtype=bool) & within
    n = len(positions)
    depth = n if metric.cutoff is None else min(n, metric.cutoff)
    rbp_metric = metric if metric.spec is RBP else Metric(RBP, metric.cutoff, metric.params)
    rbp = float(rbp_values(ranked, rbp_metric)[0])
    residual = float(residual_values(ranked, metric)[0])
    beyond = p**depth
    lacking = int(unjudged.sum())
    hits = np.flatnonzero(relevant)
    terms = " + ".join(num(x) for x in w[hits][:12].tolist()) or "0"
    if len(hits) > 12:
        terms += f" + ... ({len(hits) - 12} more)"
    name = "RBP" if metric.spec is RBP else f"RBP(p={num(p)})"
    steps = [
        f"the user reads on from each rank with probability p = {num(p)}: rank i weighs "
        f"(1 - p) p^(i-1) = {num(1 - p)} * {num(p)}^(i-1), and all ranks together weigh 1",
        f"{name} adds the weights of the relevant ranks: {terms} = {approx(rbp)}",
        f"residual: {plural(lacking, 'unjudged rank')} weigh{'s' if lacking == 1 else ''} "
        f"{approx(max(residual - beyond, 0.0))}, and the ranks below {depth} (past the "
        f"{'cutoff' if metric.cutoff is not None and n >= metric.cutoff else 'list'}) weigh "
        f"p^{depth} = {approx(beyond)}: residual = {approx(residual)}",
        f"were every unjudged rank relevant, RBP would be at most {approx(rbp)} + "
        f"{approx(residual)} = {approx(min(rbp + residual, 1.0))}",
    ]
    if metric.spec is RESIDUAL:
        steps.append(f"{metric} = {approx(value)}")
        contributes, quiet = unjudged, "judged: their weight is known, not residual"
    else:
        contributes, quiet = relevant, "judged, not relevant: they weigh but add nothing"
    return Breakdown(
        steps=tuple(steps),
        columns={
            "weight": w,
            "contribution": np.where(relevant, w, 0.0),
            "residual": [x if u else None for x, u in zip(w.tolist(), unjudged, strict=True)],
        },
        contributes=contributes,
        limit=metric.cutoff,
        quiet=quiet,
    )


_EDGES = (
    "No relevant result (within the top k): 0.",
    "Binary: a rank counts when its grade is at least rel (the evaluation's --rel, 1 by "
    "default), as ir_measures' RBP(p=...,rel=...) (its cwl_eval provider). ir_measures' "
    "RBP(p=0.8) without rel is graded RBP, which only its trectools provider computes: on "
    "graded qrels that is another number.",
    "A short list is not padded: the ranks past its end add nothing to RBP and all of their "
    "weight, p^n, to the residual.",
    "Unjudged results and negative grades (pooled, not judged) add nothing to RBP and their "
    "weight to the residual; under --judged-only they are removed first.",
)

RBP = MetricSpec(
    name="RBP",
    description="Rank-biased precision (Moffat & Zobel 2008): a user reads rank 1 and goes on "
    "to each next rank with probability p; RBP is the share of their reading that lands on "
    "relevant results, (1 - p) times the sum of p^(i-1) over relevant ranks. A cutoff k keeps "
    "the top k only. See RBP_resid for how much unjudged results could add.",
    formula="RBP(p)@k = (1 - p) * sum_{i<=k} rel_i * p^(i-1)",
    kernel=rbp_values,
    params=(PERSISTENCE, REL),
    reference="Moffat & Zobel 2008 (TOIS); cwl-eval RBP@p; ir_measures RBP(p,rel)",
    uses=("grade", "relevant", "weight", "contribution", "residual"),
    explain=explain,
    at_cutoffs=rbp_at,
    edge_cases=_EDGES,
    example=WorkedExample(
        judgments={"d1": 1, "d2": 0, "d3": 2},
        ranking=("d1", "d2", "d9", "d3"),
        metric="RBP(p=0.5)",
        value="0.5625",
        working="weights (1 - 0.5) 0.5^(i-1): 0.5, 0.25, 0.125, 0.0625; d1 (rank 1) and d3 "
        "(rank 4) are relevant: RBP = 0.5 + 0.0625 = 0.5625. d9 (unjudged) and the ranks past "
        "4 (0.5^4) leave a residual of 0.125 + 0.0625 = 0.1875.",
    ),
)

RESIDUAL = MetricSpec(
    name="RBP_resid",
    description="RBP's residual (Moffat & Zobel 2008): how much RBP could still rise if every "
    "unjudged result, and every rank past the end of the list (or the cutoff), were relevant: "
    "the weight (1 - p) p^(i-1) of each unjudged rank plus p^n for the ranks past n. A large "
    "residual says the judgments are too shallow to trust the RBP of this run.",
    formula="RBP_resid(p)@k = (1 - p) * sum_{i<=m, d_i unjudged} p^(i-1) + p^m, m = min(n, k)",
    kernel=residual_values,
    params=(PERSISTENCE,),
    aliases=("RBP_residual", "RBP_res"),
    better="lower",
    reference="Moffat & Zobel 2008 (TOIS); cwl-eval's residuals (-r)",
    uses=("grade", "judged", "weight", "residual"),
    explain=explain,
    at_cutoffs=residual_at,
    edge_cases=(
        "Does not depend on the grades, only on which results are judged (grade >= 0): a "
        "negative grade (pooled, not judged) is unjudged here.",
        "An empty ranking has the residual 1: nothing is known.",
        "Under --judged-only the unjudged results are removed, so only the ranks past the end "
        "of the list remain.",
    ),
    example=WorkedExample(
        judgments={"d1": 1, "d2": 0, "d3": 2},
        ranking=("d1", "d2", "d9", "d3"),
        metric="RBP_resid(p=0.5)",
        value="0.1875",
        working="d9 at rank 3 is unjudged: (1 - 0.5) 0.5^2 = 0.125; the ranks past 4 weigh "
        "0.5^4 = 0.0625; residual = 0.1875, so RBP(p=0.5) = 0.5625 could reach 0.75.",
    ),
)

SPECS = (RBP, RESIDUAL)
