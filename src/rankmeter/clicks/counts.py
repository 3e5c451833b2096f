"""A click log's sufficient statistics, aggregated where the log is.

PBM, UBM and the cascade model's closed form see an impression only through its (query, doc)
pair, its rank, the rank of the last click above it in its request, and whether it was
clicked: EM's expected examinations and attractions of two impressions that agree on those
four are equal. So these models, and the propensity-weighted click labels, run on the number
of impressions per distinct (pair, rank, previous click, clicked) — one pass over the log,
a ``GROUP BY`` in the engine when the log is an Ibis table (DuckDB or Spark) — instead of on
the log itself. A log of 10 million impressions over 50,000 pairs and 10 ranks becomes at
most a few hundred thousand weighted cells; only those travel to Python.

DBN's posteriors depend on the whole sequence of a request's clicks, so it keeps the request
by position matrix (:class:`~rankmeter.clicks.ClickLog`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter.clicks.log import ClickLog, click_log, readonly
from rankmeter.data.arrays import IntArray
from rankmeter.errors import FormatError

__all__ = ["ClickCounts", "click_counts"]


@dataclass(frozen=True, eq=False)
class ClickCounts:
    """Impressions counted per (pair, rank, previous click, clicked): build it with
    :func:`click_counts`.

    Cell ``i`` says that ``count[i]`` impressions showed pair ``pair[i]`` at rank
    ``rank[i] + 1``, below a last click at rank ``previous[i]`` (0: no click above it in its
    request), and were clicked (``clicked[i]``) or not. Pairs are numbered in the order of
    (query_id, doc_id) as text, ``query_ids[p]`` and ``doc_ids[p]`` naming pair ``p``; cells
    are sorted by (pair, rank, previous, clicked). ``sessions`` counts the requests that
    showed something, ``depth`` is the deepest position shown.

    Examples
    --------
    >>> import pyarrow as pa
    >>> counts = click_counts(pa.table({"request_id": ["r1", "r1", "r2"],
    ...     "query_id": ["q", "q", "q"], "doc_id": ["b", "a", "a"], "position": [1, 2, 1],
    ...     "clicked": [True, False, False]}))
    >>> counts
    ClickCounts(2 requests, 3 impressions, 2 (query, doc) pairs, 3 cells, 2 positions)
    >>> counts.doc_ids.to_pylist(), counts.rank.tolist(), counts.previous.tolist()
    (['a', 'b'], [0, 1, 0], [0, 1, 0])
    """

    source: str
    pair: IntArray
    rank: IntArray
    previous: IntArray
    clicked: npt.NDArray[np.bool_]
    count: IntArray
    query_ids: Any  # pyarrow string array, one per pair
    doc_ids: Any  # pyarrow string array, one per pair
    sessions: int
    depth: int

    @property
    def n_pairs(self) -> int:
        return len(self.query_ids)

    @property
    def n_sessions(self) -> int:
        """The requests that showed something (as :attr:`ClickLog.n_sessions`)."""
        return self.sessions

    @property
    def n_impressions(self) -> int:
        return int(self.count.sum())

    def per_pair(self, values: npt.NDArray[Any] | None = None) -> npt.NDArray[np.float64]:
        """``values`` (one per cell; 1 when None) times the cells' counts, summed per pair."""
        weights = self.count if values is None else values * self.count
        return np.bincount(self.pair, weights, self.n_pairs).astype(np.float64)

    def __repr__(self) -> str:
        return (
            f"ClickCounts({self.sessions:,} requests, {self.n_impressions:,} impressions, "
            f"{self.n_pairs:,} (query, doc) pairs, {len(self.count):,} cells, "
            f"{self.depth} positions)"
        )


def _is_ibis(log: Any) -> bool:
    return type(log).__module__.startswith("ibis")


def click_counts(log: Any, *, source: str = "<log>") -> ClickCounts:
    """Count a log's impressions per (pair, rank, previous click, clicked).

    Parameters
    ----------
    log : an Ibis table (counted in its engine: DuckDB, Spark), a ClickLog, or what
        :func:`~rankmeter.clicks.click_log` takes (pyarrow, pandas, polars)
        One row per impression with request_id, query_id (or query_text), doc_id, position
        and clicked; a row with doc_id and position null (a request that found nothing) is
        skipped.
    source : str
        How errors name the log.

    Returns
    -------
    ClickCounts

    Raises
    ------
    FormatError
        The problems :func:`~rankmeter.clicks.click_log` reports. An Ibis table has no row
        numbers: its errors name the request instead.
    """
    if isinstance(log, ClickCounts):
        return log
    if _is_ibis(log):
        return _engine_counts(log, source)
    return _matrix_counts(click_log(log, source=source))


