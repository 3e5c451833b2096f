"""Labels from several raters: a long table (query_id, doc_id, rater, label) or one qrels file
per rater.

The long table is a CSV/TSV file with a header, JSON lines or Parquet (gzip too), a pandas or
polars DataFrame, an Arrow table or a list of dicts. Column names: the qrels' for the query
and the doc (``query_id``, ``qid``, ``doc_id``, ``docno``...), ``rater`` (or annotator,
assessor, judge, labeler, worker, user) and ``label`` (or grade, relevance, rel, judgment,
score). Every bad row is reported with its file, line and text.

A CSV/TSV file may be one a spreadsheet can open safely, as ``rankmeter judge export --labels``
writes it (:func:`rankmeter._escape.spreadsheet_cell`): an id or rater written with a leading
apostrophe because it begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return (or an
apostrophe followed by one of those or another apostrophe) is read without that apostrophe,
so that the ids are the ones exported.

Qrels given one per rater are read as qrels (:func:`rankmeter.io.as_qrels`); a negative grade
there means, as in trec_eval, pooled but not judged, so it is not a label.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from rankmeter._escape import SPREADSHEET_ESCAPED
from rankmeter.data import Qrels
from rankmeter.data.labels import Labels, check_scale, parse_scale
from rankmeter.data.origin import Origin
from rankmeter.errors import FormatError
from rankmeter.io._source import Source
from rankmeter.io.tables import (
    DOC_COLUMNS,
    QUERY_COLUMNS,
    RATER_COLUMNS,
    frame_table,
    read_table,
)

__all__ = ["LABEL_COLUMNS", "as_labels", "labels_from_qrels", "read_labels"]

LABEL_COLUMNS = ("label", "grade", "relevance", "rel", "judgment", "score")


def _column(names: Sequence[str], aliases: Sequence[str], role: str, origin: Origin) -> str:
    lowered = {c.strip().lower(): c for c in names}
    found = next((lowered[a] for a in aliases if a in lowered), None)
    if found is None:
        raise origin.error(
            None,
            f"no {role} column: found columns {list(names)}, expected one of {list(aliases)} "
            "(a labels table has a query, a doc, a rater and a label column)",
        )
    return found


def labels_from_table(
    table: Any, origin: Origin, *, scale: Any = None, spreadsheet: bool = False
) -> Labels:
    """Labels from an Arrow table with query, doc, rater and label columns; ``spreadsheet``:
    the text cells of a CSV/TSV file, whose escaping apostrophes are removed (see the module)."""
    names = table.column_names
    q = _column(names, QUERY_COLUMNS, "query id", origin)
    d = _column(names, DOC_COLUMNS, "doc id", origin)
    r = _column(names, RATER_COLUMNS, "rater", origin)
    g = _column(names, LABEL_COLUMNS, "label", origin)
    texts = [table.column(q), table.column(d), table.column(r)]
    if spreadsheet:
        texts = [_unescape_cells(column) for column in texts]
    query_ids, doc_ids, raters = texts
    return Labels.from_columns(
        query_ids, doc_ids, raters, table.column(g), origin=origin, scale=scale
    )


def _unescape_cells(column: Any) -> Any:
    """A CSV column of text cells without the apostrophes :func:`spreadsheet_cell` added."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        return column
    return pc.replace_substring_regex(
        column, pattern=SPREADSHEET_ESCAPED, replacement="\\1", max_replacements=1
    )


def read_labels(
    path: str | os.PathLike[str], *, format: str | None = None, scale: Any = None
) -> Labels:
    """Read a long labels table from a CSV/TSV (with a header), JSONL or Parquet file.

    ``scale`` (``"0-3"``) refuses a label that is not a whole number on it, naming its line.
    A file with nothing but blank lines in it is refused as empty, naming the file.
    """
    source = Source(path)
    fmt = source.detect_format(format)
    if fmt == "trec":
        if source.first_line(lambda line: bool(line.strip())) is None:
            raise FormatError(source.name, "file is empty: no labels in it")
        raise FormatError(
            source.name,
            "a labels table is CSV/TSV with a header (query_id, doc_id, rater, label), JSONL "
            "or Parquet; for one TREC qrels file per rater give several files",
            line=1,
            text=source.head().splitlines()[0].decode("utf-8", errors="replace"),
        )
    table, origin = read_table(source, fmt)
    return labels_from_table(table, origin, scale=scale, spreadsheet=fmt in ("csv", "tsv"))


