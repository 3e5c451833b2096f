"""Recall: the fraction of relevant documents that were retrieved (coverage)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rankmeter.metrics._spec import REL, Breakdown, Metric, MetricSpec, approx, num, plural, ratio

if TYPE_CHECKING:
    from rankmeter.data.arrays import FloatArray
    from rankmeter.metrics._ranked import Ranked


def recall(ranked: Ranked, metric: Metric) -> FloatArray:
    cutoffs = None if metric.cutoff is None else (metric.cutoff,)
    return recall_at(ranked, metric, cutoffs)[:, 0]


def recall_at(ranked: Ranked, metric: Metric, cutoffs: Sequence[int] | None) -> FloatArray:
    """R@k for every k of ``cutoffs`` (None: anywhere in the list): (n_queries, len(cutoffs))."""
    rel = metric.rel(ranked)
    hits = ranked.totals_within(cutoffs, where=ranked.relevant(rel))
    return ratio(hits, ranked.num_rel(rel)[:, None])


def explain(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    rel = metric.rel(ranked)
    hits = int((ranked.relevant(rel) & ranked.within(metric.cutoff)).sum())
    num_rel = int(ranked.num_rel(rel)[0])
    where = "returned" if metric.cutoff is None else f"in the top {metric.cutoff}"
    if num_rel == 0:
        steps = [f"the query has no relevant judgments (grade >= {num(rel)}): {metric} = 0"]
    else:
        steps = [
            f"{metric} = {hits} relevant {where} / {num_rel} relevant judged = {approx(value)}"
        ]
        if hits < num_rel:
            steps.append(f"{plural(num_rel - hits, 'relevant document')} not {where}")
    return Breakdown(steps=tuple(steps), limit=metric.cutoff)


SPEC = MetricSpec(
    name="R",
    description="Recall: fraction of the query's relevant documents found in the top k "
    "(without @k: anywhere in the returned list). 0 when the query has no relevant documents.",
    formula="R@k = |relevant in top k| / |relevant|",
    kernel=recall,
    params=(REL,),
    aliases=("Recall",),
    trec_names=(("recall", True), ("set_recall", False)),
    reference="trec_eval recall.k and set_recall",
    explain=explain,
    at_cutoffs=recall_at,
)
