"""Precision: the fraction of retrieved documents that are relevant."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from rankmeter.metrics._spec import REL, Breakdown, Metric, MetricSpec, approx, plural, ratio

if TYPE_CHECKING:
    from rankmeter.data.arrays import FloatArray
    from rankmeter.metrics._ranked import Ranked


def precision(ranked: Ranked, metric: Metric) -> FloatArray:
    relevant = ranked.relevant(metric.rel(ranked))
    if metric.cutoff is None:
        return ratio(ranked.count(ranked.groups[relevant]), ranked.num_ret)
    return precision_at(ranked, metric, (metric.cutoff,))[:, 0]


def precision_at(ranked: Ranked, metric: Metric, cutoffs: Sequence[int]) -> FloatArray:
    """P@k for every k of ``cutoffs``: shape (n_queries, len(cutoffs))."""
    hits = ranked.totals_within(cutoffs, where=ranked.relevant(metric.rel(ranked)))
    # Divides by k even when fewer than k documents were retrieved, as trec_eval's P.k does.
    return hits / np.asarray(cutoffs, dtype=np.float64)


def explain(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    relevant = ranked.relevant(metric.rel(ranked))
    hits = int((relevant & ranked.within(metric.cutoff)).sum())
    n = len(relevant)
    if metric.cutoff is None:
        if n == 0:
            return Breakdown(steps=(f"no results returned: {metric} = 0",))
        shown = f"{metric} = {hits} relevant / {plural(n, 'result')} returned = {approx(value)}"
        return Breakdown(steps=(shown,))
    k = metric.cutoff
    steps = [f"{metric} = {hits} relevant in the top {k} / {k} = {approx(value)}"]
    if n < k:
        steps.append(
            f"only {plural(n, 'result was', 'results were')} returned; P@k still divides by k "
            "(trec_eval's P.k)"
        )
    return Breakdown(steps=tuple(steps), limit=k)


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
    explain=explain,
    at_cutoffs=precision_at,
)
