"""Labelers: anything that grades a document for a query, applied to every item of a pool.

A labeler is any Python callable ``(query_text, doc_text) -> grade``: a rule, a classifier, a
call to a model. :func:`label_pool` reads the texts (query texts as ``compare --queries``
reads them, the corpus in BEIR JSON lines), asks the labeler about every (query, doc) item of
a pool (:func:`rankmeter.io.read_pool`) and returns the grades as :class:`~rankmeter.Qrels`,
checked against a scale. :func:`load_labeler` finds a labeler by name, ``module:function``,
as ``rankmeter label --labeler`` does.
"""

from __future__ import annotations

import importlib
import numbers
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from rankmeter.errors import FormatError, PolicyError, RankmeterError

__all__ = ["Labeler", "label_pool", "load_labeler"]


class Labeler(Protocol):
    """Grades one document for one query: ``labeler(query_text, doc_text) -> grade``.

    The grade is a whole number on the scale :func:`label_pool` is given (``0-3`` by default).
    """

    def __call__(self, query_text: str, doc_text: str) -> int | float: ...


def _text(value: Any) -> str:
    """A corpus entry as text: a BEIR :class:`~rankmeter.io.beir.Document` (title and text
    together, as retrievers read it) or a string."""
    content = getattr(value, "content", None)
    return str(content) if content is not None else str(value)


def _load_texts(given: Any, what: str) -> tuple[Mapping[str, Any], str]:
    """``{id: text}`` from a path or a mapping, and how errors name it."""
    if isinstance(given, Mapping):
        return given, f"<{what}>"
    if isinstance(given, (str, os.PathLike)):
        name = "<stdin>" if os.fspath(given) == "-" else os.fspath(given)
        if what == "queries":
            from rankmeter.io.annotations import read_queries

            return read_queries(given), name
        from rankmeter.io import read_corpus

        return read_corpus(given), name
    raise PolicyError(f"{what} must be a path or a dict {{id: text}}, not {type(given).__name__}")