def labels_from_qrels(qrels: Mapping[str, Any], *, scale: Any = None) -> Labels:
    """Labels from one qrels per rater, ``{rater: qrels}`` (a path, a Qrels, a dict...).

    Each file's grades are checked against ``scale`` with their line; negative grades
    (trec_eval's "not judged") are left out.
    """
    from rankmeter.io import as_qrels

    bounds = parse_scale(scale)
    columns: tuple[list[Any], list[Any], list[Any], list[Any]] = ([], [], [], [])
    for rater, value in qrels.items():
        loaded: Qrels = as_qrels(value)
        rows = list(loaded)
        grades = np.asarray([g for _, _, g in rows], dtype=np.float64)
        if isinstance(value, (str, os.PathLike)) and os.fspath(value) != "-":
            origin = Origin(loaded.source, _qrels_line_finder(os.fspath(value), rows))
        else:
            origin = Origin(loaded.source, describe=_describe_judgment(rows))
        judged = grades >= 0
        check_scale(np.where(judged, grades, bounds[0] if bounds else 0.0), bounds, origin)
        for (query, doc, grade), kept in zip(rows, judged, strict=True):
            if kept:
                columns[0].append(query)
                columns[1].append(doc)
                columns[2].append(str(rater))
                columns[3].append(grade)
    if not columns[0]:
        raise FormatError("<qrels>", "no labels: every grade is negative (not judged)")
    return Labels.from_columns(*columns, origin="<qrels>", scale=bounds)


def _describe_judgment(rows: list[tuple[str, str, float]]) -> Callable[[int], str]:
    def describe(row: int) -> str:
        return f"query {rows[row][0]!r}, doc {rows[row][1]!r}"

    return describe


def _qrels_line_finder(path: str, rows: list[tuple[str, str, float]]) -> Callable[[int], Any]:
    """Where a qrels judgment stands in its file: the first line naming its query and doc."""

    def locate(row: int) -> tuple[int, str]:
        query, doc, _ = rows[row]
        source = Source(path)
        for number, raw in enumerate(source._lines(), start=1):
            text = raw.decode("utf-8", errors="replace")
            fields = [f.strip().strip('"') for f in re.split(r"[\s,]+", text.strip())]
            if fields and fields[0] == query and doc in fields[1:]:
                return number, text
        return 0, f"query {query!r}, doc {doc!r}"

    return locate


def as_labels(value: Any, *, scale: Any = None) -> Labels:
    """Labels from any supported input (see the module's docstring): Labels (checked against
    ``scale`` when given), a path, a DataFrame or Arrow table, a list of dicts, or a mapping
    ``{rater: qrels}`` (one qrels per rater).

    Raises FormatError for anything else, saying what is accepted.
    """
    if isinstance(value, Labels):
        if scale is None:
            return value
        return Labels.from_columns(
            value.query_ids[value.item],
            value.doc_ids[value.item],
            value.raters[value.rater],
            value.values,
            origin=value.source,
            scale=scale,
        )
    if isinstance(value, (str, os.PathLike)):
        return read_labels(value, scale=scale)
    if isinstance(value, Mapping):
        return labels_from_qrels(value, scale=scale)
    table = frame_table(value)
    if table is not None:
        return labels_from_table(*table, scale=scale)
    if isinstance(value, Sequence) and all(isinstance(row, Mapping) for row in value):
        return _labels_from_dicts(value, scale)
    raise FormatError(
        "<labels>",
        f"cannot use a {type(value).__name__} as labels; give a path (CSV/TSV, JSONL, "
        "Parquet), a pandas/polars DataFrame, an Arrow table, a list of dicts with query_id, "
        "doc_id, rater and label, or {rater: qrels} (one qrels per rater)",
    )


def _labels_from_dicts(rows: Sequence[Mapping[str, Any]], scale: Any) -> Labels:
    origin = Origin("<list of dicts>", describe=lambda row: f"row {row + 1}")
    if not rows:
        raise origin.error(None, "no labels: the list is empty")
    names = list(rows[0])
    keys = [
        _column(names, aliases, role, origin)
        for aliases, role in (
            (QUERY_COLUMNS, "query id"),
            (DOC_COLUMNS, "doc id"),
            (RATER_COLUMNS, "rater"),
            (LABEL_COLUMNS, "label"),
        )
    ]
    columns: list[list[Any]] = [[], [], [], []]
    for index, row in enumerate(rows):
        for column, key in zip(columns, keys, strict=True):
            if key not in row:
                raise origin.error(index, f"missing key {key!r}")
            column.append(row[key])
    return Labels.from_columns(*columns, origin=origin, scale=scale)
