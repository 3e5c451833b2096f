"""Recall: the fraction of relevant documents that were retrieved (coverage)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rankmeter.metrics._spec import REL, Metric, MetricSpec, ratio

if TYPE_CHECKING:
    from rankmeter.data._columns import FloatArray
    from rankmeter.metrics._ranked import Ranked


def recall(ranked: Ranked, metric: Metric) -> FloatArray:
    rel = metric.rel(ranked)
    top = ranked.relevant(rel) & ranked.within(metric.cutoff)
    return ratio(ranked.count(ranked.groups[top]), ranked.num_rel(rel))


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
)
