"""Judged: how much of the top of the ranking has judgments (how trustworthy the numbers are)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rankmeter.metrics._spec import Metric, MetricSpec, ratio

if TYPE_CHECKING:
    from rankmeter.data._columns import FloatArray
    from rankmeter.metrics._ranked import Ranked


def judged(ranked: Ranked, metric: Metric) -> FloatArray:
    top = ranked.judged & ranked.within(metric.cutoff)
    count = ranked.count(ranked.groups[top])
    if metric.cutoff is None:
        return ratio(count, ranked.num_ret)
    return count / metric.cutoff


SPEC = MetricSpec(
    name="Judged",
    description="Fraction of the top k results that have a judgment (grade >= 0; negative "
    "grades count as unjudged, as in trec_eval). Low values mean the other numbers rest on "
    "guesses. Without @k: of all returned results.",
    formula="Judged@k = |judged in top k| / k",
    kernel=judged,
    reference="Sakai 2007; ir_measures Judged@k",
    uses=("grade", "judged"),
)
