"""R-precision: precision at rank R, where R is the number of relevant documents."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rankmeter.metrics._spec import REL, Metric, MetricSpec, ratio

if TYPE_CHECKING:
    from rankmeter.data._columns import FloatArray
    from rankmeter.metrics._ranked import Ranked


def r_precision(ranked: Ranked, metric: Metric) -> FloatArray:
    rel = metric.rel(ranked)
    num_rel = ranked.num_rel(rel)
    top = ranked.relevant(rel) & (ranked.positions < num_rel[ranked.groups])
    return ratio(ranked.count(ranked.groups[top]), num_rel)


SPEC = MetricSpec(
    name="R-Prec",
    description="R-precision: fraction of the top R results that are relevant, where R is the "
    "query's number of relevant documents. 0 when R = 0.",
    formula="R-Prec = |relevant in top R| / R",
    kernel=r_precision,
    cutoff="none",
    params=(REL,),
    aliases=("RPrec", "R-Precision", "Rprec"),
    trec_names=(("Rprec", False),),
    reference="trec_eval Rprec",
)
