"""Traffic: how often each query was sent, read from a search log (the schema of
:func:`rankmeter.online.read_log`: a query's count is its number of distinct requests) or from
a simple table with the columns ``query_id``, ``count`` and any segment columns (CSV, JSONL or
Parquet, by suffix); and the frequency buckets (head, torso, tail) that
:mod:`rankmeter.online.sampling` draws evaluation sets from.

Buckets: ordered by count (most frequent first), a query is **head** while the queries more
frequent than it make less than a third of the traffic, **torso** while they make less than
two thirds, and **tail** after that (queries with the same count always share a bucket, that
of the first of them).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rankmeter.errors import FormatError

__all__ = ["BUCKETS", "QueryTraffic", "bucket_of", "read_traffic"]

#: The frequency buckets, most frequent first.
BUCKETS: tuple[str, ...] = ("head", "torso", "tail")
_SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
_PARQUET = (".parquet", ".pq")


@dataclass(frozen=True)
class QueryTraffic:
    """How often each query was sent: what :func:`read_traffic` returns.

    Attributes
    ----------
    query_ids : the distinct queries
    counts : their counts (requests), int64
    segments : ``{column: values}``, one value per query (empty string where none)
    source : the file or ``"table"``
    kind : ``"log"`` (counted from a search log) or ``"table"`` (query_id, count)
    """

    query_ids: tuple[str, ...]
    counts: Any
    segments: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    source: str = "table"
    kind: str = "table"

    @property
    def total(self) -> int:
        """All the traffic: the sum of the counts."""
        return int(np.sum(self.counts))


def bucket_of(counts: Any) -> tuple[str, ...]:
    """Head, torso or tail for each count, as the module docstring defines them.

    >>> bucket_of([50, 30, 10, 5, 3, 1, 1])
    ('head', 'torso', 'tail', 'tail', 'tail', 'tail', 'tail')
    >>> bucket_of([1, 1, 1])
    ('head', 'head', 'head')
    """
    values = np.asarray(counts, dtype=np.int64)
    total = int(values.sum())
    out = np.empty(len(values), dtype=object)
    if total == 0:
        out[:] = BUCKETS[-1]
        return tuple(out)
    order = np.argsort(-values, kind="stable")
    sorted_counts = values[order]
    before = np.concatenate(([0], np.cumsum(sorted_counts)[:-1]))
    # Equal counts share the bucket of the first of them.
    first_of_count = np.searchsorted(-sorted_counts, -sorted_counts, side="left")
    share = before[first_of_count] / total
    names = np.where(share < 1 / 3, BUCKETS[0], np.where(share < 2 / 3, BUCKETS[1], BUCKETS[2]))
    out[order] = names
    return tuple(str(x) for x in out)


def read_traffic(source: Any, *, engine: str = "duckdb") -> QueryTraffic:
    """Query counts from a search log or a table ``query_id, count[, segment ...]``.

    Parameters
    ----------
    source : path or mapping
        A ``.csv``, ``.tsv``, ``.jsonl`` or ``.parquet`` file: a search log (it has the log's
        ``request_id`` column; read by :func:`rankmeter.online.read_log`, a query's count its
        distinct requests, its segments the log's other columns) or a table with a
        ``query_id`` and a ``count`` column (whole numbers >= 0, one row per query); or a
        mapping ``{query_id: count}``.
    engine : where a log is read (:func:`rankmeter.engines.connect`)

    Returns
    -------
    QueryTraffic
    """
    if isinstance(source, Mapping):
        return _from_mapping(source)
    path = Path(source)
    columns = _columns(path)
    if "request_id" in columns:
        return _from_log(path, engine)
    return _from_table(path, columns)


def _from_mapping(source: Mapping[Any, Any]) -> QueryTraffic:
    ids, counts = [], []
    for line, (query, count) in enumerate(source.items(), 1):
        ids.append(str(query))
        counts.append(_count("dict", count, line, str(query)))
    return QueryTraffic(tuple(ids), np.asarray(counts, dtype=np.int64), {}, "dict", "table")


def _kind(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in _PARQUET:
        return "parquet"
    if suffix in _SUFFIXES:
        return _SUFFIXES[suffix]
    raise FormatError(
        str(path),
        f"cannot tell the format from the suffix {suffix or '(none)'!r}: give a .csv, .tsv, "
        ".jsonl or .parquet file",
    )


def _columns(path: Path) -> list[str]:
    kind = _kind(path)
    if not path.is_file():
        raise FormatError(str(path), "no such file")
    if kind == "parquet":
        import pyarrow.parquet as pq

        try:
            return list(pq.read_schema(path).names)
        except Exception as exc:  # pyarrow raises several kinds for a file that is not Parquet
            raise FormatError(str(path), f"cannot read it as Parquet: {exc}") from None
    with path.open(encoding="utf-8-sig", errors="replace") as handle:
        for text in handle:
            if not text.strip():
                continue
            if kind == "jsonl":
                try:
                    record = json.loads(text)
                except ValueError:
                    return []  # the table reader names the line
                return list(record) if isinstance(record, dict) else []
            import csv

            # the header as a CSV reader reads it: a name may be quoted ("query_id")
            header = next(
                csv.reader([text.rstrip("\r\n")], delimiter="\t" if kind == "tsv" else ",")
            )
            return [c.strip() for c in header]
    raise FormatError(str(path), "the file is empty: give query_id and count columns, or a log")


def _count(path: str, value: Any, line: int, text: str) -> int:
    """A count: a whole number >= 0."""
    number: float
    if isinstance(value, bool):
        number = math.nan
    elif isinstance(value, int | float):
        number = float(value)
    else:
        try:
            number = float(str(value).strip())
        except ValueError:
            number = math.nan
    if not math.isfinite(number) or number < 0 or number != int(number):
        raise FormatError(
            path, f"count must be a whole number >= 0, not {value!r}", line=line, text=text
        )
    return int(number)


def _records(path: Path) -> list[tuple[int, dict[str, Any], str]]:
    """(line or row, record, its text) for every row of a table file."""
    kind = _kind(path)
    out: list[tuple[int, dict[str, Any], str]] = []
    if kind == "parquet":
        import pyarrow.parquet as pq

        for row, record in enumerate(pq.read_table(path).to_pylist(), 1):
            out.append((row, record, str(record)))
        return out
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FormatError(str(path), f"not UTF-8 text ({exc.reason})") from None
    if kind == "jsonl":
        for line, raw in enumerate(text.splitlines(), 1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except ValueError:
                raise FormatError(str(path), "not a JSON object", line=line, text=raw) from None
            if not isinstance(record, dict):
                raise FormatError(str(path), "not a JSON object", line=line, text=raw)
            out.append((line, record, raw))
        return out
    import csv
    import io

    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t" if kind == "tsv" else ",")
    header: list[str] | None = None
    for record in reader:
        if not record or not any(cell.strip() for cell in record):
            continue
        if header is None:
            header = [c.strip() for c in record]
            continue
        line = reader.line_num
        raw = ("\t" if kind == "tsv" else ",").join(record)
        if len(record) != len(header):
            raise FormatError(
                str(path),
                f"{len(record)} fields where the header has {len(header)}",
                line=line,
                text=raw,
            )
        out.append((line, dict(zip(header, record, strict=True)), raw))
    return out


def _from_table(path: Path, columns: Sequence[str]) -> QueryTraffic:
    missing = [c for c in ("query_id", "count") if c not in columns]
    if missing:
        raise FormatError(
            str(path),
            f"no {' or '.join(missing)} column (it has {', '.join(columns) or 'none'}): give "
            "a table query_id,count[,segment] or a search log (with request_id)",
        )
    segment_names = [c for c in columns if c not in ("query_id", "count")]
    ids: list[str] = []
    counts: list[int] = []
    segments: dict[str, list[str]] = {name: [] for name in segment_names}
    seen: dict[str, int] = {}
    for line, record, raw in _records(path):
        query = record.get("query_id")
        if query is None or str(query).strip() == "":
            raise FormatError(str(path), "empty query_id", line=line, text=raw)
        query = str(query)
        if query in seen:
            raise FormatError(
                str(path),
                f"query_id {query!r} again (first at {seen[query]}): give one row per query",
                line=line,
                text=raw,
            )
        seen[query] = line
        ids.append(query)
        counts.append(_count(str(path), record.get("count"), line, raw))
        for name in segment_names:
            value = record.get(name)
            segments[name].append("" if value is None else str(value))
    if not ids:
        raise FormatError(str(path), "no queries: the table has a header and no rows")
    return QueryTraffic(
        tuple(ids),
        np.asarray(counts, dtype=np.int64),
        {name: tuple(values) for name, values in segments.items()},
        str(path),
        "table",
    )


def _from_log(path: Path, engine: str) -> QueryTraffic:
    from rankmeter.online.logs import LOG_COLUMNS, read_log

    table = read_log(path, engine=engine)
    query = table["query_id"].fill_null(table["query_text"])
    table = table.mutate(__query=query).filter(lambda t: t["__query"].notnull())
    segment_names = [c for c in table.columns if c not in LOG_COLUMNS and c != "__query"]
    counts = (
        table.group_by("__query")
        .aggregate(count=table["request_id"].nunique())
        .order_by("__query")
        .to_pyarrow()
        .to_pydict()
    )
    ids = tuple(str(q) for q in counts["__query"])
    segments: dict[str, tuple[str, ...]] = {}
    for name in segment_names:
        requests = table.select("__query", "request_id", name).distinct().to_pyarrow().to_pydict()
        tally: dict[str, Counter[str]] = {}
        for q, value in zip(requests["__query"], requests[name], strict=True):
            tally.setdefault(str(q), Counter())["" if value is None else str(value)] += 1
        # The most frequent value; on a tie the smallest, so that the choice is reproducible.
        segments[name] = tuple(
            min(tally[q].items(), key=lambda item: (-item[1], item[0]))[0] for q in ids
        )
    if not ids:
        raise FormatError(str(path), "the log has no query ids (query_id or query_text)")
    return QueryTraffic(
        ids, np.asarray(counts["count"], dtype=np.int64), segments, str(path), "log"
    )
