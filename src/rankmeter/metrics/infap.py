"""Inferred AP: average precision estimated from judgments that are a sample of the pool.

trec_eval's estimator (m_infAP.c, after Yilmaz & Aslam, CIKM 2006). A retrieved document is
*unpooled* when the qrels do not list it (counted non-relevant), *pooled but not judged* when
its grade is negative (not sampled: assumed relevant in the proportion of the judged ones), or
judged. At the relevant result at 0-based rank j (j > 0), with r relevant and n non-relevant
judged results above it and u pooled-but-unjudged ones:

    1/(j+1) + j/(j+1) * (r + n + u)/j * (r + eps)/(r + n + 2 eps),   eps = 0.00001

(1 at rank 1), summed and divided by the query's relevant judgments. Under ``judged_only``
(trec_eval -J) only judged results are ranked, so nothing is unpooled or unjudged and infAP is AP.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rankmeter.metrics._spec import (
    REL,
    Breakdown,
    Metric,
    MetricSpec,
    WorkedExample,
    approx,
    num,
    plural,
    ratio,
)

if TYPE_CHECKING:
    from rankmeter.data.arrays import FloatArray, IntArray
    from rankmeter.metrics._ranked import Ranked

#: trec_eval's INFAP_EPSILON: keeps the estimate defined with nothing judged above.
EPSILON = 0.00001


def _above(ranked: Ranked, counted: np.ndarray) -> IntArray:
    """For every entry, the number of ``counted`` entries of its query ranked above it."""
    running = np.cumsum(counted, dtype=np.int64)
    before = np.concatenate(([0], running))[ranked.offsets[:-1]]
    above: IntArray = running - counted - before[ranked.groups]
    return above


def _pooled_above(ranked: Ranked, groups: IntArray, positions: IntArray) -> IntArray:
    """For entries at (groups, positions), the pooled-but-unjudged results ranked above them
    in their query (``ranked.pooled_*`` are in query and rank order)."""
    if not len(ranked.pooled_groups) or not len(groups):
        return np.zeros(len(groups), dtype=np.int64)
    # One sorted key per (query, rank): ranks are below num_ret, so the key is unique.
    width = int(ranked.num_ret.max()) + 1
    pooled = ranked.pooled_groups * width + ranked.pooled_positions
    here = np.searchsorted(pooled, groups * width + positions, side="left")
    first = np.searchsorted(pooled, groups * width, side="left")
    counts: IntArray = here - first
    return counts


def terms(ranked: Ranked, metric: Metric) -> tuple[np.ndarray, FloatArray, dict[str, IntArray]]:
    """The relevant entries (a mask), each one's term of the sum, and the counts above each."""
    rel = metric.rel(ranked)
    relevant = ranked.relevant(rel)
    nonrelevant = ranked.judged & ~relevant
    rel_above = _above(ranked, relevant)[relevant]
    nonrel_above = _above(ranked, nonrelevant)[relevant]
    positions = ranked.positions[relevant]
    pooled_above = _pooled_above(ranked, ranked.groups[relevant], positions)
    j = positions.astype(np.float64)
    judged = rel_above + nonrel_above
    with np.errstate(divide="ignore", invalid="ignore"):
        # trec_eval's arithmetic, in its order (its rank 1 is the special case 1.0).
        later = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((judged + pooled_above) / j) * (
            (rel_above + EPSILON) / (judged + 2 * EPSILON)
        )
    term = np.where(positions == 0, 1.0, later)
    counts = {"rel": rel_above, "nonrel": nonrel_above, "pooled": pooled_above}
    return relevant, term, counts


def inferred_ap(ranked: Ranked, metric: Metric) -> FloatArray:
    relevant, term, _ = terms(ranked, metric)
    return ratio(ranked.total(ranked.groups[relevant], term), ranked.num_rel(metric.rel(ranked)))


