"""Collections in BEIR layout: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``.

The layout MTEB and BEIR users have: a folder with

- ``corpus.jsonl``: one document per line, ``{"_id": ..., "title": ..., "text": ...}``;
- ``queries.jsonl``: one query per line, ``{"_id": ..., "text": ...}``;
- ``qrels/test.tsv`` (or another split): a header ``query-id corpus-id score`` and one
  judgment per line.

Errors name the file, the line and what is wrong.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from rankmeter.errors import FormatError

if TYPE_CHECKING:
    from rankmeter.io._source import Source

__all__ = ["BeirCollection", "Document", "load_beir", "read_corpus", "read_documents"]


@dataclass(frozen=True)
class Document:
    """A document of a collection: its title and text (either may be empty)."""

    title: str
    text: str

    @property
    def content(self) -> str:
        """Title and text together, as retrievers read a document."""
        return f"{self.title} {self.text}" if self.title and self.text else self.title or self.text


@dataclass(frozen=True)
class BeirCollection:
    """A collection in BEIR layout, loaded: documents, queries and judgments.

    Attributes
    ----------
    root : the folder
    corpus : ``{doc_id: Document}`` in file order
    queries : ``{query_id: text}`` for the queries of the split's judgments, in file order
    qrels : the split's judgments (:class:`rankmeter.Qrels`)
    split : the qrels split read (``"test"``)
    """

    root: Path
    corpus: Mapping[str, Document] = field(repr=False)
    queries: Mapping[str, str] = field(repr=False)
    qrels: Any = field(repr=False)
    split: str = "test"

    def __post_init__(self) -> None:
        object.__setattr__(self, "corpus", MappingProxyType(dict(self.corpus)))
        object.__setattr__(self, "queries", MappingProxyType(dict(self.queries)))

    def __repr__(self) -> str:
        return (
            f"BeirCollection({str(self.root)!r}, {len(self.corpus)} docs, "
            f"{len(self.queries)} queries, split {self.split!r})"
        )


def load_beir(path: str | os.PathLike[str], *, split: str = "test") -> BeirCollection:
    """Load a BEIR-layout collection folder.

    Only queries judged in the split are kept (BEIR's convention); a judged query or document
    missing from ``queries.jsonl`` or ``corpus.jsonl`` is an error naming it.
    """
    from rankmeter.io import read_qrels

    root = Path(path)
    if not root.is_dir():
        raise FormatError(
            str(root),
            "not a folder; a BEIR collection is a folder holding "
            "corpus.jsonl, queries.jsonl and qrels/<split>.tsv",
        )
    for name in ("corpus.jsonl", "queries.jsonl"):
        if not (root / name).is_file():
            raise FormatError(str(root / name), "missing: a BEIR collection needs it")
    qrels_path = root / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        splits = sorted(p.stem for p in (root / "qrels").glob("*.tsv"))
        available = f"; splits here: {', '.join(splits)}" if splits else ""
        raise FormatError(str(qrels_path), f"missing: no qrels for split {split!r}{available}")
    corpus = read_corpus(root / "corpus.jsonl")
    all_queries = {qid: _text(record, "text") for qid, record in _records(root / "queries.jsonl")}
    qrels = read_qrels(qrels_path, format="tsv")
    judged = qrels.query_ids
    missing = [q for q in judged if q not in all_queries]
    if missing:
        raise FormatError(
            str(root / "queries.jsonl"),
            f"{len(missing)} judged queries have no text, e.g. {missing[0]!r} (judged in "
            f"{qrels_path.name})",
        )
    unknown = sorted(d for d in qrels.doc_vocabulary.to_pylist() if d not in corpus)
    if unknown:
        raise FormatError(
            str(root / "corpus.jsonl"),
            f"{len(unknown)} judged documents are not in the corpus, e.g. {unknown[0]!r}",
        )
    judged_set = set(judged)  # built once: a query set can be large (MS MARCO: 500k)
    queries = {q: text for q, text in all_queries.items() if q in judged_set}
    return BeirCollection(root, corpus, queries, qrels, split)


def read_corpus(path: str | os.PathLike[str]) -> dict[str, Document]:
    """Read a corpus in BEIR JSON lines, ``{"_id": ..., "title": ..., "text": ...}`` per line,
    into ``{doc_id: Document}`` in file order (title and text may be missing or null: empty).

    Errors name the file, the line and what is wrong (not JSON, no ``_id``, an ``_id`` given
    twice, a title or text that is not a string, no records at all), as :func:`load_beir`'s.
    """
    return {
        doc_id: Document(_text(record, "title"), _text(record, "text"))
        for doc_id, record in _records(path)
    }


def read_documents(path: str | os.PathLike[str], ids: Iterable[str]) -> dict[str, Document]:
    """The documents ``ids`` of a corpus in BEIR JSON lines (or a BEIR collection's folder:
    its ``corpus.jsonl`` or ``corpus.jsonl.gz``, :func:`corpus_file`), read in one streaming
    pass that keeps only those: ``{doc_id: Document}`` in file order, an id not in the corpus
    left out.

    Memory holds the documents asked for, not the corpus: one query's ranked and judged
    documents can be looked up in a corpus of millions. Every line is checked as
    :func:`read_corpus` checks it (errors name the file, the line and what is wrong); an
    ``_id`` given twice is an error where it is one of ``ids`` (the others are not kept, so
    they are not compared).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "corpus.jsonl"
    >>> _ = path.write_text('{"_id": "d1", "title": "Wings", "text": "flutter"}\\n'
    ...                     '{"_id": "d2", "text": "heat"}\\n')
    >>> read_documents(path, ["d2", "nowhere"])
    {'d2': Document(title='', text='heat')}
    """
    from rankmeter.io._source import Source

    source = Source(corpus_file(path))
    wanted = {str(i) for i in ([ids] if isinstance(ids, str) else ids)}
    out: dict[str, Document] = {}
    for number, raw, key, record in _checked_records(source):
        if key not in wanted:
            continue
        if key in out:
            raise FormatError(
                source.name, f"_id {key!r} appears twice", line=number, text=_line_text(raw)
            )
        out[key] = Document(_text(record, "title"), _text(record, "text"))
    return out


def corpus_file(path: str | os.PathLike[str]) -> str | os.PathLike[str]:
    """The corpus a path names: a BEIR collection's folder is its ``corpus.jsonl`` (or
    ``corpus.jsonl.gz``), anything else itself; a folder with neither is a
    :class:`FormatError` naming it."""
    if not os.path.isdir(path):
        return path
    for name in ("corpus.jsonl", "corpus.jsonl.gz"):
        if os.path.isfile(os.path.join(path, name)):
            return os.path.join(path, name)
    raise FormatError(
        os.fspath(path),
        "a folder without corpus.jsonl or corpus.jsonl.gz; give the corpus file or a BEIR "
        "collection's folder",
    )


def _records(path: str | os.PathLike[str]) -> list[tuple[str, dict[str, Any]]]:
    """The JSON-lines records of ``path``, read once as a stream: a file, a FIFO, ``/dev/fd/N``
    (a process substitution), ``-``, any of them gzip-compressed."""
    from rankmeter.io._source import Source

    source = Source(path)
    out: list[tuple[str, dict[str, Any]]] = []
    seen: set[str] = set()
    for number, raw, key, record in _checked_records(source):
        if key in seen:
            raise FormatError(
                source.name, f"_id {key!r} appears twice", line=number, text=_line_text(raw)
            )
        seen.add(key)
        out.append((key, record))
    return out


def _checked_records(source: Source) -> Iterator[tuple[int, bytes, str, dict[str, Any]]]:
    """Each record of ``source`` as ``(line number, line, _id, record)``, checked (JSON, an
    object with a good ``_id``, string title and text), one at a time; no records at all is an
    error."""
    from rankmeter.io._source import split_lines

    name = source.name
    empty = True
    for number, raw in enumerate(split_lines(source.blocks()), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "not UTF-8"
            raise FormatError(
                name, f"not valid JSON ({reason})", line=number, text=_line_text(raw)
            ) from None
        if not isinstance(record, dict) or "_id" not in record:
            raise FormatError(
                name, 'each line must be an object with an "_id"', line=number, text=_line_text(raw)
            )
        problem = _record_problem(record)
        if problem is not None:
            raise FormatError(name, problem, line=number, text=_line_text(raw))
        key = str(record["_id"])
        if not key:
            raise FormatError(name, "empty _id", line=number, text=_line_text(raw))
        empty = False
        yield number, raw, key, record
    if empty:
        raise FormatError(name, "empty: no records")


def _line_text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace").rstrip("\r\n")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _record_problem(record: Mapping[str, Any]) -> str | None:
    """What is wrong with a record's id, title or text, or None."""
    from rankmeter.io.tables import json_type

    key = record["_id"]
    if not isinstance(key, (str, int)) or isinstance(key, bool):
        return f"_id must be a string or an integer, not {json_type(key)}"
    for field_name in ("title", "text"):
        value = record.get(field_name)
        if value is not None and not isinstance(value, str):
            return f"{field_name} must be a string, not {json_type(value)}"
    for field_name in ("_id", "title", "text"):
        # Valid JSON ("\ud800"), but half of a UTF-16 pair is no character: no output file
        # could be written with it, so the line is named here rather than a write failing.
        value = record.get(field_name)
        lone = _SURROGATE.search(value) if isinstance(value, str) else None
        if lone is not None:
            return (
                f"{field_name} holds a lone surrogate (\\u{ord(lone.group()):04x}): half of a "
                "UTF-16 pair, not a character"
            )
    return None


def _text(record: Mapping[str, Any], key: str) -> str:
    value = record.get(key)
    return "" if value is None else str(value)
