"""A BM25 baseline (the ``bm25s`` package): the lexical run every embedding model should beat.

Needs the ``[bm25]`` extra (``pip install 'rankmeter[bm25]'``: bm25s, and PyStemmer for stemming).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from rankmeter._validate import integer, real
from rankmeter.data import Run
from rankmeter.errors import PolicyError, RankmeterError
from rankmeter.vector import RUN_DEPTH

if TYPE_CHECKING:
    from rankmeter.vector.retrieval import RetrievalResult

__all__ = ["bm25_run", "describe_bm25", "evaluate_bm25"]


def bm25_run(
    collection_or_corpus: Any,
    queries: Mapping[str, str] | None = None,
    *,
    k: int = RUN_DEPTH,
    k1: float = 1.5,
    b: float = 0.75,
    name: str = "bm25",
    stopwords: str | list[str] | None = "en",
    stemmer: Any = None,
) -> Run:
    """Retrieve the top ``k`` documents of every query with BM25 (Lucene's variant, bm25s).

    Parameters
    ----------
    collection_or_corpus : a :class:`~rankmeter.io.beir.BeirCollection` (``load_beir(path)``),
        whose corpus and queries are used; or a corpus ``{doc_id: text}`` (values may also be
        ``Document`` objects or ``{"title": ..., "text": ...}`` dicts, whose title and text are
        read together)
    queries : ``{query_id: text}``; required with a corpus dict, optional with a collection
        (default: the collection's judged queries)
    k : results per query (at most the number of documents that match a query term)
    k1 : term-frequency saturation (>= 0)
    b : document-length normalisation, from 0 (none) to 1 (full)
    name : the run's name (its TREC tag)
    stopwords : ``"en"`` (bm25s's English list), another language code bm25s knows, a list
        of words, or None to keep every word
    stemmer : None (no stemming), a Snowball language name such as ``"english"`` (needs
        PyStemmer), an object with a ``stemWords(words) -> stems`` method, or a function
        taking a list of words and returning their stems (as bm25s takes them)

    Returns
    -------
    Run with one result per matching document: documents that share no term with the query
    (score 0) are left out, so a query without any match has no results. Ties are broken
    deterministically, as trec_eval orders them: equal scores by doc id descending, also at
    the cutoff ``k`` (the documents kept are the ones that order puts first). Text is
    lower-cased and split into words of two or more letters or digits (bm25s's tokenizer).
    """
    corpus, default_queries = _inputs(collection_or_corpus)
    if queries is None:
        if default_queries is None:
            raise PolicyError(
                "queries are needed with a corpus dict: bm25_run(corpus, {query_id: text})"
            )
        queries = default_queries
    if not isinstance(queries, Mapping):
        raise PolicyError(
            f"queries must be a dict {{query_id: text}}, not {type(queries).__name__}"
        )
    if not queries:
        raise PolicyError("no queries to retrieve for")
    _check(k, k1, b)
    bm25s = _bm25s()
    stem = _stemmer(stemmer)
    doc_ids = [str(d) for d in corpus]
    texts = [_content(corpus[d]) for d in corpus]

    def tokenize(strings: list[str], *, return_ids: bool) -> Any:
        return bm25s.tokenize(
            strings,
            stopwords=stopwords,
            stemmer=stem,
            return_ids=return_ids,
            show_progress=False,
        )

    index = bm25s.BM25(k1=k1, b=b)
    index.index(tokenize(texts, return_ids=True), show_progress=False)
    query_ids = [str(q) for q in queries]
    query_tokens = tokenize([str(queries[q]) for q in queries], return_ids=False)
    # Position of each document in trec_eval's tie order (doc id descending, byte order: the
    # order of Python's str comparison for UTF-8), used to choose among equal scores at k.
    tie_rank = np.empty(len(doc_ids), dtype=np.int64)
    tie_rank[sorted(range(len(doc_ids)), key=doc_ids.__getitem__, reverse=True)] = np.arange(
        len(doc_ids)
    )
    out_queries: list[str] = []
    out_docs: list[int] = []
    out_scores: list[Any] = []
    for query_id, tokens in zip(query_ids, query_tokens, strict=True):
        if not tokens:  # only stopwords or one-letter words: nothing to match
            continue
        scores = np.asarray(index.get_scores(list(tokens)), dtype=np.float64)
        top = _top(scores, tie_rank, k)
        out_queries.extend([query_id] * len(top))
        out_docs.extend(top.tolist())
        out_scores.append(scores[top])
    if not out_docs:
        raise RankmeterError(
            f"no query shares a term with any document ({len(query_ids)} queries, "
            f"{len(doc_ids)} documents): check the texts, stopwords and stemmer"
        )
    docs = np.asarray(doc_ids, dtype=object)[np.asarray(out_docs, dtype=np.int64)]
    return Run.from_columns(
        out_queries, docs.tolist(), np.concatenate(out_scores), name=name, origin="<bm25>"
    )


def describe_bm25(
    *, k1: float = 1.5, b: float = 0.75, stopwords: Any = "en", stemmer: Any = None
) -> str:
    """BM25's settings in one line, as outputs name the retriever.

    >>> describe_bm25()
    'BM25 (bm25s; k1 1.5, b 0.75, stopwords en, no stemming)'
    """
    words = "none" if stopwords is None else stopwords if isinstance(stopwords, str) else "list"
    stemming = "no stemming" if stemmer is None else f"stemmer {stemmer}"
    if stemmer is not None and not isinstance(stemmer, str):
        stemming = "a custom stemmer"
    return f"BM25 (bm25s; k1 {k1:g}, b {b:g}, stopwords {words}, {stemming})"


def evaluate_bm25(
    collection: str | os.PathLike[str],
    metrics: str | Iterable[Any] | None = None,
    *,
    k: int = RUN_DEPTH,
    k1: float = 1.5,
    b: float = 0.75,
    stemmer: Any = None,
    split: str = "test",
    name: str = "bm25",
    run_out: str | os.PathLike[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> RetrievalResult:
    """Retrieve with BM25 over the BEIR collection at ``collection`` (its ``split`` qrels)
    and evaluate the run on every judged query
    (:func:`rankmeter.vector.retrieval.evaluate_retrieval`), as ``rankmeter bm25`` does;
    ``metrics`` default nDCG@10 P@10 R@100 RR AP.

    ``run_out``: the run is also written there (TREC, atomically) before it is evaluated.
    ``progress(label)`` is called as each stage begins (reading, retrieving, evaluating).
    """
    from rankmeter.io import write_trec_run
    from rankmeter.io.beir import load_beir
    from rankmeter.metrics import DEFAULT_METRICS, parse_metrics
    from rankmeter.vector.retrieval import evaluate_retrieval

    measures = parse_metrics(metrics or DEFAULT_METRICS)
    step = progress or (lambda label: None)
    step(f"reading {os.fspath(collection)}")
    loaded = load_beir(collection, split=split)
    step("retrieving")
    run = bm25_run(loaded, k=k, k1=k1, b=b, name=name, stemmer=stemmer)
    if run_out is not None:
        write_trec_run(run, run_out)
    step("evaluating")
    return evaluate_retrieval(
        loaded.qrels,
        run,
        measures,
        model=describe_bm25(k1=k1, b=b, stemmer=stemmer),
        collection=os.fspath(collection),
    )


def _top(scores: Any, tie_rank: Any, k: int) -> Any:
    """Indices of the top ``k`` positive scores, in trec_eval order (ties: doc id desc)."""
    candidates = np.flatnonzero(scores > 0)
    if len(candidates) > k:
        threshold = np.partition(scores[candidates], len(candidates) - k)[len(candidates) - k]
        candidates = candidates[scores[candidates] >= threshold]
    order = np.lexsort((tie_rank[candidates], -scores[candidates]))[:k]
    return candidates[order]


def _inputs(value: Any) -> tuple[Mapping[str, Any], Mapping[str, str] | None]:
    """(corpus, the collection's queries or None) of a collection or a corpus dict."""
    corpus = getattr(value, "corpus", None)
    found: tuple[Mapping[str, Any], Mapping[str, str] | None]
    if isinstance(corpus, Mapping) and isinstance(getattr(value, "queries", None), Mapping):
        found = (corpus, value.queries)
    elif isinstance(value, Mapping):
        found = (value, None)
    else:
        raise PolicyError(
            "expected a collection (rankmeter.io.beir.load_beir(path)) or a corpus dict "
            f"{{doc_id: text}}, not {type(value).__name__}"
        )
    if not found[0]:
        raise PolicyError("the corpus is empty: nothing to retrieve")
    return found


def _content(document: Any) -> str:
    """A document's text: a string, a ``Document`` (title and text), or a BEIR record."""
    if isinstance(document, str):
        return document
    content = getattr(document, "content", None)
    if isinstance(content, str):
        return content
    if isinstance(document, Mapping):
        parts = [str(document.get(key) or "") for key in ("title", "text")]
        return " ".join(p for p in parts if p)
    raise PolicyError(
        f"a document must be a string, a Document or a {{'title', 'text'}} dict, not "
        f"{type(document).__name__}"
    )


def _check(k: Any, k1: Any, b: Any) -> None:
    integer("k", k, low=1, what="results per query")
    real("k1", k1, low=0, what="term-frequency saturation")
    real("b", b, low=0, high=1, what="document-length normalisation")


def _bm25s() -> Any:
    from rankmeter.vector import require

    return require("bm25s", "bm25", "BM25 retrieval")


def _stemmer(stemmer: Any) -> Any:
    """What bm25s takes as a stemmer: None, an object with ``stemWords``, or a function."""
    if stemmer is None or callable(stemmer) or hasattr(stemmer, "stemWords"):
        return stemmer
    if not isinstance(stemmer, str):
        raise PolicyError(
            f"stemmer={stemmer!r} must be a language name (e.g. 'english'), an object with "
            "stemWords, a function, or None"
        )
    import importlib

    try:
        Stemmer = importlib.import_module("Stemmer")
    except ImportError:
        # Worded for the shell first (where most meet it), and for Python after.
        raise RankmeterError(
            f"the stemmer {stemmer!r} needs the PyStemmer package, which is not installed: "
            "pip install 'rankmeter[bm25]' (it brings PyStemmer); or leave out --stemmer "
            "(stemmer=None in Python) for no stemming"
        ) from None
    try:
        return Stemmer.Stemmer(stemmer)
    except KeyError:
        languages = ", ".join(sorted(Stemmer.algorithms()))
        raise PolicyError(
            f"stemmer={stemmer!r} is not a Snowball language; choose one of {languages}"
        ) from None
