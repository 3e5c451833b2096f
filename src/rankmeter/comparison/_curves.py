"""metric@k curves: mean nDCG@k, P@k and R@k for k = 1 .. CURVE_DEPTH, per system.

Computed by the metrics themselves (:meth:`rankmeter.metrics.Metric.compute_at`, every cutoff
in one pass over the top ranks), so each point is exactly what :func:`rankmeter.evaluate`
gives for that cutoff: there is no second definition of a metric here.
"""

from __future__ import annotations

import numpy as np

from rankmeter.data.arrays import FloatArray
from rankmeter.metrics import Ranked, parse_metric

#: Metric families drawn as metric@k curves, k = 1 .. CURVE_DEPTH.
CURVE_FAMILIES = ("nDCG", "P", "R")
CURVE_DEPTH = 100


def mean_curves(ranked: Ranked) -> dict[str, FloatArray]:
    """``{family: mean of the family@k over the queries, k = 1..CURVE_DEPTH}`` (the metrics'
    defaults: linear gain for nDCG, the evaluation's ``rel`` for P and R)."""
    cutoffs = range(1, CURVE_DEPTH + 1)
    if ranked.n_queries == 0:
        return {family: np.zeros(CURVE_DEPTH) for family in CURVE_FAMILIES}
    out = {}
    for family in CURVE_FAMILIES:
        per_query = parse_metric(family).compute_at(ranked, cutoffs)
        # Cutoff by cutoff over the queries, each a contiguous row: summed as a 1-D mean is,
        # so a point is bit for bit the mean evaluate() reports.
        out[family] = np.ascontiguousarray(per_query.T).mean(axis=1)
    return out
