"""Several indexes and their sweeps in one run, ann-benchmarks style: :func:`ann_benchmark`.

For every index setting: recall@k against the exact neighbours (the rule of
:func:`~rankmeter.vector.ann.ann_recall`), batch queries per second, the latency of single
queries (each query searched on its own and timed, p50/p95/p99), the build time with the
threads it used, and the index's size. With judgments (a collection's qrels), also the
retrieval quality each setting costs against exact search: nDCG@10 and Recall@100 of the
index's ranking against the exact ranking, paired over the queries by
:func:`rankmeter.compare` (interval and corrected p), so that the fastest index that loses no
significant quality can be picked.

:func:`pareto_frontier` marks the settings that no other setting beats on both recall and
speed; :func:`~rankmeter.vector.ann.results.load_results` reads back the per-setting JSON files
that :func:`rankmeter.report.ann.write_results` writes, so that results accumulate over runs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter import _validate
from rankmeter.errors import RankmeterError
from rankmeter.vector._vectors import load_vectors, same_dimension
from rankmeter.vector.ann.backends import Index, make_index, memory_method
from rankmeter.vector.ann.recall import (
    RECALL_RULE,
    _ks,
    _label,
    _recall,
    _timed_search,
    tie_tolerance,
)
from rankmeter.vector.ann.spec import (
    IndexSpec,
    IndexSpecError,
    check_backend,
    check_index_fits,
    parse_index_spec,
    sweep_settings,
)
from rankmeter.vector.exact import check_metric, exact_search, normalized, score_pairs

__all__ = [
    "QUALITY_METRICS",
    "RESULT_SCHEMA",
    "AnnBenchmark",
    "AnnPoint",
    "QualityLoss",
    "ann_benchmark",
    "benchmark_settings",
    "latency_percentiles",
    "pareto_frontier",
    "query_latencies",
]


def __getattr__(name: str) -> Any:
    """``load_results``, which moved to :mod:`rankmeter.vector.ann.results` (it imports this
    module, so it is imported here on first use, not at the top): ``from
    rankmeter.vector.ann.bench import load_results`` works as it did before issue 23."""
    if name == "load_results":
        from rankmeter.vector.ann.results import load_results

        return load_results
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


FloatArray = npt.NDArray[np.float64]
Float32Array = npt.NDArray[np.float32]

#: The retrieval metrics whose loss against exact search is measured when qrels are given.
QUALITY_METRICS = ("nDCG@10", "R@100")
#: The level at which a setting's quality loss is significant (after Holm's correction).
QUALITY_ALPHA = 0.05
#: What a results file says it is (and what :func:`load_results` accepts).
RESULT_SCHEMA = "rankmeter.ann-benchmark/1"


def pareto_frontier(points: Sequence[tuple[float, float]]) -> list[bool]:
    """Which points are on the Pareto frontier of (recall, speed), both higher-is-better.

    A point is on the frontier when no other point has both a recall and a speed at least as
    high, one of them strictly higher. Equal points do not dominate each other, so duplicates
    on the frontier are all on it.

    >>> pareto_frontier([(0.9, 100.0), (0.8, 50.0), (0.99, 10.0), (0.9, 100.0)])
    [True, False, True, True]
    """
    flags = []
    for i, (recall, speed) in enumerate(points):
        dominated = any(
            other_recall >= recall
            and other_speed >= speed
            and (other_recall > recall or other_speed > speed)
            for j, (other_recall, other_speed) in enumerate(points)
            if j != i
        )
        flags.append(not dominated)
    return flags


def query_latencies(
    index: Index,
    queries: Float32Array,
    k: int,
    clock: Callable[[], float] = time.perf_counter,
) -> FloatArray:
    """The wall time of each query searched on its own (a batch of one), in seconds.

    ``clock`` is read just before and just after each search (``time.perf_counter`` by
    default; a test passes a fake one).
    """
    times = np.empty(queries.shape[0], dtype=np.float64)
    for row in range(queries.shape[0]):
        started = clock()
        index.search(queries[row : row + 1], k)
        times[row] = clock() - started
    return times


def latency_percentiles(times: Sequence[float] | FloatArray) -> tuple[float, float, float]:
    """p50, p95 and p99 of the latencies (NumPy's linear interpolation between ranks).

    >>> latency_percentiles([0.001] * 99 + [0.101])
    (0.001, 0.001, 0.002)
    """
    values = np.asarray(times, dtype=np.float64)
    if values.size == 0:
        raise RankmeterError("no latencies to summarise: give at least one query")
    p50, p95, p99 = np.percentile(values, [50, 95, 99])
    return (round(float(p50), 12), round(float(p95), 12), round(float(p99), 12))


@dataclass(frozen=True)
class QualityLoss:
    """What one index setting costs on one retrieval metric, against exact search.

    ``difference`` = index mean - exact mean (negative: quality lost), with its interval
    ``[low, high]`` and the p-value of the paired test, corrected over every setting and metric
    of the run (:func:`rankmeter.compare`). ``significant``: the corrected p is below alpha.
    """

    metric: str
    exact: float
    ann: float
    difference: float
    low: float
    high: float
    p_value: float
    p_corrected: float
    significant: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "exact": self.exact,
            "ann": self.ann,
            "difference": self.difference,
            "low": self.low,
            "high": self.high,
            "p_value": self.p_value,
            "p_corrected": self.p_corrected,
            "significant": self.significant,
        }


@dataclass(frozen=True)
class AnnPoint:
    """One index setting, measured.

    Attributes
    ----------
    index : str
        The index as given (``--index``), canonical: the family the setting belongs to.
    setting : str
        The full spec searched, e.g. ``hnsw(M=16,efConstruction=200,efSearch=32)``.
    backend : str
    params : mapping
    recall, qps : mappings k -> recall@k, k -> batch queries per second at k
    latency_k : int
        The k of the single-query latencies.
    p50_s, p95_s, p99_s : float
        Percentiles of the single-query latency, in seconds.
    build_s : float
        Training plus adding the corpus (shared by the settings that reuse the build).
    build_threads : int
        Threads the build used (HNSW graphs are always built on one, for a reproducible
        graph; IVF and PQ training uses the search threads).
    nbytes : int
    quality : tuple of QualityLoss
        Empty without judgments.
    """

    index: str
    setting: str
    backend: str
    params: Mapping[str, int]
    recall: Mapping[int, float]
    qps: Mapping[int, float]
    latency_k: int
    p50_s: float
    p95_s: float
    p99_s: float
    build_s: float
    build_threads: int
    nbytes: int
    quality: tuple[QualityLoss, ...] = ()

    def __post_init__(self) -> None:
        for name in ("params", "recall", "qps"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))

    @property
    def kind(self) -> str:
        """The index family: ``hnsw``, ``ivf``, ``ivfpq``, ..."""
        return parse_index_spec(self.setting).kind

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "setting": self.setting,
            "backend": self.backend,
            "params": dict(self.params),
            "recall": {str(k): v for k, v in self.recall.items()},
            "qps": {str(k): v for k, v in self.qps.items()},
            "latency_k": self.latency_k,
            "latency_s": {"p50": self.p50_s, "p95": self.p95_s, "p99": self.p99_s},
            "build_s": self.build_s,
            "build_threads": self.build_threads,
            "nbytes": self.nbytes,
            "quality": [q.to_dict() for q in self.quality],
        }


@dataclass(frozen=True)
class AnnBenchmark:
    """The result of :func:`ann_benchmark` (or of :func:`load_results`): one
    :class:`AnnPoint` per index setting, in the order measured.

    ``threads``: the search threads (None: all cores). ``quality_note`` says how the quality
    lost was measured (empty without judgments).
    """

    corpus: str
    queries: str
    metric: str
    k: tuple[int, ...]
    points: tuple[AnnPoint, ...]
    n_corpus: int
    n_queries: int
    dim: int
    seed: int
    threads: int | None
    exact_s: float
    version: str
    quality_note: str = ""
    recall_rule: str = RECALL_RULE
    sweep: Mapping[str, tuple[int, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sweep", MappingProxyType(dict(self.sweep)))

    @property
    def chart_k(self) -> int:
        """The k of the chart, the frontier and the latencies: 10 when measured, else the
        middle one."""
        return 10 if 10 in self.k else self.k[len(self.k) // 2]

    @property
    def indexes(self) -> tuple[str, ...]:
        """The indexes (families) measured, in order."""
        return tuple(dict.fromkeys(p.index for p in self.points))

    @property
    def memory_methods(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(memory_method(p.backend) for p in self.points))

    def frontier(self, k: int | None = None) -> list[bool]:
        """For each point, whether it is on the Pareto frontier of recall@k and batch QPS@k."""
        k = self.chart_k if k is None else k
        return pareto_frontier([(p.recall[k], p.qps[k]) for p in self.points])

    def to_dict(self) -> dict[str, Any]:
        return {
            "corpus": self.corpus,
            "queries": self.queries,
            "metric": self.metric,
            "k": list(self.k),
            "sweep": {name: list(values) for name, values in self.sweep.items()},
            "n_corpus": self.n_corpus,
            "n_queries": self.n_queries,
            "dim": self.dim,
            "seed": self.seed,
            "threads": self.threads,
            "exact_s": self.exact_s,
            "rankmeter_version": self.version,
            "recall_rule": self.recall_rule,
            "quality_note": self.quality_note,
            "points": [
                {**p.to_dict(), "frontier": on}
                for p, on in zip(self.points, self.frontier(), strict=True)
            ],
        }

    def point_record(self, point: AnnPoint) -> dict[str, Any]:
        """One setting's results file: the dataset, the setting and its figures, the threads,
        the rankmeter version (what :func:`load_results` reads back)."""
        return {
            "schema": RESULT_SCHEMA,
            "dataset": {
                "corpus": self.corpus,
                "queries": self.queries,
                "n_corpus": self.n_corpus,
                "n_queries": self.n_queries,
                "dim": self.dim,
            },
            "metric": self.metric,
            "k": list(self.k),
            "seed": self.seed,
            "threads": self.threads,
            "exact_s": self.exact_s,
            "rankmeter_version": self.version,
            "quality_note": self.quality_note,
            "measured": point.to_dict(),
        }


def benchmark_settings(
    indexes: Sequence[str | IndexSpec],
    sweep: Mapping[str, Sequence[int]] | None,
    backend: str = "faiss",
) -> list[tuple[IndexSpec, list[IndexSpec]]]:
    """Each index (checked against the backend) with its settings: every swept parameter
    that the index has is swept (``efSearch`` for HNSW, ``nprobe`` for IVF); a swept name
    that none of the indexes has is an error, as is an index given twice."""
    if not indexes:
        raise IndexSpecError("give at least one index, e.g. 'hnsw(M=16)'")
    specs: list[IndexSpec] = []
    for given in indexes:
        spec = parse_index_spec(given)
        check_backend(spec, backend)
        if spec in specs:
            raise IndexSpecError(f"{spec} is given twice")
        specs.append(spec)
    used: set[str] = set()
    plans = []
    for spec in specs:
        own: dict[str, Sequence[int]] = {}
        for name, values in (sweep or {}).items():
            try:
                spec.param_name(name)
            except IndexSpecError:
                continue
            own[name] = values
            used.add(name)
        plans.append((spec, sweep_settings(spec, own)))
    unused = [name for name in (sweep or {}) if name not in used]
    if unused:
        raise IndexSpecError(
            f"no index given has the swept parameter {unused[0]!r} "
            f"(indexes: {', '.join(map(str, specs))})"
        )
    return plans


def _build_threads(spec: IndexSpec, threads: int | None) -> int:
    # Index.add builds HNSW on one thread; training uses the search threads (None: all).
    if spec.kind == "hnsw" or spec.kind == "flat":
        return 1
    return threads if threads is not None else (os.cpu_count() or 1)


def ann_benchmark(
    corpus: Any,
    queries: Any,
    indexes: Sequence[str | IndexSpec],
    *,
    k: int | Sequence[int] = (1, 10, 100),
    metric: str = "ip",
    backend: str = "faiss",
    sweep: Mapping[str, Sequence[int]] | None = None,
    seed: int = 0,
    threads: int | None = 1,
    qrels: Any = None,
    query_ids: Sequence[str] | None = None,
    doc_ids: Sequence[str] | None = None,
    resamples: int = 10_000,
    clock: Callable[[], float] = time.perf_counter,
) -> AnnBenchmark:
    """Several indexes, each with its sweep, on the same vectors: recall, speed, latency,
    build time, memory and (with ``qrels``) the retrieval quality each setting loses.

    Each index is built once per value of its build-time parameters, and every search-time
    value of the sweep reuses it. For each setting and k: recall@k as
    :func:`~rankmeter.vector.ann.ann_recall` measures it, and batch QPS (one search of all
    queries, the fastest of up to 5 runs). Single-query latency: every query searched alone
    at :attr:`AnnBenchmark.chart_k`, each timed by ``clock``, summarised as p50/p95/p99.

    Parameters
    ----------
    corpus, queries : arrays or paths to ``.npy`` / ``.parquet`` files
    indexes : index specs, e.g. ``["hnsw(M=16)", "hnsw(M=32)", "ivf(nlist=256)"]``
    k, metric, backend, seed, threads : as for :func:`~rankmeter.vector.ann.ann_recall`
    sweep : mapping of parameter name to values
        Applied to every index that has the parameter (``efSearch`` to HNSW, ``nprobe`` to
        IVF and IVF-PQ); a name that no index has is an error.
    qrels, query_ids, doc_ids : optional
        Judgments, and the ids of the query rows and corpus rows: then each setting's top 100
        (a :class:`~rankmeter.Run`) is compared with the exact top 100 on
        :data:`QUALITY_METRICS` by :func:`rankmeter.compare` (randomization test with
        ``resamples`` sign flips and ``seed``, Holm's correction over every setting and
        metric, 95 % BCa intervals of the difference, every judged query).
    clock : callable
        The clock of the single-query latencies (a test passes a fake one).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> corpus = rng.normal(size=(500, 8)).astype("float32")
    >>> result = ann_benchmark(corpus, corpus[:20], ["hnsw(M=8)", "ivf(nlist=16)"], k=[10],
    ...                        metric="l2", sweep={"efSearch": [4, 64], "nprobe": [1, 16]})
    >>> [p.setting for p in result.points]  # doctest: +NORMALIZE_WHITESPACE
    ['hnsw(M=8,efConstruction=200,efSearch=4)', 'hnsw(M=8,efConstruction=200,efSearch=64)',
     'ivf(nlist=16,nprobe=1)', 'ivf(nlist=16,nprobe=16)']
    >>> result.points[3].recall[10]  # every list probed: exhaustive
    1.0
    """
    check_metric(metric)
    plans = benchmark_settings(indexes, sweep, backend)
    ks = _ks(k)
    resamples = _validate.resamples(resamples, what="sign flips of the paired test")
    base = load_vectors(corpus, "corpus")
    ask = load_vectors(queries, "queries")
    names = (_label(corpus, "corpus"), _label(queries, "queries"))
    same_dimension(base, ask, names)
    if ks[-1] > base.shape[0]:
        raise RankmeterError(
            f"k={ks[-1]} is more than the corpus has ({base.shape[0]} vectors); "
            "give smaller k values"
        )
    # Every setting fits the vectors, checked before the first build (not after the others).
    for _, settings in plans:
        for setting in settings:
            check_index_fits(setting, dim=base.shape[1], n_vectors=base.shape[0], what="the corpus")
    judged = qrels is not None
    depth = min(100, base.shape[0])
    row_ids: tuple[list[str], list[str]] = ([], [])
    if judged:
        row_ids = _check_ids(query_ids, doc_ids, ask.shape[0], base.shape[0])
    ref_base, ref_ask, ref_metric = base.astype(np.float64), ask.astype(np.float64), metric
    if metric == "cosine":
        ref_base, ref_ask = normalized(ref_base, names[0]), normalized(ref_ask, names[1])
        ref_metric = "ip"
    started = time.perf_counter()
    exact_scores, exact_ids = exact_search(ref_base, ref_ask, max(ks[-1], depth), ref_metric)
    exact_s = time.perf_counter() - started
    tol = tie_tolerance(base, ask, metric)
    latency_k = 10 if 10 in ks else ks[len(ks) // 2]

    points: list[AnnPoint] = []
    hits: list[tuple[Any, Any]] = []
    for spec, settings in plans:
        built: Index | None = None
        built_key: dict[str, int] | None = None
        build_s = 0.0
        nbytes = 0
        for setting in settings:
            if built is None or setting.build_params != built_key:
                built = make_index(
                    setting, base.shape[1], metric, backend, seed=seed, threads=threads
                )
                began = time.perf_counter()
                built.add(base)
                build_s = time.perf_counter() - began
                nbytes = built.nbytes
                built_key = setting.build_params
            built.set(**setting.search_params)
            recall: dict[int, float] = {}
            qps: dict[int, float] = {}
            for cutoff in ks:
                ids, search_s = _timed_search(built, ask, cutoff)
                true_scores = score_pairs(ref_base, ref_ask, ids, ref_metric)
                recall[cutoff] = _recall(ids, true_scores, exact_scores[:, cutoff - 1], tol)
                qps[cutoff] = ask.shape[0] / max(search_s, 1e-9)
            p50, p95, p99 = latency_percentiles(query_latencies(built, ask, latency_k, clock))
            if judged:
                hits.append(built.search(ask, depth))
            points.append(
                AnnPoint(
                    index=str(spec),
                    setting=str(setting),
                    backend=backend,
                    params=dict(setting.params),
                    recall=recall,
                    qps=qps,
                    latency_k=latency_k,
                    p50_s=p50,
                    p95_s=p95,
                    p99_s=p99,
                    build_s=build_s,
                    build_threads=_build_threads(setting, threads),
                    nbytes=nbytes,
                )
            )
    note = ""
    if judged:
        exact_hits = (exact_scores[:, :depth], exact_ids[:, :depth])
        losses = _quality_lost(qrels, exact_hits, hits, *row_ids, resamples=resamples, seed=seed)
        points = [_with_quality(point, loss) for point, loss in zip(points, losses, strict=True)]
        note = (
            f"{' and '.join(QUALITY_METRICS)} of each setting's top {depth} against exact "
            f"search's, over every judged query (a query without results scores 0): the "
            f"difference (index - exact) with its 95% BCa interval and a randomization test "
            f"({resamples:,} sign flips, seed {seed}), Holm-corrected over the "
            f"{len(points) * len(QUALITY_METRICS)} comparisons"
        )
    swept: dict[str, tuple[int, ...]] = {}
    for name, values in (sweep or {}).items():
        swept[_canonical(name, [spec for spec, _ in plans])] = tuple(
            dict.fromkeys(int(v) for v in values)
        )
    return AnnBenchmark(
        corpus=names[0],
        queries=names[1],
        metric=metric,
        k=ks,
        points=tuple(points),
        n_corpus=base.shape[0],
        n_queries=ask.shape[0],
        dim=base.shape[1],
        seed=seed,
        threads=threads,
        exact_s=exact_s,
        version=_version(),
        quality_note=note,
        sweep=swept,
    )


def _canonical(name: str, specs: list[IndexSpec]) -> str:
    """A swept name as the first index that has it spells it (``efsearch`` -> ``efSearch``)."""
    for spec in specs:
        try:
            return spec.param_name(name)
        except IndexSpecError:
            continue
    return name  # pragma: no cover - benchmark_settings refused it already


def _version() -> str:
    """rankmeter's version as installed (the package metadata the front door's
    ``__version__`` is kept equal to; the layers below may not import the front door)."""
    from importlib import metadata

    try:
        return metadata.version("rankmeter")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "unknown"


def _with_quality(point: AnnPoint, quality: tuple[QualityLoss, ...]) -> AnnPoint:
    from dataclasses import replace

    return replace(point, quality=quality)


def _check_ids(
    query_ids: Sequence[str] | None, doc_ids: Sequence[str] | None, n_queries: int, n_docs: int
) -> tuple[list[str], list[str]]:
    if query_ids is None or doc_ids is None:
        raise RankmeterError(
            "qrels need the ids of the query rows and of the corpus rows: give query_ids "
            "and doc_ids"
        )
    queries, docs = [str(q) for q in query_ids], [str(d) for d in doc_ids]
    for what, ids, rows in (("query_ids", queries, n_queries), ("doc_ids", docs, n_docs)):
        if len(ids) != rows:
            raise RankmeterError(f"{what} has {len(ids)} ids but the vectors have {rows} rows")
    return queries, docs


def _run(scores: Any, ids: Any, query_ids: list[str], doc_ids: list[str], name: str) -> Any:
    import pyarrow as pa

    from rankmeter.data import Run

    hit_ids = np.asarray(ids, dtype=np.int64)
    hit_scores = np.asarray(scores, dtype=np.float64)
    found = hit_ids >= 0  # -1: fewer results than asked for
    rows = np.broadcast_to(np.arange(len(query_ids))[:, None], hit_ids.shape)[found]
    return Run.from_columns(
        pa.array(query_ids, type=pa.string()).take(pa.array(rows)),
        pa.array(doc_ids, type=pa.string()).take(pa.array(hit_ids[found])),
        hit_scores[found],
        name=name,
        origin=f"<{name} search>",
    )


def _quality_lost(
    qrels: Any,
    exact_hits: tuple[Any, Any],
    hits: list[tuple[Any, Any]],
    query_ids: list[str],
    doc_ids: list[str],
    *,
    resamples: int,
    seed: int,
) -> list[tuple[QualityLoss, ...]]:
    """Each setting's run against the exact run, in one comparison (one correction)."""
    from rankmeter.comparison import compare

    runs = {"exact": _run(*exact_hits, query_ids, doc_ids, "exact")}
    for position, (scores, ids) in enumerate(hits):
        name = f"setting-{position + 1}"
        runs[name] = _run(scores, ids, query_ids, doc_ids, name)
    result = compare(
        qrels,
        runs,
        list(QUALITY_METRICS),
        baseline="exact",
        alpha=QUALITY_ALPHA,
        resamples=resamples,
        seed=seed,
        include_missing=True,
    )
    losses = []
    for position in range(len(hits)):
        rows = []
        for metric in QUALITY_METRICS:
            d = result.difference(f"setting-{position + 1}", metric)
            rows.append(
                QualityLoss(
                    metric=metric,
                    exact=d.baseline_mean,
                    ann=d.system_mean,
                    difference=d.difference,
                    low=d.low,
                    high=d.high,
                    p_value=d.p_value,
                    p_corrected=d.p_corrected,
                    significant=d.significant,
                )
            )
        losses.append(tuple(rows))
    return losses
