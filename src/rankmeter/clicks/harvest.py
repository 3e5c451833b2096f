"""Position bias from interventions the log already holds (intervention harvesting).

When the same (query, document) pair was shown at rank k in some requests and at rank k + 1 in
others (two rankers in an A/B test, a ranker that changed, deliberate swaps), the ratio of its
click-through rates at the two ranks is, under the position-based model, the ratio of the
ranks' propensities: ``E[ctr_qd,k] = theta_k * alpha_qd``. Agarwal, Zaitsev, Wang, Li, Najork
and Joachims (WSDM 2019, "Estimating Position Bias without Intrusive Interventions") pool such
pairs; here, for each pair of adjacent ranks, over the pairs seen at both,

    theta_{k+1} / theta_k = sum_qd w_qd ctr_qd,k+1 / sum_qd w_qd ctr_qd,k,
    w_qd = n_qd,k n_qd,k+1 / (n_qd,k + n_qd,k+1)

(more weight where both rates rest on many impressions), chained from rank 1. No click model is
fitted: the estimate needs no assumption about attractiveness beyond PBM's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rankmeter._validate import integer
from rankmeter.clicks.log import click_log, readonly
from rankmeter.data.arrays import FloatArray
from rankmeter.errors import PolicyError

__all__ = ["harvest_propensities"]


def harvest_propensities(log: Any, *, min_impressions: int = 1) -> FloatArray:
    """Propensities per rank (normalised to rank 1) harvested from pairs shown at adjacent
    ranks (see the module docstring).

    Parameters
    ----------
    log : a click log, as :func:`rankmeter.clicks.fit` takes it
    min_impressions : int
        A pair counts for ranks k and k + 1 when shown at least this often at each.

    Returns
    -------
    ndarray of float, one per rank (the first is 1)

    Raises
    ------
    PolicyError
        When some adjacent ranks share no pair with clicks: the log holds no intervention
        there, and position bias cannot be told apart from relevance.

    Examples
    --------
    Document a is clicked half the time at rank 1 and a quarter of the time at rank 2:

    >>> import pyarrow as pa
    >>> rows = [("r1", "a", 1, 1), ("r2", "a", 1, 0), ("r3", "a", 2, 1), ("r4", "a", 2, 0),
    ...         ("r5", "a", 2, 0), ("r6", "a", 2, 0)]
    >>> log = pa.table({"request_id": [r[0] for r in rows], "query_id": ["q"] * 6,
    ...     "doc_id": [r[1] for r in rows], "position": [r[2] for r in rows],
    ...     "clicked": [r[3] for r in rows]})
    >>> harvest_propensities(log).tolist()
    [1.0, 0.5]
    """
    min_impressions = integer(
        "min_impressions", min_impressions, low=1, what="impressions at each rank of a pair"
    )
    data = click_log(log)
    shown = data.shown
    depth = data.depth
    _, ranks = np.nonzero(shown)
    key = data.pairs[shown] * depth + ranks
    cells = data.n_pairs * depth
    seen = np.bincount(key, minlength=cells).reshape(data.n_pairs, depth)
    clicks = np.bincount(key, data.clicks[shown], cells).reshape(data.n_pairs, depth)
    propensities = np.ones(depth)
    for k in range(depth - 1):
        both = (seen[:, k] >= min_impressions) & (seen[:, k + 1] >= min_impressions)
        n_k, n_next = seen[both, k], seen[both, k + 1]
        weight = n_k * n_next / (n_k + n_next)
        above = (weight * clicks[both, k] / np.maximum(n_k, 1)).sum()
        below = (weight * clicks[both, k + 1] / np.maximum(n_next, 1)).sum()
        if above <= 0:
            raise PolicyError(
                f"no (query, doc) pair is shown (and clicked) at both rank {k + 1} and rank "
                f"{k + 2} (min_impressions={min_impressions}): the log holds no intervention "
                "there, so position bias cannot be told apart from relevance"
            )
        propensities[k + 1] = propensities[k] * below / above
    return readonly(propensities)
