"""Exact nearest neighbours: the reference an approximate index is measured against.

Scores follow one convention everywhere in :mod:`rankmeter.vector`: **higher is better**, so
they can be used as the scores of a :class:`rankmeter.Run` as they are.

========  ====================================================================
metric    score of query ``q`` and corpus vector ``x``
========  ====================================================================
``ip``    inner product ``q · x``
``cosine``  cosine similarity ``q · x / (‖q‖ ‖x‖)``
``l2``    negative squared Euclidean distance ``-‖q - x‖²``
========  ====================================================================

Equal scores are ordered by corpus id ascending, so the result never depends on how the work
was split into blocks. Scores are computed in float64 from the given vectors.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter._validate import choice, integer
from rankmeter.errors import RankmeterError

__all__ = ["METRICS", "exact_search", "score_pairs"]

#: The similarity measures understood by :func:`exact_search` and the ANN indexes.
METRICS = ("ip", "l2", "cosine")

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Bytes of float64 scores held at once by one block of :func:`exact_search`.
_BLOCK_BYTES = 32 * 2**20


def check_metric(metric: str) -> str:
    """The metric, or an error listing the valid ones."""
    return choice("metric", metric, METRICS)


def _matrix(vectors: Any, what: str) -> FloatArray:
    array = np.asarray(vectors)
    if array.ndim != 2:
        raise RankmeterError(
            f"{what}: expected a 2-D array (vectors x dimensions), got shape {array.shape}"
        )
    if array.dtype.kind not in "fiu":
        raise RankmeterError(f"{what}: expected numbers, got dtype {array.dtype}")
    out = np.ascontiguousarray(array, dtype=np.float64)
    if not np.isfinite(out).all():
        row = int(np.argwhere(~np.isfinite(out))[0, 0])
        raise RankmeterError(f"{what}: row {row} is not finite (NaN or infinity)")
    return out


def normalized(vectors: FloatArray, what: str) -> FloatArray:
    """Rows scaled to unit length (for cosine); a zero row cannot be, and is an error."""
    norms = np.linalg.norm(vectors, axis=1)
    zero = np.flatnonzero(norms == 0)
    if zero.size:
        raise RankmeterError(
            f"{what}: row {int(zero[0])} is a zero vector, which has no direction: "
            "cosine similarity is undefined for it (use metric 'ip' or 'l2', or drop the row)"
        )
    return np.asarray(vectors / norms[:, None], dtype=vectors.dtype)


def _block_scores(
    corpus: FloatArray, corpus_sq: FloatArray, queries: FloatArray, metric: str
) -> FloatArray:
    scores: FloatArray = queries @ corpus.T
    if metric == "l2":
        # -‖q - x‖² = 2 q·x - ‖x‖² - ‖q‖²
        scores *= 2.0
        scores -= corpus_sq[None, :]
        scores -= np.einsum("ij,ij->i", queries, queries)[:, None]
    return scores


def _top_in_block(scores: FloatArray, k: int) -> tuple[FloatArray, IntArray]:
    """Each row's k best columns, best first, equal scores by column ascending."""
    rows, cols = scores.shape
    if k >= cols:
        order = np.lexsort((np.broadcast_to(np.arange(cols), scores.shape), -scores), axis=1)
        return np.take_along_axis(scores, order, axis=1), order.astype(np.int64)
    # The k-th best score of each row; every column above it is in, and of the columns equal
    # to it, the lowest ids fill the remaining places.
    kth = np.partition(scores, cols - k, axis=1)[:, cols - k]
    above = scores > kth[:, None]
    tied = scores == kth[:, None]
    need = k - above.sum(axis=1)
    chosen = above | (tied & (np.cumsum(tied, axis=1, dtype=np.int32) <= need[:, None]))
    columns = np.nonzero(chosen)[1].reshape(rows, k)  # ascending within each row
    picked = np.take_along_axis(scores, columns, axis=1)
    order = np.argsort(-picked, axis=1, kind="stable")
    return np.take_along_axis(picked, order, axis=1), np.take_along_axis(columns, order, axis=1)


