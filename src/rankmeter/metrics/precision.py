"""Precision: the fraction of retrieved documents that are relevant."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rankmeter.metrics._spec import REL, Metric, MetricSpec, ratio

if TYPE_CHECKING:
    from rankmeter.data._columns import FloatArray
    from rankmeter.metrics._ranked import Ranked


def precision(ranked: Ranked, metric: Metric) -> FloatArray:
    relevant = ranked.relevant(metric.rel(ranked))
    if metric.cutoff is None:
        return ratio(ranked.count(ranked.groups[relevant]), ranked.num_ret)
    top = relevant & ranked.within(metric.cutoff)
    # Divides by k even when fewer than k documents were retrieved, as trec_eval's P.k does.
    return ranked.count(ranked.groups[top]) / metric.cutoff


SPEC = MetricSpec(
    name="P",
    description="Precision: fraction of the top k results that are relevant "
    "(without @k: of all returned results).",
    formula="P@k = |relevant in top k| / k;  P = |relevant retrieved| / |retrieved|",
    kernel=precision,
    params=(REL,),
    aliases=("Precision",),
    trec_names=(("P", True), ("set_P", False)),
    reference="trec_eval P.k and set_P",
)
