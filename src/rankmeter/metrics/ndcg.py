"""DCG and nDCG: graded gain discounted by rank, normalised by the ideal ordering."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rankmeter.metrics._spec import Metric, MetricSpec, Param, ratio

if TYPE_CHECKING:
    from rankmeter.data._columns import FloatArray
    from rankmeter.metrics._ranked import Ranked

GAIN = Param(
    "gain",
    "choice",
    "linear",
    "gain of a grade g: linear = g (trec_eval), exp = 2^g - 1 (Burges et al.)",
    choices=("linear", "exp"),
)


def gain(grades: FloatArray, kind: str) -> FloatArray:
    """Gain of each grade; grades <= 0 (and unjudged documents) gain nothing."""
    positive = np.maximum(grades, 0.0)
    return np.exp2(positive) - 1.0 if kind == "exp" else positive


def discount(positions: FloatArray) -> FloatArray:
    """1 / log2(rank + 1) for 0-based positions (rank = position + 1)."""
    return 1.0 / np.log2(positions + 2.0)


def dcg_values(ranked: Ranked, metric: Metric) -> FloatArray:
    top = ranked.within(metric.cutoff)
    g = gain(ranked.grades[top], metric.get("gain"))
    return ranked.total(ranked.groups[top], g * discount(ranked.positions[top]))


def ideal_dcg_values(ranked: Ranked, metric: Metric) -> FloatArray:
    groups = ranked.judgment_groups
    positions = np.arange(len(groups), dtype=np.int64) - ranked.judgment_offsets[groups]
    keep = np.ones(len(groups), dtype=bool) if metric.cutoff is None else positions < metric.cutoff
    g = gain(ranked.judgment_grades[keep], metric.get("gain"))
    return ranked.total(groups[keep], g * discount(positions[keep]))


def ndcg(ranked: Ranked, metric: Metric) -> FloatArray:
    return ratio(dcg_values(ranked, metric), ideal_dcg_values(ranked, metric))


NDCG = MetricSpec(
    name="nDCG",
    description="Normalised discounted cumulative gain over the top k: DCG divided by the DCG of "
    "the ideal ordering of the query's judgments. Uses raw grades (not --rel). 0 when no "
    "judgment has a positive grade.",
    formula="nDCG@k = DCG@k / IDCG@k;  DCG@k = sum_{i<=k} gain(g_i) / log2(i + 1)",
    kernel=ndcg,
    params=(GAIN,),
    aliases=("NDCG",),
    trec_names=(("ndcg_cut", True), ("ndcg", False)),
    reference="Järvelin & Kekäläinen 2002; trec_eval ndcg and ndcg_cut.k",
    uses=("grade", "gain", "discount"),
)

DCG = MetricSpec(
    name="DCG",
    description="Discounted cumulative gain over the top k (not normalised). Uses raw grades.",
    formula="DCG@k = sum_{i<=k} gain(g_i) / log2(i + 1)",
    kernel=dcg_values,
    params=(GAIN,),
    reference="Järvelin & Kekäläinen 2002",
    uses=("grade", "gain", "discount"),
)

SPECS = (NDCG, DCG)
