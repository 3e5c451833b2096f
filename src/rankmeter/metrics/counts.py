"""Counts: results returned, relevant documents, relevant documents returned (summed, not averaged)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rankmeter.metrics._spec import REL, Breakdown, Metric, MetricSpec, num, plural

if TYPE_CHECKING:
    from rankmeter.data.arrays import FloatArray
    from rankmeter.metrics._ranked import Ranked


def num_ret(ranked: Ranked, metric: Metric) -> FloatArray:
    return ranked.num_ret.astype(float)


def num_rel(ranked: Ranked, metric: Metric) -> FloatArray:
    return ranked.num_rel(metric.rel(ranked)).astype(float)


def num_rel_ret(ranked: Ranked, metric: Metric) -> FloatArray:
    hit = ranked.relevant(metric.rel(ranked)) & ranked.within(metric.cutoff)
    return ranked.count(ranked.groups[hit]).astype(float)


def explain_num_ret(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    n = len(ranked.positions)
    return Breakdown(
        steps=(f"{metric} = {plural(n, 'result')} returned = {n}",),
        contributes=[False] * n,
        quiet="each counts as one result returned",
    )


def explain_num_rel(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    rel = metric.rel(ranked)
    count = int(ranked.num_rel(rel)[0])
    judged = len(ranked.judgment_grades)
    return Breakdown(
        steps=(
            f"{metric} = {count} of the query's {plural(judged, 'judgment')} have grade >= "
            f"{num(rel)} (retrieved or not) = {count}",
        ),
    )


def explain_num_rel_ret(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    count = int((ranked.relevant(metric.rel(ranked)) & ranked.within(metric.cutoff)).sum())
    where = "returned" if metric.cutoff is None else f"in the top {metric.cutoff}"
    return Breakdown(steps=(f"{metric} = relevant results {where} = {count}",), limit=metric.cutoff)


NUM_RET = MetricSpec(
    name="NumRet",
    description="Number of results returned. Sums over queries.",
    formula="NumRet = |retrieved|",
    kernel=num_ret,
    cutoff="none",
    trec_names=(("num_ret", False),),
    aggregate="sum",
    integer=True,
    high=None,
    reference="trec_eval num_ret",
    uses=("grade",),
    explain=explain_num_ret,
)
NUM_REL = MetricSpec(
    name="NumRel",
    description="Number of relevant documents in the judgments (retrieved or not). Sums over "
    "queries.",
    formula="NumRel = |relevant|",
    kernel=num_rel,
    cutoff="none",
    params=(REL,),
    trec_names=(("num_rel", False),),
    aggregate="sum",
    integer=True,
    high=None,
    reference="trec_eval num_rel",
    explain=explain_num_rel,
)
NUM_REL_RET = MetricSpec(
    name="NumRelRet",
    description="Number of relevant documents returned (within the top k). Sums over queries.",
    formula="NumRelRet@k = |relevant in top k|",
    kernel=num_rel_ret,
    params=(REL,),
    trec_names=(("num_rel_ret", False),),
    aggregate="sum",
    integer=True,
    high=None,
    reference="trec_eval num_rel_ret",
    explain=explain_num_rel_ret,
)

SPECS = (NUM_RET, NUM_REL, NUM_REL_RET)
