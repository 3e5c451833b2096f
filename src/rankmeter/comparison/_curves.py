"""metric@k curves: mean nDCG@k, P@k and R@k for k = 1 .. CURVE_DEPTH, per system."""

from __future__ import annotations

import numpy as np

from rankmeter.data._columns import FloatArray
from rankmeter.metrics._ranked import Ranked

#: Metric families drawn as metric@k curves, k = 1 .. CURVE_DEPTH.
CURVE_FAMILIES = ("nDCG", "P", "R")
CURVE_DEPTH = 100


def mean_curves(ranked: Ranked, rel: float) -> dict[str, FloatArray]:
    """Mean nDCG@k, P@k and R@k for k = 1..CURVE_DEPTH from one pass over the top results:
    per-query running sums along the ranks (a query-by-rank matrix), added in rank order as
    the kernels add them, so every point equals what evaluate() gives for that cutoff."""
    from rankmeter.metrics._spec import ratio
    from rankmeter.metrics.ndcg import discount, gain

    n, depth = ranked.n_queries, CURVE_DEPTH
    if n == 0:
        return {family: np.zeros(depth) for family in CURVE_FAMILIES}
    top = ranked.positions < depth
    rows, columns = ranked.groups[top], ranked.positions[top]
    dcg = np.zeros((n, depth))
    dcg[rows, columns] = gain(ranked.grades[top], "linear") * discount(columns.astype(float))
    np.cumsum(dcg, axis=1, out=dcg)
    j_groups = ranked.judgment_groups
    j_positions = np.arange(len(j_groups), dtype=np.int64) - ranked.judgment_offsets[j_groups]
    j_top = j_positions < depth
    ideal = np.zeros((n, depth))
    ideal[j_groups[j_top], j_positions[j_top]] = gain(
        ranked.judgment_grades[j_top], "linear"
    ) * discount(j_positions[j_top].astype(float))
    np.cumsum(ideal, axis=1, out=ideal)
    hits = np.zeros((n, depth))
    hits[rows, columns] = ranked.relevant(rel)[top]
    np.cumsum(hits, axis=1, out=hits)
    cutoffs = np.arange(1, depth + 1, dtype=np.float64)
    num_rel = ranked.num_rel(rel).astype(np.float64)
    ndcg = ratio(dcg.ravel(), ideal.ravel()).reshape(n, depth)
    recall = ratio(hits.ravel(), np.repeat(num_rel, depth)).reshape(n, depth)

    def mean(matrix: FloatArray) -> FloatArray:
        # Rank by rank over queries, each a contiguous row: summed as a 1-D mean is.
        out: FloatArray = np.ascontiguousarray(matrix.T).mean(axis=1)
        return out

    return {"nDCG": mean(ndcg), "P": mean(hits / cutoffs), "R": mean(recall)}
