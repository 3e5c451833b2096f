"""Average precision (its mean over queries is MAP)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rankmeter.metrics._spec import REL, Breakdown, Metric, MetricSpec, approx, num, plural, ratio

if TYPE_CHECKING:
    from rankmeter.data.arrays import FloatArray
    from rankmeter.metrics._ranked import Ranked


def relevant_so_far(ranked: Ranked, relevant: np.ndarray) -> np.ndarray:
    """For every entry, the number of relevant entries of its query at or above it."""
    running = np.cumsum(relevant, dtype=np.int64)
    before = np.concatenate(([0], running))[ranked.offsets[:-1]]
    counts: np.ndarray = running - before[ranked.groups]
    return counts


def average_precision(ranked: Ranked, metric: Metric) -> FloatArray:
    rel = metric.rel(ranked)
    relevant = ranked.relevant(rel)
    hit = relevant & ranked.within(metric.cutoff)
    precision_at = relevant_so_far(ranked, relevant)[hit] / (ranked.positions[hit] + 1.0)
    # Divided by all relevant documents of the query, retrieved or not (trec_eval map, map_cut).
    return ratio(ranked.total(ranked.groups[hit], precision_at), ranked.num_rel(rel))


def explain(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    rel = metric.rel(ranked)
    relevant = ranked.relevant(rel)
    so_far = relevant_so_far(ranked, relevant)
    precision = so_far / (ranked.positions + 1.0)
    hit = relevant & ranked.within(metric.cutoff)
    num_rel = int(ranked.num_rel(rel)[0])
    where = "" if metric.cutoff is None else f" in the top {metric.cutoff}"
    terms = [
        f"{c}/{p + 1}"
        for c, p in zip(so_far[hit].tolist(), ranked.positions[hit].tolist(), strict=True)
    ]
    if len(terms) > 12:
        terms = [*terms[:10], f"... ({len(terms) - 11} more)", terms[-1]]
    if num_rel == 0:
        steps = [f"the query has no relevant judgments (grade >= {num(rel)}): {metric} = 0"]
    elif not terms:
        steps = [f"no relevant result{where}: {metric} = 0 / {num_rel} = 0"]
    else:
        total = float(precision[hit].sum())
        steps = [
            f"{metric} = ({' + '.join(terms)}) / {num_rel} relevant judged"
            f" = {num(total)} / {num_rel} = {approx(value)}",
        ]
        missing = num_rel - int(hit.sum())
        if missing:
            steps.append(
                f"{plural(missing, 'relevant document')} not retrieved{where} "
                f"{'adds' if missing == 1 else 'add'} 0 but {'counts' if missing == 1 else 'count'} "
                "in the divisor"
            )
    return Breakdown(
        steps=tuple(steps),
        columns={
            "relevant_so_far": so_far,
            "precision": [
                p if r else None for p, r in zip(precision.tolist(), relevant.tolist(), strict=True)
            ],
        },
        limit=metric.cutoff,
    )


SPEC = MetricSpec(
    name="AP",
    description="Average precision: mean of P@i over the ranks i of relevant results (within "
    "the top k), divided by the number of relevant documents of the query. Its mean is MAP.",
    formula="AP@k = sum_{i<=k, d_i relevant} P@i / |relevant|",
    kernel=average_precision,
    params=(REL,),
    aliases=("MAP",),
    trec_names=(("map_cut", True), ("map", False)),
    reference="trec_eval map and map_cut.k",
    uses=("grade", "relevant", "relevant_so_far", "precision"),
    explain=explain,
)
