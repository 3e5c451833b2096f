"""Whether a run's scores fall as its rank grows (:func:`score_order`), read from its rows as
written."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from rankmeter.io.rows import RunRows
from rankmeter.results import ScoreOrder

__all__ = ["clearly_rising", "score_order"]


def score_order(rows: RunRows, query_codes: npt.NDArray[np.int64] | None = None) -> ScoreOrder:
    """Whether a run's scores fall as its rank grows.

    The written ranking of a query is its rank column's order (ascending; equal ranks in
    file order) when every rank of the run is a whole number, else the order of its lines (a
    rank column of fractions holds scores: the columns are swapped). Along it, each step to
    the next result with a different score either rises or falls; a query *rises* when it
    has more rising steps than falling ones. Queries whose scores are all equal say nothing.
    The run is *reversed* when more than half of the other queries rise.

    >>> from rankmeter.io.rows import read_run_rows
    >>> rows = read_run_rows({"q1": {"a": 1.0, "b": 2.0}, "q2": {"c": 3.0, "d": 2.0}})
    >>> order = score_order(rows)
    >>> order.queries, order.rising, order.reversed
    (2, 1, False)
    """
    if query_codes is None:
        query_codes = _query_codes(rows)[0]
    scores = _scores(rows)
    n = len(scores)
    position = np.arange(n, dtype=np.int64)
    ranks = rows.ranks
    whole = ranks is not None and bool(np.all(np.isfinite(ranks) & (ranks == np.floor(ranks))))
    fractions = ranks is not None and not whole and bool(np.any(np.isfinite(ranks)))
    if whole and ranks is not None:
        order = np.lexsort((position, ranks, query_codes))
        by = "rank column"
    else:
        order = np.lexsort((position, query_codes))
        by = "file order"
    q, s = query_codes[order], scores[order]
    same = q[1:] == q[:-1]
    steps = np.sign(s[1:] - s[:-1])
    n_queries = int(query_codes.max(initial=-1)) + 1
    up = np.bincount(q[1:][same & (steps > 0)], minlength=n_queries)
    down = np.bincount(q[1:][same & (steps < 0)], minlength=n_queries)
    moving = (up + down) > 0
    return ScoreOrder(by, int(moving.sum()), int(clearly_rising(up, down).sum()), fractions)


def clearly_rising(up: npt.NDArray[np.int64], down: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """Which queries *rise*: at least three in four of their steps rise (``up``: rising steps,
    ``down``: falling ones, per query). A query written in no order (a shuffled file, rank
    column all 0) has about as many of each and does not count, however many queries there
    are; one written lowest score first has only rising steps."""
    return (up > 0) & (up >= 3 * down)


def _query_codes(rows: RunRows) -> tuple[npt.NDArray[np.int64], list[str]]:
    """Each row's query as a code, and the query id of each code."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from rankmeter.data.arrays import numpy_of

    ids = rows.query_ids
    if not isinstance(ids, (pa.Array, pa.ChunkedArray)):
        ids = pa.array([str(q) for q in ids], type=pa.string())
    if not pa.types.is_string(ids.type):
        ids = pc.cast(ids, pa.string())
    encoded = pc.dictionary_encode(ids)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.unify_dictionaries().combine_chunks()
    codes = numpy_of(encoded.indices).astype(np.int64)
    return codes, [str(q) for q in encoded.dictionary.to_pylist()]


def _scores(rows: RunRows) -> npt.NDArray[np.float64]:
    """The rows' scores as float64, in written order (the Run was built from them, so they
    are numbers)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from rankmeter.data.arrays import numpy_of

    scores = rows.scores
    if not isinstance(scores, (pa.Array, pa.ChunkedArray)):
        return np.asarray(scores, dtype=np.float64)
    return np.asarray(numpy_of(pc.cast(scores, pa.float64())), dtype=np.float64)
