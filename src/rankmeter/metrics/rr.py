"""Reciprocal rank of the first relevant document (its mean over queries is MRR)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rankmeter.metrics._spec import (
    REL,
    Breakdown,
    Metric,
    MetricSpec,
    WorkedExample,
    approx,
    plural,
    zeros,
)

if TYPE_CHECKING:
    from rankmeter.data.arrays import FloatArray
    from rankmeter.metrics._ranked import Ranked


def first_relevant(ranked: Ranked, metric: Metric) -> tuple[FloatArray, FloatArray]:
    """Query index and 0-based position of each query's first relevant document within the cutoff."""
    hit = ranked.relevant(metric.rel(ranked)) & ranked.within(metric.cutoff)
    groups = ranked.groups[hit]
    positions = ranked.positions[hit]
    first = np.ones(len(groups), dtype=bool)
    first[1:] = groups[1:] != groups[:-1]
    return groups[first], positions[first]


def reciprocal_rank(ranked: Ranked, metric: Metric) -> FloatArray:
    out = zeros(ranked)
    groups, positions = first_relevant(ranked, metric)
    out[groups.astype(np.int64)] = 1.0 / (positions + 1.0)
    return out


def explain(ranked: Ranked, metric: Metric, value: float) -> Breakdown:
    _, positions = first_relevant(ranked, metric)
    where = "" if metric.cutoff is None else f" in the top {metric.cutoff}"
    contributes = np.zeros(len(ranked.positions), dtype=bool)
    if len(positions):
        rank = int(positions[0]) + 1
        contributes[rank - 1] = True
        steps = (f"first relevant result at rank {rank}: {metric} = 1/{rank} = {approx(value)}",)
    else:
        n = len(ranked.positions)
        steps = (f"no relevant result{where} (of {plural(n, 'result')} returned): {metric} = 0",)
    return Breakdown(steps=steps, contributes=contributes, limit=metric.cutoff)


SPEC = MetricSpec(
    name="RR",
    description="Reciprocal rank: 1 / rank of the first relevant result (within the top k), "
    "0 when there is none. Its mean over queries is MRR.",
    formula="RR@k = 1 / min{i <= k : d_i relevant}, or 0",
    kernel=reciprocal_rank,
    params=(REL,),
    aliases=("MRR",),
    trec_names=(("recip_rank", False),),
    reference="Voorhees 1999 (TREC-8 QA); trec_eval recip_rank",
    explain=explain,
    edge_cases=(
        "No relevant result (within the top k): 0.",
        "A query without results but with relevant judgments counts 0 only with "
        "--include-missing (trec_eval -c); otherwise it is left out of the mean.",
        "Only the first relevant result counts: relevant results below it change nothing.",
    ),
    example=WorkedExample(
        judgments={"d1": 0, "d2": 2, "d3": 1},
        ranking=("d1", "d9", "d2", "d3"),
        metric="RR",
        value="0.3333",
        working="d1 is judged non-relevant and d9 unjudged; the first relevant result, d2, "
        "is at rank 3, so RR = 1/3.",
    ),
)