def exact_search(
    corpus: Any,
    queries: Any,
    k: int,
    metric: str = "ip",
    *,
    block_bytes: int = _BLOCK_BYTES,
) -> tuple[FloatArray, IntArray]:
    """The exact ``k`` nearest corpus vectors of every query, by brute force in blocks.

    Parameters
    ----------
    corpus : array of shape (n, d)
        The vectors searched; a vector's id is its row number.
    queries : array of shape (m, d)
    k : int
        How many neighbours per query (>= 1). Where ``k > n``, the missing places have id -1
        and score ``-inf``, as an index reports results it does not have.
    metric : {"ip", "l2", "cosine"}
        Inner product, (negative squared) Euclidean distance, or cosine similarity.
    block_bytes : int
        About how many bytes of scores are held at once: memory stays bounded whatever the
        sizes of corpus and queries.

    Returns
    -------
    scores : float64 array of shape (m, k)
        Best first; higher is better (``l2`` scores are ``-‖q - x‖²``).
    ids : int64 array of shape (m, k)
        Corpus row numbers; equal scores are ordered by id ascending.

    Examples
    --------
    Two documents at the same distance from the query: the lower id comes first.

    >>> corpus = [[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]
    >>> scores, ids = exact_search(corpus, [[0.0, 2.0]], k=2, metric="ip")
    >>> ids.tolist(), scores.tolist()
    ([[0, 2]], [[2.0, 2.0]])
    >>> exact_search(corpus, [[0.0, 2.0]], k=2, metric="l2")[0].tolist()
    [[-1.0, -1.0]]
    """
    check_metric(metric)
    k = integer("k", k, low=1, what="neighbours per query")
    base = _matrix(corpus, "corpus")
    ask = _matrix(queries, "queries")
    if base.shape[1] != ask.shape[1]:
        raise RankmeterError(
            f"queries have {ask.shape[1]} dimensions but the corpus has {base.shape[1]}"
        )
    if metric == "cosine":
        base, ask = normalized(base, "corpus"), normalized(ask, "queries")
        metric = "ip"
    n, m = base.shape[0], ask.shape[0]
    found = min(k, n)
    out_scores = np.full((m, k), -np.inf)
    out_ids = np.full((m, k), -1, dtype=np.int64)
    if n == 0 or m == 0:
        return out_scores, out_ids
    corpus_sq = np.einsum("ij,ij->i", base, base)
    # A block is (queries x corpus columns) of float64; columns at least k so a block holds
    # a full candidate list, queries as many as fit in the budget.
    cols = min(n, max(found, block_bytes // 8 // max(min(m, 256), 1)))
    rows = max(1, min(m, block_bytes // 8 // cols))
    for q0 in range(0, m, rows):
        q1 = min(m, q0 + rows)
        best_s: FloatArray | None = None
        best_i: IntArray | None = None
        for c0 in range(0, n, cols):
            c1 = min(n, c0 + cols)
            block = _block_scores(base[c0:c1], corpus_sq[c0:c1], ask[q0:q1], metric)
            s, i = _top_in_block(block, min(found, c1 - c0))
            i = i + c0
            if best_s is None or best_i is None:
                best_s, best_i = s, i
                continue
            both_s = np.concatenate([best_s, s], axis=1)
            both_i = np.concatenate([best_i, i], axis=1)
            order = np.lexsort((both_i, -both_s), axis=1)[:, :found]
            best_s = np.take_along_axis(both_s, order, axis=1)
            best_i = np.take_along_axis(both_i, order, axis=1)
        assert best_s is not None and best_i is not None  # n > 0: at least one block
        out_scores[q0:q1, :found] = best_s
        out_ids[q0:q1, :found] = best_i
    return out_scores, out_ids


def score_pairs(
    corpus: Any, queries: Any, ids: Any, metric: str = "ip", *, block_bytes: int = _BLOCK_BYTES
) -> FloatArray:
    """The exact score of each query with each of its listed corpus ids.

    ``ids`` has shape (m, k): row ``i`` lists corpus ids for query ``i`` (-1 = none, scored
    ``-inf``). Used to check an approximate index's results with exact arithmetic, whatever
    (possibly compressed) distances the index itself reported.

    >>> score_pairs([[1.0, 0.0], [0.0, 3.0]], [[1.0, 1.0]], [[1, -1, 0]], "l2").tolist()
    [[-5.0, -inf, -1.0]]
    """
    check_metric(metric)
    base = _matrix(corpus, "corpus")
    ask = _matrix(queries, "queries")
    wanted = np.asarray(ids, dtype=np.int64)
    if wanted.ndim != 2 or wanted.shape[0] != ask.shape[0]:
        raise RankmeterError(
            f"ids must have one row per query ({ask.shape[0]}), got shape {wanted.shape}"
        )
    if metric == "cosine":
        base, ask = normalized(base, "corpus"), normalized(ask, "queries")
    missing = (wanted < 0) | (wanted >= base.shape[0])
    safe = np.where(missing, 0, wanted)
    out = np.empty(wanted.shape, dtype=np.float64)
    per_query = max(1, wanted.shape[1] * base.shape[1] * 8)
    rows = max(1, block_bytes // per_query)
    for q0 in range(0, ask.shape[0], rows):
        q1 = min(ask.shape[0], q0 + rows)
        picked = base[safe[q0:q1]]  # (rows, k, d)
        query = ask[q0:q1, None, :]
        if metric == "l2":
            diff = picked - query
            out[q0:q1] = -np.einsum("ijk,ijk->ij", diff, diff)
        else:
            out[q0:q1] = np.einsum("ijk,ijk->ij", picked, query)
    out[missing] = -np.inf
    return out
