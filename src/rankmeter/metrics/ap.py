"""Average precision (its mean over queries is MAP)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rankmeter.metrics._spec import REL, Metric, MetricSpec, ratio

if TYPE_CHECKING:
    from rankmeter.data._columns import FloatArray
    from rankmeter.metrics._ranked import Ranked


def relevant_so_far(ranked: Ranked, relevant: np.ndarray) -> np.ndarray:
    """For every entry, the number of relevant entries of its query at or above it."""
    running = np.cumsum(relevant, dtype=np.int64)
    before = np.concatenate(([0], running))[ranked.offsets[:-1]]
    counts: np.ndarray = running - before[ranked.groups]
    return counts


def average_precision(ranked: Ranked, metric: Metric) -> FloatArray:
    rel = metric.rel(ranked)
    relevant = ranked.relevant(rel)
    hit = relevant & ranked.within(metric.cutoff)
    precision_at = relevant_so_far(ranked, relevant)[hit] / (ranked.positions[hit] + 1.0)
    # Divided by all relevant documents of the query, retrieved or not (trec_eval map, map_cut).
    return ratio(ranked.total(ranked.groups[hit], precision_at), ranked.num_rel(rel))


SPEC = MetricSpec(
    name="AP",
    description="Average precision: mean of P@i over the ranks i of relevant results (within "
    "the top k), divided by the number of relevant documents of the query. Its mean is MAP.",
    formula="AP@k = sum_{i<=k, d_i relevant} P@i / |relevant|",
    kernel=average_precision,
    params=(REL,),
    aliases=("MAP",),
    trec_names=(("map_cut", True), ("map", False)),
    reference="trec_eval map and map_cut.k",
)