def _canonical(query_ids: Any, doc_ids: Any) -> IntArray:
    """For each pair, its number in (query_id, doc_id) order."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table = pa.table({"q": query_ids, "d": doc_ids})
    order = np.asarray(
        pc.sort_indices(table, sort_keys=[("q", "ascending"), ("d", "ascending")]),
        dtype=np.int64,
    )
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank


def _assemble(
    source: str,
    pair: IntArray,
    rank: IntArray,
    previous: IntArray,
    clicked: npt.NDArray[np.bool_],
    count: IntArray,
    query_ids: Any,
    doc_ids: Any,
    sessions: int,
    depth: int,
) -> ClickCounts:
    """The cells with pairs renumbered in (query, doc) order, merged and sorted."""
    import pyarrow as pa

    if len(query_ids) * depth * (depth + 1) * 2 >= 2**62:
        raise FormatError(
            source,
            f"{len(query_ids):,} (query, doc) pairs at up to {depth:,} positions are more "
            "cells than the click models count: keep the top positions only",
        )
    renumber = _canonical(query_ids, doc_ids)
    order = np.argsort(renumber)
    pair = renumber[pair]
    key = ((pair * depth + rank) * (depth + 1) + previous) * 2 + clicked.astype(np.int64)
    keys, inverse = np.unique(key, return_inverse=True)
    merged = np.bincount(inverse, count, len(keys)).astype(np.int64)
    taken = pa.array(order)
    return ClickCounts(
        source,
        readonly(keys // (2 * (depth + 1) * depth)),
        readonly((keys // (2 * (depth + 1))) % depth),
        readonly((keys // 2) % (depth + 1)),
        readonly((keys % 2).astype(bool)),
        readonly(merged),
        query_ids.take(taken),
        doc_ids.take(taken),
        sessions,
        depth,
    )


def _previous_click(clicks: npt.NDArray[np.bool_]) -> IntArray:
    """For every cell, the position of the last click above it in its request (0: none)."""
    depth = clicks.shape[1]
    positions = np.where(clicks, np.arange(1, depth + 1), 0)
    seen = np.maximum.accumulate(positions, axis=1)
    previous = np.zeros_like(seen)
    previous[:, 1:] = seen[:, :-1]
    return previous


def _matrix_counts(log: ClickLog) -> ClickCounts:
    shown = log.shown
    _, rank = np.nonzero(shown)
    return _assemble(
        log.source,
        log.pairs[shown],
        rank.astype(np.int64),
        _previous_click(log.clicks)[shown].astype(np.int64),
        log.clicks[shown],
        np.ones(int(shown.sum()), dtype=np.int64),
        log.query_ids,
        log.doc_ids,
        log.n_sessions,
        log.depth,
    )


def _engine_counts(log: Any, source: str) -> ClickCounts:
    """The counts as aggregations in the log's own engine; errors name the request."""
    import ibis
    import pyarrow as pa

    names = set(log.columns)
    query_column = "query_text" if "query_text" in names and "query_id" not in names else "query_id"
    for column in ("request_id", query_column, "doc_id", "position", "clicked"):
        if column not in names:
            raise FormatError(
                source,
                f"missing column {column!r}: a click log needs request_id, query_id (or "
                "query_text), doc_id, position and clicked",
            )
    query = log[query_column].cast("string")
    if query_column == "query_id" and "query_text" in names:
        query = query.coalesce(log.query_text.cast("string"))
    rows = log.select(
        request=log.request_id.cast("string"),
        query=query,
        doc=log.doc_id.cast("string"),
        position=log.position.cast("int64"),
        clicked=log.clicked.cast("boolean"),
    )
    _check(rows, source)
    shown = rows.filter(rows.doc.notnull())
    above = ibis.window(group_by="request", order_by="position", rows=(None, -1))
    cells = shown.mutate(
        previous=ibis.ifelse(shown.clicked, shown.position, 0).max().over(above).coalesce(0)
    )
    grouped = (
        cells.group_by(["query", "doc", "position", "previous", "clicked"])
        .aggregate(count=cells.count())
        .to_pyarrow()
    )
    totals = shown.aggregate(
        sessions=shown.request.nunique(), depth=shown.position.max()
    ).to_pyarrow()
    sessions = int(totals.column("sessions")[0].as_py() or 0)
    if sessions == 0:
        raise FormatError(source, "no impressions: every row is a request that showed nothing")
    depth = int(totals.column("depth")[0].as_py())
    cells = pa.table(
        {
            "q": grouped.column("query"),
            "d": grouped.column("doc"),
            "cell": pa.array(np.arange(grouped.num_rows)),
        }
    )
    unique = cells.group_by(["q", "d"]).aggregate([])
    unique = unique.append_column("code", pa.array(np.arange(unique.num_rows)))
    joined = cells.join(unique, keys=["q", "d"]).sort_by("cell")
    codes = joined.column("code")
    return _assemble(
        source,
        np.asarray(codes, dtype=np.int64),
        np.asarray(grouped.column("position"), dtype=np.int64) - 1,
        np.asarray(grouped.column("previous"), dtype=np.int64),
        np.asarray(grouped.column("clicked"), dtype=bool),
        np.asarray(grouped.column("count"), dtype=np.int64),
        unique.column("q").combine_chunks(),
        unique.column("d").combine_chunks(),
        sessions,
        depth,
    )


def _check(rows: Any, source: str) -> None:
    """What :func:`~rankmeter.clicks.click_log` checks, as one aggregation per problem,
    naming a request that has it."""
    import ibis

    doc_null = rows.doc.isnull()
    position_null = rows.position.isnull()
    repeated = (
        rows.filter(rows.position.notnull())
        .group_by(["request", "position"])
        .aggregate(n=ibis._.count())
        .filter(ibis._.n > 1)
    )
    problems: list[tuple[Any, str]] = [
        (rows.filter(rows.clicked.isnull()), "clicked is null (give true or false)"),
        (rows.filter(rows.request.isnull()), "request_id is null"),
        (
            rows.filter(doc_null & position_null & rows.clicked),
            "a click without an impression: clicked is true on a row with no doc_id and no "
            "position (a request that showed nothing cannot be clicked)",
        ),
        (
            rows.filter(doc_null != position_null),
            "doc_id and position must both be set (an impression) or both be empty",
        ),
        (rows.filter(rows.position < 1), "a position below 1: positions start at 1"),
        (
            rows.filter(rows.doc.notnull() & rows.query.isnull()),
            "query_id (and query_text) is null",
        ),
        (repeated, "a position appears twice in the request (positions are unique within one)"),
    ]
    for offending, reason in problems:
        found = offending.select("request").limit(1).to_pyarrow()
        if found.num_rows:
            request = found.column("request")[0].as_py()
            raise FormatError(source, f"request {request!r}: {reason}")