def label_pool(
    pool: Any,
    queries: Any,
    corpus: Any,
    labeler: Callable[[str, str], Any],
    *,
    scale: Any = "0-3",
    progress: Callable[[str], None] | None = None,
    source: str | None = None,
) -> Any:
    """Grade every item of a pool with ``labeler``; the grades as qrels.

    Parameters
    ----------
    pool : path or sequence of PoolItem
        The (query, doc) items to grade, as ``rankmeter pool`` writes them
        (:func:`rankmeter.io.read_pool`).
    queries : path or dict
        Query texts ``{query_id: text}``: BEIR ``queries.jsonl``, ``qid<TAB>text`` or a table
        (as ``rankmeter compare --queries`` reads them).
    corpus : path or dict
        The documents: BEIR ``corpus.jsonl`` (title and text are given together) or
        ``{doc_id: text}``.
    labeler : callable ``(query_text, doc_text) -> grade``
    scale : str or (int, int)
        The grades the labeler may give, ``"0-3"``.
    progress : callable, optional
        Called with a short description before each item is graded (``rankmeter label``
        draws its progress bar with it): a labeler may take seconds an item.
    source : str, optional
        How errors name the pool when its items are given rather than its path (the file
        they were read from); default the path, or ``<pool>``.

    Returns
    -------
    Qrels
        One judgment per pool item, in the pool's order of queries.

    Raises
    ------
    FormatError
        A pool item whose query or document has no text (naming it and the file), or whose id
        cannot be written as TREC qrels (empty, or with whitespace), or a grade
        that is not a whole number on the scale (naming the item and the grade).
    RankmeterError
        The labeler raised: the item and the labeler's own error, on one line.

    Examples
    --------
    >>> from rankmeter.io.pool import PoolItem
    >>> pool = [PoolItem("q1", "d1", {"bm25": 1}, 1, 1.0), PoolItem("q1", "d2", {"bm25": 2}, 2, 1.0)]
    >>> overlap = lambda query, doc: min(3, len(set(query.split()) & set(doc.split())))
    >>> qrels = label_pool(pool, {"q1": "wing flutter"}, {"d1": "flutter of a wing", "d2": "heat"},
    ...                    overlap)
    >>> qrels.to_dict()
    {'q1': {'d1': 2, 'd2': 0}}
    """
    from rankmeter.data import Qrels
    from rankmeter.data.labels import parse_scale
    from rankmeter.io import TREC_ID_RULE, read_pool, trec_id_writable

    bounds = parse_scale(scale)
    if bounds is None:
        raise PolicyError("scale=None: give the grades a labeler may give, such as '0-3'")
    if not callable(labeler):
        raise PolicyError(
            f"labeler must be a callable (query_text, doc_text) -> grade, not "
            f"{type(labeler).__name__}"
        )
    items: Sequence[Any] = read_pool(pool) if isinstance(pool, (str, os.PathLike)) else tuple(pool)
    if source is not None:
        pool_name = source
    else:
        pool_name = os.fspath(pool) if isinstance(pool, (str, os.PathLike)) else "<pool>"
    query_texts, queries_name = _load_texts(queries, "queries")
    documents, corpus_name = _load_texts(corpus, "corpus")
    # Every text is looked up before the labeler is asked anything: a slow labeler must not
    # run for an hour and then stop at a missing document, or at an id the qrels cannot hold.
    for item in items:
        for what, value in (("query", item.query_id), ("doc", item.doc_id)):
            if not trec_id_writable(value):
                raise FormatError(
                    pool_name,
                    f"{what} id {value!r} (query {item.query_id!r}) cannot be written as TREC "
                    f"qrels: {TREC_ID_RULE}",
                )
        if item.query_id not in query_texts:
            raise FormatError(
                queries_name,
                f"query {item.query_id!r} of the pool {pool_name} has no text here (give the "
                "queries file the pool was made for)",
            )
        if item.doc_id not in documents:
            raise FormatError(
                corpus_name,
                f"doc {item.doc_id!r} (query {item.query_id!r}) of the pool {pool_name} is not "
                "in the corpus (give the corpus the pool was made for)",
            )
    low, high = bounds
    grades: list[int] = []
    name = getattr(labeler, "__qualname__", None) or type(labeler).__name__
    for item in items:
        if progress is not None:
            progress(f"labelling query {item.query_id}")
        try:
            grade = labeler(str(query_texts[item.query_id]), _text(documents[item.doc_id]))
        except RankmeterError:
            raise
        except Exception as exc:
            raise RankmeterError(
                f"labeler {name} failed on query {item.query_id!r}, doc {item.doc_id!r}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        if (
            isinstance(grade, bool)
            or not isinstance(grade, numbers.Real)
            or not float(grade).is_integer()
            or not low <= float(grade) <= high
        ):
            raise FormatError(
                pool_name,
                f"labeler {name} gave query {item.query_id!r}, doc {item.doc_id!r} the grade "
                f"{grade!r}, not a whole number on the scale {low}-{high}",
            )
        grades.append(int(float(grade)))
    return Qrels.from_columns(
        [i.query_id for i in items],
        [i.doc_id for i in items],
        grades,
        origin=pool_name,
    )


def load_labeler(spec: str) -> Callable[[str, str], Any]:
    """The callable that ``spec``, ``"module:function"``, names (``"package.module:name"``, a
    dotted attribute after the colon). The current directory is searched first, as uvicorn
    does for its ``module:app``, so that a ``my_labeler.py`` beside the data is found.

    >>> load_labeler("operator:eq")("a", "a")
    True
    >>> load_labeler("operator")
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: --labeler 'operator' must be module:function, such as my_labels:grade
    """
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise PolicyError(f"--labeler {spec!r} must be module:function, such as my_labels:grade")
    added = os.getcwd() not in sys.path
    if added:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise PolicyError(f"--labeler {spec!r}: cannot import {module_name!r} ({exc})") from None
    finally:
        if added:
            sys.path.remove(os.getcwd())
    found: Any = module
    for part in attribute.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise PolicyError(
                f"--labeler {spec!r}: module {module_name!r} has no {attribute!r}"
            ) from None
    if not callable(found):
        raise PolicyError(
            f"--labeler {spec!r} is a {type(found).__name__}, not a callable "
            "(query_text, doc_text) -> grade"
        )
    return found  # type: ignore[no-any-return]
