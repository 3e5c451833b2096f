"""R-precision: precision at rank R, where R is the number of relevant documents."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rankmeter.metrics._spec import REL, Breakdown, Metric, MetricSpec, approx, num, ratio

if TYPE_CHECKING:
    from rankmeter.data.arrays import FloatArray
    from rankmeter.metrics._ranked import Ranked


def r_precision(ranked: Ranked, metric: Metric) -> FloatArray:
    rel = metric.rel(ranked)
    num_rel = ranked.num_rel(rel)
    top = ranked.relevant(rel) & (ranked.positions < num_rel[ranked.groups])
    return ratio(ranked.count(ranked.groups[top]), num_rel)


def explain(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    rel = metric.rel(ranked)
    big_r = int(ranked.num_rel(rel)[0])
    if big_r == 0:
        why = f"the query has no relevant judgments (grade >= {num(rel)}), so R = 0: {metric} = 0"
        return Breakdown(steps=(why,))
    hits = int((ranked.relevant(rel) & (ranked.positions < big_r)).sum())
    steps = (
        f"R = {big_r} relevant judged (grade >= {num(rel)}), so R-Prec looks at the top {big_r}",
        f"{metric} = {hits} relevant in the top {big_r} / {big_r} = {approx(value)}",
    )
    return Breakdown(steps=steps, limit=big_r)


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
    explain=explain,
)