def explain(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    relevant, term, counts = terms(ranked, metric)
    num_rel = int(ranked.num_rel(metric.rel(ranked))[0])
    positions = ranked.positions[relevant].tolist()
    contribution: list[float | None] = [None] * len(ranked.positions)
    for at, t in zip(np.flatnonzero(relevant).tolist(), term.tolist(), strict=True):
        contribution[at] = t
    unpooled = [
        p - r - n - u
        for p, r, n, u in zip(
            positions,
            counts["rel"].tolist(),
            counts["nonrel"].tolist(),
            counts["pooled"].tolist(),
            strict=True,
        )
    ]
    steps = [
        "results not in the qrels count as unpooled (non-relevant); a negative grade is pooled "
        "but not judged (assumed relevant as often as the judged results above it)",
        "each relevant result at rank k > 1 adds 1/k + (k-1)/k * (pooled above / (k-1)) * "
        "((relevant above + eps) / (judged above + 2 eps)), eps = 0.00001; at rank 1 it adds 1",
    ]
    if num_rel == 0:
        steps.append(f"the query has no relevant judgments: {metric} = 0")
    elif not positions:
        steps.append(f"no relevant result returned: {metric} = 0 / {num_rel} = 0")
    else:
        shown = [
            f"rank {p + 1}: {r} relevant and {n} non-relevant judged, {u} pooled unjudged, "
            f"{x} unpooled above -> {num(t)}"
            for p, r, n, u, x, t in zip(
                positions,
                counts["rel"].tolist(),
                counts["nonrel"].tolist(),
                counts["pooled"].tolist(),
                unpooled,
                term.tolist(),
                strict=True,
            )
        ]
        if len(shown) > 8:
            shown = [*shown[:6], f"... ({len(shown) - 7} more)", shown[-1]]
        steps.extend(shown)
        total = float(term.sum())
        steps.append(
            f"{metric} = {num(total)} / {plural(num_rel, 'relevant judgment')} = {approx(value)}"
        )
    return Breakdown(steps=tuple(steps), columns={"contribution": contribution})


SPEC = MetricSpec(
    name="infAP",
    description="Inferred average precision: AP estimated when only a random sample of the "
    "pool was judged. Precision above each relevant result is estimated from the judged "
    "results above it; results outside the pool count as non-relevant, pooled results without "
    "a judgment (negative grade) as relevant in the judged proportion. trec_eval's estimator.",
    formula="infAP = (1/R) sum_{relevant d_k} [1/k + (k-1)/k * (|pooled above|/(k-1)) * "
    "(|rel above| + eps)/(|judged above| + 2 eps)], eps = 1e-5",
    kernel=inferred_ap,
    cutoff="none",
    params=(REL,),
    trec_names=(("infAP", False),),
    reference="Yilmaz & Aslam 2006 (CIKM); trec_eval infAP",
    uses=("grade", "judged", "relevant", "contribution"),
    explain=explain,
    edge_cases=(
        "No relevant judgment: 0.",
        "A relevant result at rank 1 adds 1, whatever else is judged.",
        "Any negative grade (-1, -2, ...) is pooled but not judged, as in trec_eval; a result "
        "missing from the qrels is unpooled and counts as non-relevant.",
        "With complete judgments (every retrieved document judged) infAP equals AP up to the "
        "epsilon smoothing; with --judged-only (trec_eval -J) unjudged results are removed first.",
    ),
    example=WorkedExample(
        judgments={"d1": 1, "d2": 0, "d3": -1, "d4": 1},
        ranking=("d1", "d9", "d3", "d2", "d4"),
        metric="infAP",
        value="0.7500",
        working="R = 2. d1 at rank 1 adds 1. Above d4 (rank 5) are 1 relevant and 1 "
        "non-relevant judged result, 1 pooled unjudged (d3) and 1 unpooled (d9, counted "
        "non-relevant): d4 adds 1/5 + 4/5 * 3/4 * (1 + eps)/(2 + 2 eps) = 0.2 + 0.3 = 0.5. "
        "infAP = (1 + 0.5) / 2 = 0.75 (AP counts d3 non-relevant: (1 + 2/5) / 2 = 0.7).",
    ),
)
