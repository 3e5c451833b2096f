"""A run's rows as they were written: for checking a run before trusting its numbers.

:func:`rankmeter.io.read_run` builds a :class:`~rankmeter.data.Run`, which ranks the results
by score, ignores the rank column (as trec_eval does) and refuses a run at its first repeated
(query, doc) pair. :func:`read_run_rows` reads the same inputs, with the same rules and errors
for bad lines, but keeps what a check needs: every row in the order it was written, repeated
pairs included, and the rank column.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter.data import Run
from rankmeter.data.origin import Origin
from rankmeter.errors import FormatError

__all__ = ["RunRows", "read_run_rows"]

#: Names of a table's rank column.
RANK_COLUMNS = ("rank", "position")


@dataclass(frozen=True)
class RunRows:
    """A run's rows in the order they were written (one per result, repeats kept).

    Attributes
    ----------
    name, source : the run's name (its TREC tag, a name column or the file name) and where it
        was read from
    query_ids, doc_ids : Arrow columns, one value per row
    scores : Arrow column of the scores, as given
    ranks : the rank column as float64 (NaN where a rank is not a number); None when there is
        none (a table without one, a dict, a Run)
    written : whether the rows are in the order they were given (False for a Run, which
        keeps only its ranking)
    origin : where each row came from, for errors that name a line
    """

    name: str
    source: str
    query_ids: Any
    doc_ids: Any
    scores: Any
    ranks: npt.NDArray[np.float64] | None
    written: bool
    origin: Origin

    def __len__(self) -> int:
        return len(self.query_ids)

    def to_run(self, rows: npt.NDArray[np.int64] | None = None, *, ties: str = "trec_eval") -> Run:
        """The Run of these rows (all of them, or ``rows``: positions, ascending), checked as
        the readers check a run: an error names the line of the row it is about."""
        from rankmeter.data.arrays import take_rows

        if rows is None:
            return Run.from_columns(
                self.query_ids,
                self.doc_ids,
                self.scores,
                name=self.name,
                ties=ties,
                origin=self.origin,
            )
        origin = self.origin
        kept = rows
        locate = None if origin.locate is None else (lambda r: origin.locate(int(kept[r])))  # type: ignore[misc]
        describe = None if origin.describe is None else (lambda r: origin.describe(int(kept[r])))  # type: ignore[misc]
        return Run.from_columns(
            take_rows(self.query_ids, rows),
            take_rows(self.doc_ids, rows),
            take_rows(self.scores, rows),
            name=self.name,
            ties=ties,
            origin=Origin(origin.name, locate, describe),
        )


def read_run_rows(
    value: Any, *, format: str | None = None, name: str | None = None, docs: bool = True
) -> RunRows:
    """A run's rows as written, from what :func:`rankmeter.io.as_run` takes: a path or ``"-"``
    (TREC, CSV/TSV, JSONL, Parquet; ``format`` overrides the detection), a dict ``{query:
    {doc: score}}``, a DataFrame or Arrow table, or a Run (its ranking: ``written`` False).

    Lines are read with the readers' rules and their errors (a bad score names its line);
    repeated (query, doc) pairs are kept, for the caller to count. ``docs=False`` may leave
    out a TREC file's doc ids (``doc_ids`` None), for checks of the order alone.

    >>> rows = read_run_rows({"q1": {"d1": 0.5, "d2": 0.9}}, name="bm25")
    >>> len(rows), rows.ranks is None, rows.written
    (2, True, True)
    """
    from rankmeter.io import as_run
    from rankmeter.io._source import Source
    from rankmeter.io.tables import (
        DOC_COLUMNS,
        NAME_COLUMNS,
        QUERY_COLUMNS,
        SCORE_COLUMNS,
        _find,
        _require,
        default_run_name,
        frame_table,
        read_table,
    )
    from rankmeter.io.trec import read_trec_run_columns

    if isinstance(value, Run):
        table = value.to_arrow()
        return RunRows(
            name or value.name,
            value.source,
            table.column("query_id"),
            table.column("doc_id"),
            table.column("score"),
            None,
            False,
            Origin(value.source),
        )
    if isinstance(value, (str, os.PathLike)):
        source = Source(value, role="run")
        fmt = source.detect_format(format)
        if fmt == "trec":
            columns, origin, tag = read_trec_run_columns(source, docs=docs)
            return RunRows(
                name or tag,
                source.name,
                columns["qid"],
                columns.get("docid"),
                columns["score"],
                _numbers(columns["rank"]),
                True,
                origin,
            )
        table, origin = read_table(source, fmt)
        default = default_run_name(source.name)
    elif isinstance(value, Mapping):
        return _dict_rows(value, name or "run")
    else:
        found = frame_table(value)
        if found is None:
            as_run(value)  # the front door's error, saying what is accepted
            raise FormatError("<run>", f"cannot read a {type(value).__name__} as a run")
        table, origin = found
        default = "run"
    names = table.column_names
    q = _require(names, QUERY_COLUMNS, "query id", origin, kind="run")
    d = _require(names, DOC_COLUMNS, "doc id", origin, kind="run")
    s = _require(names, SCORE_COLUMNS, "score", origin, kind="run")
    rank = _find(names, RANK_COLUMNS)
    if name is None:
        named = _find(names, NAME_COLUMNS)
        name = str(table.column(named)[0].as_py()) if named and table.num_rows else default
    ranks = None if rank is None else _numbers(table.column(rank))
    column = table.column
    return RunRows(name, origin.name, column(q), column(d), column(s), ranks, True, origin)


def _dict_rows(results: Mapping[Any, Any], name: str) -> RunRows:
    """The rows of ``{query: {doc: score}}``, in the dict's order."""
    qs: list[Any] = []
    ds: list[Any] = []
    ss: list[Any] = []
    origin = Origin("<dict>", describe=lambda row: f"query {qs[row]!r}, doc {ds[row]!r}")
    for q, docs in results.items():
        if not isinstance(docs, Mapping):
            raise origin.error(
                None, f"query {q!r}: expected a dict {{doc: score}}, got {type(docs).__name__}"
            )
        qs.extend([q] * len(docs))
        ds.extend(docs.keys())
        ss.extend(docs.values())
    return RunRows(name, "<dict>", qs, ds, ss, None, True, origin)


def _numbers(column: Any) -> npt.NDArray[np.float64] | None:
    """A rank column as float64, NaN where a value is not a number (a rank column of words
    orders nothing); None when no value is a number."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from rankmeter.data.arrays import numpy_of

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    try:
        values = pc.cast(column, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
            return None
        # Some ranks are words: those become NaN (the rare path, so the regex runs only here).
        numeric = pc.match_substring_regex(column, r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
        try:
            values = pc.cast(
                pc.if_else(numeric, column, pa.scalar(None, column.type)), pa.float64()
            )
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
    if values.null_count == len(values):
        return None
    return np.asarray(numpy_of(values, fill=np.nan), dtype=np.float64)
