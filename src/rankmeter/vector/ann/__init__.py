"""ANN recall: how much of the exact nearest neighbours an approximate index returns.

Two different things are both called recall in vector search. A *search system's* Recall@k
(:mod:`rankmeter.metrics`) is the share of the relevant documents found in the top k: it needs
relevance judgments. An *index's* recall@k, measured here, is the share of the exact k nearest
neighbours that the approximate index returns: it needs no judgments, and it says whether the
index (rather than the embedding model) is what loses results.

The pieces, one module each:

- :mod:`~rankmeter.vector.ann.spec`: :func:`parse_index_spec`, a small grammar for indexes,
  e.g. ``hnsw(M=16,efSearch=64)``, ``ivf(nlist=100,nprobe=8)``, ``pq(m=8,nbits=8)``,
  ``ivfpq(nlist=100,m=8,nprobe=8)``, ``flat``; parameter sweeps (:func:`parse_sweep` reads
  them as typed); which backend builds what.
- :mod:`~rankmeter.vector.ann.backends`: :func:`make_index` builds one behind a small
  interface (:class:`Index`: ``add``, ``search``, ``set`` for search-time parameters,
  ``nbytes``) over FAISS or hnswlib.
- :mod:`~rankmeter.vector.ann.recall`: :func:`ann_recall`, recall@k against
  :func:`~rankmeter.vector.exact.exact_search`, queries per second, build time and memory, for
  one index or a sweep of a parameter; its results :class:`AnnRecall` and :class:`AnnRow`
  (data only: :mod:`rankmeter.report.ann` renders them).
- :mod:`~rankmeter.vector.ann.bench`: :func:`ann_benchmark`, several indexes and their sweeps
  in one run (recall, batch QPS, single-query latency percentiles, build time and threads,
  memory, and with judgments the quality each setting loses against exact search);
  :func:`pareto_frontier`.
- :mod:`~rankmeter.vector.ann.collection`: :func:`collection_vectors`, a BEIR collection
  embedded by a model, the index settings checked against it first.
- :mod:`~rankmeter.vector.ann.results`: :func:`load_results` reads back the results that
  accumulate.
- :mod:`~rankmeter.vector.ann.measure`: :func:`measure_indexes`, ``rankmeter ann-recall`` in
  one call: specs and sweeps as typed, vector files or a collection folder, one index or
  several; each error names the parameter it is about.
"""

from __future__ import annotations

from rankmeter.vector.ann.backends import Index, make_index
from rankmeter.vector.ann.bench import (
    QUALITY_METRICS,
    RESULT_SCHEMA,
    AnnBenchmark,
    AnnPoint,
    QualityLoss,
    ann_benchmark,
    benchmark_settings,
    latency_percentiles,
    pareto_frontier,
    query_latencies,
)
from rankmeter.vector.ann.collection import CollectionVectors, collection_vectors
from rankmeter.vector.ann.measure import DEFAULT_INDEX, measure_indexes
from rankmeter.vector.ann.recall import (
    RECALL_RULE,
    SIMD_LANES,
    TIMED_BUDGET_S,
    TIMED_RUNS,
    TOLERANCE_ULPS,
    AnnRecall,
    AnnRow,
    ann_recall,
    tie_tolerance,
)
from rankmeter.vector.ann.results import load_results
from rankmeter.vector.ann.spec import (
    BACKENDS,
    IndexSpec,
    IndexSpecError,
    check_backend,
    check_index_fits,
    parse_index_spec,
    parse_sweep,
    sweep_settings,
)

__all__ = [
    "BACKENDS",
    "DEFAULT_INDEX",
    "QUALITY_METRICS",
    "RECALL_RULE",
    "RESULT_SCHEMA",
    "SIMD_LANES",
    "TIMED_BUDGET_S",
    "TIMED_RUNS",
    "TOLERANCE_ULPS",
    "AnnBenchmark",
    "AnnPoint",
    "AnnRecall",
    "AnnRow",
    "CollectionVectors",
    "Index",
    "IndexSpec",
    "IndexSpecError",
    "QualityLoss",
    "ann_benchmark",
    "ann_recall",
    "benchmark_settings",
    "check_backend",
    "check_index_fits",
    "collection_vectors",
    "latency_percentiles",
    "load_results",
    "make_index",
    "measure_indexes",
    "pareto_frontier",
    "parse_index_spec",
    "parse_sweep",
    "query_latencies",
    "sweep_settings",
    "tie_tolerance",
]
