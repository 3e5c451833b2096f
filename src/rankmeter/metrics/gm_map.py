"""GMAP: the geometric mean of AP over queries (trec_eval gm_map).

As trec_eval computes it (m_gm_map.c, meas_avg.c): a query's value is log(max(AP, 0.00001)),
and the aggregate is exp of the mean of those logs, so a query with AP 0 counts as 0.00001
rather than making the mean 0. With ``include_missing`` (trec_eval -c) a judged query missing
from the run has AP 0 and adds log(0.00001), as trec_eval patches its average. The per-query
values are the logarithms (pytrec_eval gives the same), so a paired test of GMAP compares
differences of log AP: the log of the ratio of two systems' GMAPs.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from rankmeter.metrics import ap
from rankmeter.metrics._spec import REL, Breakdown, Metric, MetricSpec, WorkedExample, approx, num

if TYPE_CHECKING:
    from rankmeter.data.arrays import FloatArray
    from rankmeter.metrics._ranked import Ranked

#: trec_eval's MIN_GEO_MEAN: AP below it counts as it.
EPSILON = 0.00001


def _as_ap(metric: Metric) -> Metric:
    """AP with GMAP's parameters (its relevance level)."""
    return replace(metric, spec=ap.SPEC, label="")


def log_ap(ranked: Ranked, metric: Metric) -> FloatArray:
    values: FloatArray = np.log(np.maximum(ap.average_precision(ranked, _as_ap(metric)), EPSILON))
    return values


def explain(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    as_ap = _as_ap(metric)
    average = float(ap.average_precision(ranked, as_ap)[0])
    inner = ap.explain(ranked, as_ap, average)
    floor = " (below 0.00001, so 0.00001)" if average < EPSILON else ""
    steps = (
        *inner.steps,
        f"{metric} for one query = log(max(AP, 0.00001)) = log({num(average)}){floor} = "
        f"{approx(value)}",
        f"over queries {metric} = exp(mean of these logs), the geometric mean of AP: "
        f"{math.exp(value):.4f} for this query alone",
    )
    return replace(inner, steps=steps)


SPEC = MetricSpec(
    name="GMAP",
    description="Geometric mean average precision: the geometric mean of AP over queries "
    "(AP below 0.00001 counts as 0.00001). It rewards systems that do reasonably on every "
    "query over ones that fail some badly. Per query rankmeter gives log AP, as trec_eval "
    "stores it; the value over queries is exp of their mean.",
    formula="GMAP = exp((1/|Q|) sum_q log(max(AP_q, 0.00001)))",
    kernel=log_ap,
    cutoff="none",
    params=(REL,),
    trec_names=(("gm_map", False),),
    aggregate="geometric",
    high=0.0,
    low=math.log(EPSILON),
    reference="Robertson 2006 (GMAP); TREC Robust track; trec_eval gm_map",
    uses=("grade", "relevant", "relevant_so_far", "precision"),
    explain=explain,
    edge_cases=(
        "A query's value is log(max(AP, 0.00001)): from -11.51 (AP 0) to 0 (AP 1); the value "
        "over queries is exp of their mean, trec_eval's gm_map, between 0.00001 and 1.",
        "With --include-missing (trec_eval -c) a judged query missing from the run adds "
        "log(0.00001), as trec_eval patches its average.",
        "Comparisons test the per-query differences of log AP (the log of the ratio of the "
        "two GMAPs), not differences of AP.",
    ),
    example=WorkedExample(
        judgments={"d1": 1, "d2": 1},
        ranking=("d1", "x", "d3"),
        metric="GMAP",
        value="-0.6931",
        working="AP = (1/1) / 2 = 0.5 (d2 is never retrieved), so the query's value is "
        "log 0.5 = -0.6931. With a second query of AP 0.02, GMAP = exp((log 0.5 + log 0.02)/2) "
        "= 0.1, where MAP is 0.26.",
    ),
)
