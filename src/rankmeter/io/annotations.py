"""Files about queries rather than results: query texts and query segments.

- Queries: ``query id -> text``. BEIR's ``queries.jsonl`` (``{"_id": ..., "text": ...}``), a
  TSV without a header as MS MARCO ships it (``qid<TAB>text``), or a CSV/TSV/JSONL/Parquet
  table with a query id column and a ``text`` (or ``query``, ``title``) column.
- Segments: ``query id -> tags``. A CSV/TSV/JSONL/Parquet table with a query id column and one
  or more tag columns: a row ``q7, new, tail`` under the header ``query_id, user, freq`` puts
  query q7 in the segments ``user=new`` and ``freq=tail``. Empty cells put the query in no
  segment of that column.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from rankmeter.errors import FormatError
from rankmeter.io._json import lone_surrogate
from rankmeter.io._source import Source
from rankmeter.io.tables import QUERY_COLUMNS, _find, json_type, read_table

__all__ = ["read_queries", "read_segments"]

TEXT_COLUMNS = ("text", "query", "title", "query_text", "question")
QUERY_ID_COLUMNS = ("_id", *QUERY_COLUMNS)


def read_queries(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read query texts: ``{query_id: text}``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "queries.tsv").write_text("1\\twhat is bm25\\n2\\tndcg\\n")
    >>> read_queries(folder / "queries.tsv")
    {'1': 'what is bm25', '2': 'ndcg'}
    """
    source = Source(path)
    fmt = source.detect_format(None)
    if fmt == "jsonl":
        return _queries_jsonl(source)
    if fmt in ("tsv", "trec") and not _has_header(source):
        return _queries_headerless(source)
    table, _ = read_table(source, "tsv" if fmt == "trec" else fmt)
    names = table.column_names
    q = _find(names, QUERY_ID_COLUMNS)
    t = _find(names, TEXT_COLUMNS)
    if q is None or t is None:
        raise FormatError(
            source.name,
            f"a queries file needs a query id column ({', '.join(QUERY_ID_COLUMNS)}) and a text "
            f"column ({', '.join(TEXT_COLUMNS)}); found columns {names}",
        )
    ids = [str(v) for v in table.column(q).to_pylist()]
    texts = ["" if v is None else str(v) for v in table.column(t).to_pylist()]
    return _unique(dict_pairs=list(zip(ids, texts, strict=True)), source=source, skip=1)


def _has_header(source: Source) -> bool:
    first = source.head().splitlines()[0] if source.head() else b""
    cell = first.split(b"\t")[0].strip().decode("utf-8", errors="replace").lower()
    return cell in QUERY_ID_COLUMNS


def _queries_headerless(source: Source) -> dict[str, str]:
    pairs = []
    for number, raw in enumerate(source.data.splitlines(), start=1):
        line = raw.decode("utf-8", errors="replace").rstrip("\r")
        if not line.strip():
            continue
        if "\t" not in line:
            raise FormatError(
                source.name,
                "expected 'query id<TAB>text' (or a table with a header)",
                line=number,
                text=line,
            )
        qid, text = line.split("\t", 1)
        if not qid.strip():
            raise FormatError(source.name, "empty query id", line=number, text=line)
        pairs.append((qid.strip(), text.strip()))
    return _unique(pairs, source, skip=0)


def _queries_jsonl(source: Source) -> dict[str, str]:
    pairs = []
    for number, raw in enumerate(source.data.splitlines(), start=1):
        if not raw.strip():
            continue
        text = raw.decode("utf-8", errors="replace")
        try:
            record = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "not UTF-8"
            raise FormatError(
                source.name, f"not valid JSON ({reason})", line=number, text=text
            ) from None
        if not isinstance(record, Mapping):
            raise FormatError(
                source.name, "each line must be a JSON object", line=number, text=text
            )
        if (lone := lone_surrogate(raw, record)) is not None:
            raise FormatError(source.name, lone, line=number, text=text)
        q = _find(list(record), QUERY_ID_COLUMNS)
        t = _find(list(record), TEXT_COLUMNS)
        if q is None or t is None:
            raise FormatError(
                source.name,
                f"a query needs an id ({', '.join(QUERY_ID_COLUMNS)}) and a text "
                f"({', '.join(TEXT_COLUMNS)})",
                line=number,
                text=text,
            )
        qid, query = record[q], record[t]
        if not isinstance(qid, (str, int)) or isinstance(qid, bool) or str(qid) == "":
            shown = "empty" if qid == "" else json_type(qid)
            raise FormatError(
                source.name,
                f"the query id ({q!r}) must be a string or an integer, not {shown}",
                line=number,
                text=text,
            )
        if not isinstance(query, str):
            raise FormatError(
                source.name,
                f"the query text ({t!r}) must be a string, not {json_type(query)}",
                line=number,
                text=text,
            )
        pairs.append((str(qid), query))
    return _unique(pairs, source, skip=0)


def _unique(dict_pairs: list[tuple[str, str]], source: Source, skip: int) -> dict[str, str]:
    out: dict[str, str] = {}
    for row, (qid, text) in enumerate(dict_pairs):
        if qid in out and out[qid] != text:
            line, line_text = source.nth_row_line(row, skip=skip)
            raise FormatError(
                source.name, f"query {qid!r} has two different texts", line=line, text=line_text
            )
        out[qid] = text
    if not out:
        raise FormatError(source.name, "no queries in the file")
    return out


def read_segments(path: str | os.PathLike[str]) -> dict[str, dict[str, str]]:
    """Read query segments: ``{column: {query_id: value}}``, one entry per tag column.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "segments.csv").write_text("query_id,user,freq\\n1,new,tail\\n2,old,\\n")
    >>> read_segments(folder / "segments.csv")
    {'user': {'1': 'new', '2': 'old'}, 'freq': {'1': 'tail'}}
    """
    source = Source(path)
    fmt = source.detect_format(None)
    if fmt == "trec":
        fmt = "tsv"
    table, origin = read_table(source, fmt)
    names = table.column_names
    q = _find(names, QUERY_ID_COLUMNS)
    if q is None:
        raise FormatError(
            source.name,
            f"a segments file needs a query id column ({', '.join(QUERY_ID_COLUMNS)}); "
            f"found columns {names}",
        )
    tags = [c for c in names if c != q]
    if not tags:
        raise FormatError(
            source.name,
            f"a segments file needs at least one tag column beside {q!r} (such as user or freq)",
        )
    ids = table.column(q).to_pylist()
    for row, qid in enumerate(ids):
        if qid is None or str(qid).strip() == "":
            raise origin.error(row, "empty query id")
    seen: dict[str, int] = {}
    for row, qid in enumerate(ids):
        if str(qid) in seen:
            raise origin.error(row, f"query {str(qid)!r} appears twice; give one row per query")
        seen[str(qid)] = row
    out: dict[str, dict[str, str]] = {}
    for column in tags:
        values: list[Any] = table.column(column).to_pylist()
        out[str(column)] = {
            str(qid): str(v).strip()
            for qid, v in zip(ids, values, strict=True)
            if v is not None and str(v).strip() != ""
        }
    return out
