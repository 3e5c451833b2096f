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

:func:`sampled_qrels` gives qrels the inclusion probabilities of a pool: each judged (query,
doc) pair found in the pool gets its item's probability, every other judgment probability 1
(judged in full, outside the sample); an item without a judgment is simply not judged. The
sampled-judgment metrics (statAP, stat_nDCG, stat_P) read them. It also keeps the pool's
coverage (:attr:`Qrels.pool_coverage`: how many of its items for the qrels' queries are
judged); where fewer than half are, the commands note that the pool may not be the one these
judgments were made from, and where no sampled-judgment metric is asked, that the pool changes
nothing (:func:`rankmeter.metrics.pool_notes`).

There is no header line; blank lines are skipped; ids may be JSON strings or integers (read as
strings); a file may be gzip-compressed (``.gz``) or ``-`` (standard input). A bad line is a
:class:`~rankmeter.errors.FormatError` naming the file, the line and its text.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from rankmeter.data import Qrels
from rankmeter.errors import FormatError, PolicyError, RankmeterError
from rankmeter.io._json import lone_surrogate
from rankmeter.io._source import Source
from rankmeter.io.tables import json_type

__all__ = ["FIELDS", "PoolItem", "read_pool", "sampled_qrels"]

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
    if (lone := lone_surrogate(raw, record)) is not None:
        raise where.error(lone)
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


def sampled_qrels(qrels: Qrels, inclusion: Any) -> Qrels:
    """``qrels`` with each judgment's inclusion probability (:attr:`Qrels.inclusion`).

    ``inclusion``: the path of a pool file (``rankmeter pool`` wrote it; read as
    :func:`read_pool` reads it), a pool (:class:`rankmeter.judgments.pool.Pool`, or any
    iterable of :class:`PoolItem`), a mapping ``{(query_id, doc_id): probability}``, or None
    (``qrels`` as they are: every judgment made in full). A judged pair found in it gets its
    probability; a judged pair not in it has probability 1 (judged in full, outside the
    sample); a pair in it without a judgment is not judged.

    Raises RankmeterError when no judged pair is in the pool, naming what to check: a pool of
    other queries, or a sample not judged yet; FormatError for a bad line of a pool file;
    PolicyError for an ``inclusion`` of another kind or a probability outside (0, 1].

    >>> qrels = Qrels.from_dict({"q1": {"a": 1, "b": 0, "c": 1}})
    >>> sampled = sampled_qrels(qrels, {("q1", "a"): 0.5, ("q1", "z"): 0.25})
    >>> sampled.inclusion.tolist()
    [0.5, 1.0, 1.0]
    """
    if inclusion is None:
        return qrels
    if isinstance(inclusion, (str, os.PathLike)):
        where = f"the pool {os.fspath(inclusion)}"
        pairs = _item_pairs(read_pool(inclusion))
    elif isinstance(inclusion, Mapping):
        where = "the inclusion probabilities given"
        pairs = _mapping_pairs(inclusion)
    elif isinstance(inclusion, Iterable) and not isinstance(inclusion, (bytes, bytearray)):
        where = "the pool given"
        items = list(inclusion)
        for item in items:
            if not isinstance(item, PoolItem):
                raise PolicyError(_INCLUSION_KINDS + f", not an iterable of {type(item).__name__}")
        pairs = _item_pairs(items)
    else:
        raise PolicyError(_INCLUSION_KINDS + f", not {type(inclusion).__name__}")
    probabilities, coverage = _probabilities(qrels, pairs, where)
    return qrels.with_inclusion(probabilities, coverage)


_INCLUSION_KINDS = (
    "inclusion= takes a pool file's path, a Pool (or its PoolItems) or a mapping "
    "{(query_id, doc_id): probability}"
)


def _item_pairs(items: Iterable[PoolItem]) -> tuple[list[str], list[str], list[float]]:
    listed = list(items)
    return (
        [item.query_id for item in listed],
        [item.doc_id for item in listed],
        [item.inclusion_probability for item in listed],
    )


def _mapping_pairs(given: Mapping[Any, Any]) -> tuple[list[str], list[str], list[float]]:
    queries: list[str] = []
    docs: list[str] = []
    probabilities: list[float] = []
    for key, value in given.items():
        if not (isinstance(key, tuple) and len(key) == 2 and all(isinstance(k, str) for k in key)):
            raise PolicyError(
                f"inclusion= maps (query_id, doc_id) pairs of strings to probabilities, got the "
                f"key {key!r}"
            )
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or not 0 < value <= 1
        ):
            raise PolicyError(f"inclusion[{key!r}] must be a probability in (0, 1], not {value!r}")
        queries.append(key[0])
        docs.append(key[1])
        probabilities.append(float(value))
    return queries, docs, probabilities


def _probabilities(
    qrels: Qrels, pairs: tuple[list[str], list[str], list[float]], where: str
) -> tuple[Any, tuple[int, int]]:
    """Each judgment row's probability: the pair's in ``pairs``, else 1 (vectorised: the
    pairs' queries and docs are found as a join finds a run's); and the pool's coverage
    (:attr:`Qrels.pool_coverage`): how many of its items of the qrels' queries are judged, of
    how many."""
    import numpy as np

    from rankmeter.data.arrays import arrow_strings
    from rankmeter.data.hashing import string_hashes

    queries, docs, given = pairs
    out = np.ones(len(qrels), dtype=np.float64)
    if not queries:
        raise PolicyError(f"{where} holds no item")
    segments = qrels.rows_of(queries)
    if not (segments >= 0).any():
        raise RankmeterError(
            f"{where} shares no query with the qrels ({qrels.source}): its queries start "
            f"{', '.join(sorted(set(queries))[:3])}; check that the pool and the qrels belong "
            "together"
        )
    strings = arrow_strings(docs)
    rows = np.arange(len(docs), dtype=np.int64)
    codes = qrels.doc_lookup().codes(strings, string_hashes(strings), rows)
    known = np.flatnonzero((segments >= 0) & (codes >= 0))
    at = qrels.judgment_rows(segments[known], codes[known])
    found = at >= 0
    judged = found.copy()
    judged[found] = qrels.grades[at[found]] >= 0
    if not judged.any():
        raise RankmeterError(
            f"none of the {len(queries)} items of {where} is judged in the qrels "
            f"({qrels.source}): judge the sample first (e.g. with `rankmeter judge`) and give "
            "the qrels that hold its judgments"
        )
    out[at[found]] = np.asarray(given, dtype=np.float64)[known[found]]
    return out, (int(judged.sum()), int((segments >= 0).sum()))
