"""Success: whether any relevant document was found in the top k."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rankmeter.metrics._spec import REL, Breakdown, Metric, MetricSpec

if TYPE_CHECKING:
    from rankmeter.data.arrays import FloatArray
    from rankmeter.metrics._ranked import Ranked


def success(ranked: Ranked, metric: Metric) -> FloatArray:
    hit = ranked.relevant(metric.rel(ranked)) & ranked.within(metric.cutoff)
    return (ranked.count(ranked.groups[hit]) > 0).astype(float)


def explain(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    hit = ranked.relevant(metric.rel(ranked)) & ranked.within(metric.cutoff)
    where = "returned" if metric.cutoff is None else f"in the top {metric.cutoff}"
    contributes = np.zeros(len(hit), dtype=bool)
    if hit.any():
        first = int(np.argmax(hit))
        contributes[first] = True
        steps = (f"a relevant result at rank {first + 1} is {where}: {metric} = 1",)
    else:
        steps = (f"no relevant result {where}: {metric} = 0",)
    return Breakdown(steps=steps, contributes=contributes, limit=metric.cutoff)


SPEC = MetricSpec(
    name="Success",
    description="Success (hit rate): 1 if a relevant result is in the top k, else 0.",
    formula="Success@k = 1 if |relevant in top k| > 0 else 0",
    kernel=success,
    params=(REL,),
    aliases=("Hit", "HitRate"),
    trec_names=(("success", True),),
    reference="trec_eval success.k",
    explain=explain,
)
