"""The collections an embedding model is evaluated on: a BEIR folder, a loaded
:class:`~rankmeter.io.beir.BeirCollection`, or separate qrels, queries and corpus files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rankmeter.errors import FormatError, RankmeterError

__all__ = ["collection_from_files"]


def collection_from_files(
    qrels: Any,
    queries: str | os.PathLike[str],
    corpus: str | os.PathLike[str],
) -> Any:
    """A collection from separate files: qrels (any format :func:`rankmeter.io.read_qrels`
    reads, or a Qrels), queries (any layout :func:`rankmeter.io.annotations.read_queries`
    reads: TSV ``query_id<TAB>text``, BEIR JSONL, a CSV/TSV/JSONL/Parquet table with a query id
    and a text column) and a corpus (BEIR JSONL ``{"_id", "title", "text"}``).

    Returns a :class:`rankmeter.io.beir.BeirCollection` holding the judged queries.
    """
    from rankmeter.io import as_qrels, read_corpus
    from rankmeter.io.annotations import read_queries
    from rankmeter.io.beir import BeirCollection

    loaded = as_qrels(qrels)
    corpus_path = Path(corpus)
    queries_path = Path(queries)
    for label, path in (("corpus", corpus_path), ("queries", queries_path)):
        # Any readable input, a FIFO or a process substitution (/dev/fd/N) too: io reads each
        # once, as a stream.
        if not path.exists():
            raise FormatError(str(path), f"no such file (the {label})")
        if path.is_dir():
            raise FormatError(str(path), f"is a directory, expected a file (the {label})")
    docs = read_corpus(corpus_path)
    texts = read_queries(queries_path)
    judged = set(loaded.query_ids)
    missing = [q for q in loaded.query_ids if q not in texts]
    if missing:
        raise FormatError(
            str(queries_path),
            f"{len(missing)} judged queries have no text, e.g. {missing[0]!r}",
        )
    judged_docs = set(loaded.to_arrow().column("doc_id").to_pylist())
    unknown = sorted(d for d in judged_docs if d not in docs)
    if unknown:
        raise FormatError(
            str(corpus_path),
            f"{len(unknown)} judged documents are not in the corpus, e.g. {unknown[0]!r}",
        )
    kept = {q: t for q, t in texts.items() if q in judged}
    return BeirCollection(corpus_path.parent, docs, kept, loaded, split="files")


def _load_collection(collection: Any, split: str) -> Any:
    from rankmeter.io.beir import BeirCollection, load_beir

    if isinstance(collection, BeirCollection):
        return collection
    if isinstance(collection, (str, os.PathLike)):
        return load_beir(collection, split=split)
    raise RankmeterError(
        "collection must be a BEIR-layout folder or a BeirCollection "
        f"(rankmeter.io.beir.load_beir); got {type(collection).__name__}"
    )


def _collection_label(given: Any, loaded: Any) -> str:
    """The collection as outputs name it: the folder as given, else its root (the qrels file
    for a collection read from separate files)."""
    if isinstance(given, (str, os.PathLike)):
        return os.fspath(given)
    if loaded.split == "files":
        return str(loaded.qrels.source)
    return str(loaded.root)
