"""Bpref: how often relevant documents are ranked above judged non-relevant ones."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rankmeter.metrics._spec import REL, Breakdown, Metric, MetricSpec, approx, num, ratio

if TYPE_CHECKING:
    from rankmeter.data.arrays import FloatArray
    from rankmeter.metrics._ranked import Ranked


def bpref(ranked: Ranked, metric: Metric) -> FloatArray:
    rel = metric.rel(ranked)
    relevant = ranked.relevant(rel)
    nonrelevant = ranked.judged & ~relevant
    running = np.cumsum(nonrelevant, dtype=np.int64)
    before_query = np.concatenate(([0], running))[ranked.offsets[:-1]]
    nonrel_above = (running - before_query[ranked.groups])[relevant]
    groups = ranked.groups[relevant]
    big_r = ranked.num_rel(rel)[groups]
    big_n = ranked.num_nonrel(rel)[groups]
    # trec_eval: 1 - min(n above, R) / min(N, R); n above > 0 implies N > 0.
    penalty = ratio(np.minimum(nonrel_above, big_r), np.minimum(big_n, big_r))
    return ratio(ranked.total(groups, 1.0 - penalty), ranked.num_rel(rel))


def explain(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    rel = metric.rel(ranked)
    relevant = ranked.relevant(rel)
    nonrelevant = ranked.judged & ~relevant
    above = np.cumsum(nonrelevant, dtype=np.int64) - nonrelevant
    big_r = int(ranked.num_rel(rel)[0])
    big_n = int(ranked.num_nonrel(rel)[0])
    penalty = ratio(np.minimum(above, big_r), np.full(len(above), min(big_n, big_r)))
    adds = 1.0 - penalty
    steps = [
        f"R = {big_r} relevant judged (grade >= {num(rel)}), N = {big_n} judged non-relevant; "
        "unjudged results are skipped",
    ]
    if big_r == 0:
        steps.append(f"no relevant judgments: {metric} = 0")
    else:
        terms = [
            f"(1 - {min(int(a), big_r)}/{min(big_n, big_r)})" if a else "1"
            for a in above[relevant].tolist()
        ]
        if len(terms) > 12:
            terms = [*terms[:10], f"... ({len(terms) - 11} more)", terms[-1]]
        steps.append("each relevant result adds 1 - min(non-relevant above it, R) / min(N, R)")
        total = float(adds[relevant].sum())
        summed = " + ".join(terms) if terms else "0"
        steps.append(f"{metric} = ({summed}) / {big_r} = {num(total)} / {big_r} = {approx(value)}")
    return Breakdown(
        steps=tuple(steps),
        columns={
            "nonrel_above": above,
            "contribution": [
                a if r else None for a, r in zip(adds.tolist(), relevant.tolist(), strict=True)
            ],
        },
        contributes=ranked.judged,
    )


SPEC = MetricSpec(
    name="Bpref",
    description="Binary preference: for each relevant result, one minus the share of judged "
    "non-relevant documents ranked above it (counting at most R); averaged over the R relevant "
    "documents. Unjudged documents are ignored, so it is robust to incomplete judgments.",
    formula="Bpref = (1/R) sum_{r relevant retrieved} (1 - min(|n above r|, R) / min(N, R))",
    kernel=bpref,
    cutoff="none",
    params=(REL,),
    trec_names=(("bpref", False),),
    reference="Buckley & Voorhees 2004; trec_eval bpref",
    uses=("grade", "judged", "relevant", "nonrel_above", "contribution"),
    explain=explain,
)
