"""Judged: how much of the top of the ranking has judgments (how trustworthy the numbers are)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rankmeter.metrics._spec import Breakdown, Metric, MetricSpec, approx, plural, ratio

if TYPE_CHECKING:
    from rankmeter.data.arrays import FloatArray
    from rankmeter.metrics._ranked import Ranked


def judged(ranked: Ranked, metric: Metric) -> FloatArray:
    top = ranked.judged & ranked.within(metric.cutoff)
    count = ranked.count(ranked.groups[top])
    # Of the results actually shown: a list shorter than k is not penalised for its length
    # (that is what P@k is for), as in ir_measures' Judged@k.
    shown = ranked.num_ret if metric.cutoff is None else np.minimum(ranked.num_ret, metric.cutoff)
    return ratio(count, shown)


def explain(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    n = len(ranked.positions)
    count = int((ranked.judged & ranked.within(metric.cutoff)).sum())
    if n == 0:
        steps: tuple[str, ...] = (f"no results returned: {metric} = 0",)
    elif metric.cutoff is None:
        steps = (f"{metric} = {count} judged / {plural(n, 'result')} returned = {approx(value)}",)
    else:
        k = metric.cutoff
        steps = (
            f"{metric} = {count} judged in the top {k} / min({k}, {n} returned) "
            f"= {count}/{min(k, n)} = {approx(value)}",
        )
    return Breakdown(steps=steps, contributes=ranked.judged, limit=metric.cutoff)


SPEC = MetricSpec(
    name="Judged",
    description="Fraction of the top k results that have a judgment (grade >= 0; negative "
    "grades count as unjudged, as in trec_eval). Low values mean the other numbers rest on "
    "guesses. A list shorter than k is judged on the results it has; 0 when it is empty. "
    "Without @k: of all returned results.",
    formula="Judged@k = |judged in top k| / min(k, |retrieved|)",
    kernel=judged,
    reference="Sakai 2007; ir_measures Judged@k",
    uses=("grade", "judged"),
    explain=explain,
)
