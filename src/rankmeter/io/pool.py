"""The pool file: the (query, document) pairs that need judging, one JSON object per line.

Written by ``rankmeter pool`` (:func:`rankmeter.judgments.pool`; the text is made in
:mod:`rankmeter.report.pool`, as every JSON rankmeter writes), read back here by every command
that works on a pool. Each line is one item, with five fields, all required::

    {"query_id": "1", "doc_id": "d7", "runs": {"bm25": 1, "dense": 3}, "best_rank": 1,
     "inclusion_probability": 1.0}

- ``runs``: the runs that put the document in their top ``depth`` for the query, and at which
  rank (1 = first, in trec_eval's order);
- ``best_rank``: the smallest of those ranks (the stratum a sample was drawn from);
- ``inclusion_probability``: the chance that this item was drawn into the pool, 1 when the
  query's pool was not sampled. Estimates over a sampled pool weigh each judged item by
  ``1 / inclusion_probability`` (Horvitz-Thompson, as infAP does).

There is no header line; blank lines are skipped; ids may be JSON strings or integers (read as
strings); a file may be gzip-compressed (``.gz``) or ``-`` (standard input). A bad line is a
:class:`~rankmeter.errors.FormatError` naming the file, the line and its text.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from rankmeter.errors import FormatError
from rankmeter.io._source import Source
from rankmeter.io.tables import json_type

__all__ = ["FIELDS", "PoolItem", "read_pool"]

#: The fields of a pool line, in the order they are written.
FIELDS = ("query_id", "doc_id", "runs", "best_rank", "inclusion_probability")
_FIELD_LIST = ", ".join(FIELDS)


@dataclass(frozen=True)
class PoolItem:
    """One (query, document) pair to judge.

    Attributes
    ----------
    query_id, doc_id : str
    runs : Mapping[str, int]
        Run name -> the rank at which that run put the document (read-only).
    best_rank : int
        The best (smallest) of those ranks.
    inclusion_probability : float
        The probability that sampling drew this item (1.0 when nothing was sampled).

    Examples
    --------
    >>> item = PoolItem("q1", "d7", {"bm25": 1, "dense": 3}, 1, 1.0)
    >>> item.runs["dense"], item.to_dict()["best_rank"]
    (3, 1)
    """

    query_id: str
    doc_id: str
    runs: Mapping[str, int]
    best_rank: int
    inclusion_probability: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "runs", MappingProxyType(dict(self.runs)))

    def to_dict(self) -> dict[str, Any]:
        """The item as one line of the pool file holds it."""
        return {
            "query_id": self.query_id,
            "doc_id": self.doc_id,
            "runs": dict(self.runs),
            "best_rank": self.best_rank,
            "inclusion_probability": self.inclusion_probability,
        }


def read_pool(path: str | os.PathLike[str]) -> tuple[PoolItem, ...]:
    """Read a pool file: its items, in file order.

    Raises FormatError (path, line, text) for a line that is not a JSON object, lacks a field
    or has one it should not, holds a value of the wrong kind, or repeats a (query, doc) pair
    of an earlier line; and for a file without items ("file is empty").

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "pool.jsonl"
    >>> _ = path.write_text(
    ...     '{"query_id": "q1", "doc_id": "d7", "runs": {"bm25": 1, "dense": 3}, '
    ...     '"best_rank": 1, "inclusion_probability": 1.0}\\n'
    ... )
    >>> read_pool(path)[0].runs
    mappingproxy({'bm25': 1, 'dense': 3})
    """
    source = Source(path)
    items: list[PoolItem] = []
    first_line: dict[tuple[str, str], int] = {}
    for number, raw in enumerate(source.data.splitlines(), start=1):
        if not raw.strip():
            continue
        item = _item(raw, _Line(source.name, number, raw))
        key = (item.query_id, item.doc_id)
        if key in first_line:
            raise FormatError(
                source.name,
                f"query {item.query_id!r}, doc {item.doc_id!r} is in the pool twice (first on "
                f"line {first_line[key]}); keep one of the lines",
                line=number,
                text=raw.decode("utf-8", errors="replace"),
            )
        first_line[key] = number
        items.append(item)
    return tuple(items)  # not empty: Source refuses a file without a visible character


@dataclass(frozen=True)
class _Line:
    path: str
    number: int
    raw: bytes

    def error(self, reason: str) -> FormatError:
        text = self.raw.decode("utf-8", errors="replace")
        return FormatError(self.path, reason, line=self.number, text=text)


def _item(raw: bytes, where: _Line) -> PoolItem:
    try:
        record = json.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "not UTF-8"
        raise where.error(f"not valid JSON ({reason})") from None
    if not isinstance(record, dict):
        raise where.error("each line must be a JSON object")
    for name in FIELDS:
        if name not in record:
            raise where.error(f"missing field {name!r} (a pool item has {_FIELD_LIST})")
    for name in record:
        if name not in FIELDS:
            raise where.error(f"unknown field {name!r} (a pool item has {_FIELD_LIST})")
    query_id = _identifier("query_id", record["query_id"], where)
    doc_id = _identifier("doc_id", record["doc_id"], where)
    runs = record["runs"]
    if not isinstance(runs, dict) or not runs:
        raise where.error(
            "runs must be an object {run name: rank} with at least one run, not "
            + ("an empty object" if isinstance(runs, dict) else json_type(runs))
        )
    for name, rank in runs.items():
        if not _rank(rank):
            raise where.error(f"the rank of run {name!r} must be an integer >= 1, not {rank!r}")
    best_rank = record["best_rank"]
    if not _rank(best_rank):
        shown = json_type(best_rank) if isinstance(best_rank, bool) else repr(best_rank)
        raise where.error(f"best_rank must be an integer >= 1, not {shown}")
    if best_rank != min(runs.values()):
        raise where.error(
            f"best_rank {best_rank} is not the best of the runs' ranks ({min(runs.values())})"
        )
    probability = record["inclusion_probability"]
    if (
        isinstance(probability, bool)
        or not isinstance(probability, (int, float))
        or not math.isfinite(probability)
        or not 0 < probability <= 1
    ):
        raise where.error(f"inclusion_probability must be a number in (0, 1], not {probability!r}")
    return PoolItem(query_id, doc_id, runs, best_rank, float(probability))


def _identifier(name: str, value: Any, where: _Line) -> str:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    shown = "empty" if value == "" else json_type(value)
    raise where.error(f"{name} must be a non-empty string or an integer, not {shown}")


def _rank(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
