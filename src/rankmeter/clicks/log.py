"""A click log as the click models read it: one results page (request) per row of a matrix.

A log (one row per impression, the columns of the online log contract: request_id, query_id or
query_text, doc_id, position, clicked) is checked and turned into a :class:`ClickLog`: a
matrix with one row per request and one column per position, holding the (query, document)
pair shown there and whether it was clicked. Every click model's EM step is a NumPy operation
on these matrices (a loop over the positions at most, never over sessions).

A request is a click model's *session*: one query issued once and its page of results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter import _validate
from rankmeter._validate import real
from rankmeter.data.arrays import IntArray
from rankmeter.errors import FormatError

__all__ = ["ClickLog", "click_log", "split_log"]

BoolMatrix = npt.NDArray[np.bool_]

#: The columns a click log must have (besides query_id or query_text).
REQUIRED = ("request_id", "doc_id", "position", "clicked")
#: The most cells (requests x deepest position) a log may make: 2 GB of int64 pair codes.
MAX_CELLS = 250_000_000


@dataclass(frozen=True, eq=False)
class ClickLog:
    """A checked click log: ``pairs[s, r]`` is the (query, doc) pair shown at position
    ``r + 1`` of request ``s`` (-1 where nothing was shown there), ``clicks[s, r]`` whether it
    was clicked. ``query_ids[p]`` and ``doc_ids[p]`` name pair ``p``; ``request_ids[s]`` names
    request ``s``. Build it with :func:`click_log`.

    Examples
    --------
    >>> import pyarrow as pa
    >>> log = click_log(pa.table({"request_id": ["r1", "r1", "r2"], "query_id": ["q", "q", "q"],
    ...     "doc_id": ["a", "b", "b"], "position": [1, 2, 1], "clicked": [False, True, True]}))
    >>> log
    ClickLog(2 requests, 3 impressions, 2 (query, doc) pairs, 2 positions)
    >>> log.pairs.tolist(), log.clicks.tolist()
    ([[0, 1], [1, -1]], [[False, True], [True, False]])
    """

    source: str
    pairs: IntArray
    clicks: BoolMatrix
    query_ids: Any  # pyarrow string array, one per pair
    doc_ids: Any  # pyarrow string array, one per pair
    request_ids: Any  # pyarrow string array, one per request

    @property
    def shown(self) -> BoolMatrix:
        """Where a document was shown: ``pairs >= 0``."""
        return self.pairs >= 0

    @property
    def n_sessions(self) -> int:
        return int(self.pairs.shape[0])

    @property
    def depth(self) -> int:
        """The deepest position shown."""
        return int(self.pairs.shape[1])

    @property
    def n_pairs(self) -> int:
        return len(self.query_ids)

    @property
    def n_impressions(self) -> int:
        return int(np.count_nonzero(self.pairs >= 0))

    def __repr__(self) -> str:
        return (
            f"ClickLog({self.n_sessions:,} requests, {self.n_impressions:,} impressions, "
            f"{self.n_pairs:,} (query, doc) pairs, {self.depth} positions)"
        )

    def subset(self, rows: IntArray) -> ClickLog:
        """These requests only (rows of the matrices), the pairs renumbered to those shown."""
        pairs = self.pairs[rows]
        shown = pairs >= 0
        used, codes = np.unique(pairs[shown], return_inverse=True)
        renumbered = np.full(pairs.shape, -1, dtype=np.int64)
        renumbered[shown] = codes
        deepest = int(np.flatnonzero(shown.any(axis=0)).max(initial=-1)) + 1
        taken = used.astype(np.int64)
        return ClickLog(
            self.source,
            readonly(renumbered[:, :deepest]),
            readonly(self.clicks[rows][:, :deepest]),
            self.query_ids.take(taken),
            self.doc_ids.take(taken),
            self.request_ids.take(rows.astype(np.int64)),
        )


def readonly(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    array.flags.writeable = False
    return array


def _table(log: Any, source: str) -> Any:
    """``log`` as a pyarrow Table: a Table, an Ibis table or anything with ``to_pyarrow`` or
    ``to_arrow`` (polars), a pandas DataFrame."""
    import pyarrow as pa

    if isinstance(log, pa.Table):
        return log
    for method in ("to_pyarrow", "to_arrow"):
        convert = getattr(log, method, None)
        if callable(convert):
            table = convert()
            if isinstance(table, pa.Table):
                return table
    if type(log).__module__.startswith("pandas"):
        return pa.Table.from_pandas(log, preserve_index=False)
    raise FormatError(
        source,
        f"cannot read a click log from {type(log).__name__}: give a pyarrow Table, an Ibis "
        "table or a pandas/polars DataFrame (rankmeter.online.read_log reads files)",
    )


def _first(mask: npt.NDArray[np.bool_]) -> int:
    return int(np.flatnonzero(mask)[0])


def click_log(log: Any, *, source: str = "<log>") -> ClickLog:
    """Check a log and arrange it for the click models.

    Parameters
    ----------
    log : pyarrow Table, Ibis table, pandas or polars DataFrame, or a ClickLog (returned as is)
        One row per impression with the columns request_id, query_id (or query_text, which
        also stands in where query_id is null), doc_id, position (1-based) and clicked (bool
        or 0/1). Other columns are ignored. A row with
        doc_id and position null (a request that found nothing) is skipped.
    source : str
        How errors name the log (the file it was read from).

    Returns
    -------
    ClickLog

    Raises
    ------
    FormatError
        One line naming the source, the 1-based row and the problem: a missing column, a
        position below 1, a position repeated within a request, a click on a row that shows no
        document, a null in clicked, an impression without a position (or a position without a
        document), or no impression at all.
    """
    if isinstance(log, ClickLog):
        return log
    import pyarrow as pa
    import pyarrow.compute as pc

    table = _table(log, source)
    names = set(table.column_names)
    query_column = "query_text" if "query_text" in names and "query_id" not in names else "query_id"
    missing = [c for c in (*REQUIRED[:1], query_column, *REQUIRED[1:]) if c not in names]
    if missing:
        raise FormatError(
            source,
            f"missing column {missing[0]!r}: a click log needs request_id, query_id (or "
            "query_text), doc_id, position and clicked",
        )
    if table.num_rows == 0:
        raise FormatError(source, "no impressions: the log has no rows")
    doc = table.column("doc_id").combine_chunks()
    position_column = table.column("position").combine_chunks()
    clicked_column = table.column("clicked").combine_chunks()
    if clicked_column.null_count:
        row = _first(np.asarray(clicked_column.is_null()))
        raise FormatError(source, "clicked is null (give true or false)", line=row + 1)
    try:
        clicked = np.asarray(clicked_column.cast(pa.bool_()), dtype=bool)
        positions = np.asarray(position_column.cast(pa.int64()).fill_null(0), dtype=np.int64)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
        raise FormatError(
            source, f"clicked must be true/false and position an integer ({error})"
        ) from None
    doc_null = np.asarray(doc.is_null())
    position_null = np.asarray(position_column.is_null())
    no_result = doc_null & position_null
    if (no_result & clicked).any():
        row = _first(no_result & clicked)
        raise FormatError(
            source,
            "a click without an impression: clicked is true on a row with no doc_id and no "
            "position (a request that showed nothing cannot be clicked)",
            line=row + 1,
        )
    if (doc_null != position_null).any():
        row = _first(doc_null != position_null)
        what = "doc_id is null but position is set" if doc_null[row] else "position is null"
        raise FormatError(
            source, f"{what}: an impression needs both a doc_id and a position", line=row + 1
        )
    low = ~position_null & (positions < 1)
    if low.any():
        row = _first(low)
        raise FormatError(
            source,
            f"position {positions[row]} is not a rank: positions start at 1",
            line=row + 1,
        )
    kept = np.flatnonzero(~no_result)
    if len(kept) == 0:
        raise FormatError(source, "no impressions: every row is a request that showed nothing")
    requests = pc.dictionary_encode(table.column("request_id").combine_chunks().take(kept))
    if requests.indices.null_count:
        row = int(kept[_first(np.asarray(requests.indices.is_null()))])
        raise FormatError(source, "request_id is null", line=row + 1)
    request_codes = np.asarray(requests.indices, dtype=np.int64)
    position = positions[kept]
    depth = int(position.max())
    n_requests = len(requests.dictionary)
    if n_requests * depth > MAX_CELLS:
        row = int(kept[int(np.argmax(position))])
        raise FormatError(
            source,
            f"position {depth} makes a {n_requests:,} x {depth:,} request-by-position matrix, "
            f"more than the click models hold ({MAX_CELLS:,} cells): keep the top positions only",
            line=row + 1,
        )
    cell = request_codes * depth + (position - 1)
    order = np.argsort(cell, kind="stable")
    repeated = np.flatnonzero(cell[order][1:] == cell[order][:-1])
    if len(repeated):
        second = int(order[repeated[0] + 1])
        row = int(kept[second])
        request = requests.dictionary[request_codes[second]].as_py()
        raise FormatError(
            source,
            f"position {position[second]} appears twice in request {request!r} (positions are "
            "unique within a request)",
            line=row + 1,
        )
    queries = table.column(query_column).combine_chunks().take(kept)
    if query_column == "query_id" and "query_text" in names:
        # A log may name some queries by id and others by text only (rankmeter.online.read_log
        # gives both columns, the one a log lacks all null).
        queries = pc.coalesce(queries, table.column("query_text").combine_chunks().take(kept))
    if queries.null_count:
        row = int(kept[_first(np.asarray(queries.is_null()))])
        raise FormatError(source, f"{query_column} is null", line=row + 1)
    query_codes = pc.dictionary_encode(queries)
    doc_codes = pc.dictionary_encode(doc.take(kept))
    n_docs = len(doc_codes.dictionary)
    pair_key = np.asarray(query_codes.indices, dtype=np.int64) * n_docs + np.asarray(
        doc_codes.indices, dtype=np.int64
    )
    unique_keys, pair_codes = np.unique(pair_key, return_inverse=True)
    pairs = np.full((n_requests, depth), -1, dtype=np.int64)
    clicks = np.zeros((n_requests, depth), dtype=bool)
    pairs.flat[cell] = pair_codes
    clicks.flat[cell] = clicked[kept]
    return ClickLog(
        source,
        readonly(pairs),
        readonly(clicks),
        query_codes.dictionary.take(pa.array(unique_keys // n_docs)).cast(pa.string()),
        doc_codes.dictionary.take(pa.array(unique_keys % n_docs)).cast(pa.string()),
        requests.dictionary.cast(pa.string()),
    )


def split_log(log: Any, held_out: float = 0.2, *, seed: int = 0) -> tuple[ClickLog, ClickLog]:
    """Split a log by request into a training and a held-out part.

    Parameters
    ----------
    log : a click log (see :func:`click_log`)
    held_out : float
        The share of requests held out, strictly between 0 and 1.
    seed : int
        Seeds the draw: same seed, same split.

    Returns
    -------
    (train, held_out) : tuple of ClickLog

    Examples
    --------
    >>> import pyarrow as pa
    >>> table = pa.table({"request_id": [f"r{i}" for i in range(10)], "query_id": ["q"] * 10,
    ...     "doc_id": ["a"] * 10, "position": [1] * 10, "clicked": [True] * 10})
    >>> train, test = split_log(table, 0.2, seed=1)
    >>> train.n_sessions, test.n_sessions
    (8, 2)
    """
    held_out = real("held_out", held_out, low=0, high=1, open_low=True, open_high=True)
    seed = _validate.seed(seed)
    whole = click_log(log)
    n_test = round(whole.n_sessions * held_out)
    if n_test == 0 or n_test == whole.n_sessions:
        from rankmeter.errors import PolicyError

        raise PolicyError(
            f"held_out={held_out} leaves no requests on one side of the split "
            f"({whole.n_sessions} requests)"
        )
    order = np.random.default_rng(seed).permutation(whole.n_sessions)
    return whole.subset(np.sort(order[n_test:])), whole.subset(np.sort(order[:n_test]))
