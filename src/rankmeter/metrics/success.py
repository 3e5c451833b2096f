"""Success: whether any relevant document was found in the top k."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rankmeter.metrics._spec import REL, Metric, MetricSpec

if TYPE_CHECKING:
    from rankmeter.data._columns import FloatArray
    from rankmeter.metrics._ranked import Ranked


def success(ranked: Ranked, metric: Metric) -> FloatArray:
    hit = ranked.relevant(metric.rel(ranked)) & ranked.within(metric.cutoff)
    return (ranked.count(ranked.groups[hit]) > 0).astype(float)


SPEC = MetricSpec(
    name="Success",
    description="Success (hit rate): 1 if a relevant result is in the top k, else 0.",
    formula="Success@k = 1 if |relevant in top k| > 0 else 0",
    kernel=success,
    params=(REL,),
    aliases=("Hit", "HitRate"),
    trec_names=(("success", True),),
    reference="trec_eval success.k",
)
