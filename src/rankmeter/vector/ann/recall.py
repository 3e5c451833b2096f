"""Recall of an index against the exact nearest neighbours: :func:`ann_recall` and its results.

recall@k against :func:`~rankmeter.vector.exact.exact_search`, queries per second, build time and
memory, for one index or a sweep of a parameter. The results (:class:`AnnRecall`, one
:class:`AnnRow` per setting and k) hold data and export it (``to_dict``, ``to_pandas``); they
are rendered by :mod:`rankmeter.report.ann`.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter._validate import integer
from rankmeter.errors import RankmeterError
from rankmeter.vector._vectors import load_vectors, same_dimension
from rankmeter.vector.ann.backends import Index, make_index, memory_method
from rankmeter.vector.ann.spec import IndexSpec, check_backend, parse_index_spec, sweep_settings
from rankmeter.vector.exact import check_metric, exact_search, normalized, score_pairs

__all__ = [
    "RECALL_RULE",
    "SIMD_LANES",
    "TIMED_BUDGET_S",
    "TIMED_RUNS",
    "TOLERANCE_ULPS",
    "AnnRecall",
    "AnnRow",
    "ann_recall",
    "tie_tolerance",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Float32Array = npt.NDArray[np.float32]

#: How far a float32 index's score may be from the exact float64 score, in float32 ulps at
#: the scores' scale per step of accumulation: see :func:`tie_tolerance`. Two scores are
#: compared (a returned vector's and the k-th neighbour's), each off by about one ulp.
TOLERANCE_ULPS = 2.0
#: Float32 lanes every backend accumulates a score in (AVX2's 8: FAISS's distance kernels,
#: hnswlib's and BLAS's are at least this wide), so a chain of additions is d / 8 long.
SIMD_LANES = 8

RECALL_RULE = (
    "recall@k = |ANN top-k ∩ exact top-k| / k, averaged over queries; a returned vector whose "
    "exact score ties the k-th exact neighbour's (within float32 rounding) counts as correct, "
    "so equal distances never cost recall"
)


@dataclass(frozen=True)
class AnnRow:
    """One index setting at one k.

    Attributes
    ----------
    setting : str
        The full index spec searched, e.g. ``hnsw(M=16,efConstruction=200,efSearch=32)``.
    params : mapping
        Its parameters.
    k : int
    recall : float
        Mean over queries of the share of the exact top k that the index returned.
    qps : float
        Queries per second: all queries searched in one batch, divided by the wall time.
    search_s : float
        That wall time, in seconds (the fastest of up to 5 runs).
    build_s : float
        Wall time to train and fill the index (shared by the settings that reuse it).
    nbytes : int
        Size of the index (see :attr:`AnnRecall.memory_method`).
    """

    setting: str
    params: Mapping[str, int]
    k: int
    recall: float
    qps: float
    search_s: float
    build_s: float
    nbytes: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "setting": self.setting,
            "params": dict(self.params),
            "k": self.k,
            "recall": self.recall,
            "qps": self.qps,
            "search_s": self.search_s,
            "build_s": self.build_s,
            "nbytes": self.nbytes,
        }


@dataclass(frozen=True)
class AnnRecall:
    """The result of :func:`ann_recall`: one row per (setting, k), settings in sweep order.

    ``to_dict()`` and ``to_pandas()`` (long format, one row per setting and k) export it;
    :mod:`rankmeter.report.ann` renders it (the trade-off table in the terminal, Markdown and
    HTML, with the recall-vs-QPS plot).
    """

    index: str
    backend: str
    metric: str
    k: tuple[int, ...]
    sweep: Mapping[str, tuple[int, ...]]
    rows: tuple[AnnRow, ...]
    n_corpus: int
    n_queries: int
    dim: int
    seed: int
    threads: int | None
    exact_s: float
    memory_method: str
    corpus: str = "<corpus array>"
    queries: str = "<queries array>"
    recall_rule: str = RECALL_RULE

    def __post_init__(self) -> None:
        object.__setattr__(self, "sweep", MappingProxyType(dict(self.sweep)))

    @property
    def settings(self) -> tuple[str, ...]:
        """The index settings measured, in order."""
        return tuple(dict.fromkeys(r.setting for r in self.rows))

    def recall(self, k: int, setting: str | None = None) -> float:
        """recall@k of one setting (default: the only or last one)."""
        setting = setting if setting is not None else self.settings[-1]
        for row in self.rows:
            if row.k == k and row.setting == setting:
                return row.recall
        raise KeyError(f"no row for k={k}, setting {setting!r}")

    @property
    def title(self) -> str:
        """The index spec, with ``*`` for the swept parameters: ``hnsw(M=16,...,efSearch=*)``."""
        spec = parse_index_spec(self.index)
        if not self.sweep:
            return str(spec)
        shown = ",".join(f"{k}={'*' if k in self.sweep else v}" for k, v in spec.params.items())
        return f"{spec.kind}({shown})"

    def label(self, setting: str) -> str:
        """A short name of a setting: the swept values (or the whole spec without a sweep)."""
        if not self.sweep:
            return setting
        params = parse_index_spec(setting).params
        return ",".join(f"{name}={params[name]}" for name in self.sweep)

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "backend": self.backend,
            "metric": self.metric,
            "k": list(self.k),
            "sweep": {name: list(values) for name, values in self.sweep.items()},
            "corpus": self.corpus,
            "queries": self.queries,
            "n_corpus": self.n_corpus,
            "n_queries": self.n_queries,
            "dim": self.dim,
            "seed": self.seed,
            "threads": self.threads,
            "exact_s": self.exact_s,
            "memory_method": self.memory_method,
            "recall_rule": self.recall_rule,
            "rows": [row.to_dict() for row in self.rows],
        }

    def to_pandas(self) -> Any:
        """A DataFrame: one row per setting and k; a column per index parameter."""
        import pyarrow as pa

        from rankmeter.data.arrays import import_pandas

        import_pandas()
        names = list(parse_index_spec(self.index).params)
        data: dict[str, Any] = {"setting": [r.setting for r in self.rows]}
        for name in names:
            data[name] = pa.array([r.params[name] for r in self.rows], type=pa.int64())
        data.update(
            {
                "k": pa.array([r.k for r in self.rows], type=pa.int64()),
                "recall": pa.array([r.recall for r in self.rows], type=pa.float64()),
                "qps": pa.array([r.qps for r in self.rows], type=pa.float64()),
                "search_s": pa.array([r.search_s for r in self.rows], type=pa.float64()),
                "build_s": pa.array([r.build_s for r in self.rows], type=pa.float64()),
                "nbytes": pa.array([r.nbytes for r in self.rows], type=pa.int64()),
            }
        )
        return pa.table(data).to_pandas()


def _ks(k: int | Sequence[int]) -> tuple[int, ...]:
    # One k or several; anything else (2.5, '10') is one wrong k, named as given.
    values = list(k) if isinstance(k, Sequence) and not isinstance(k, str) else [k]
    if not values:
        raise RankmeterError("give at least one k (e.g. k=(1, 10, 100))")
    checked = {integer("k", value, low=1, what="recall@k for each k") for value in values}
    return tuple(sorted(checked))


def tie_tolerance(corpus: Any, queries: Any, metric: str = "ip") -> FloatArray:
    """Per query: how far below the k-th exact score a vector's exact score may be and still
    tie it to a float32 index (so that returning it costs no recall).

    ``TOLERANCE_ULPS · eps32 · scale · sqrt(ceil(d / SIMD_LANES))``, from the data:

    - ``scale`` is the largest magnitude a score and its partial sums can reach: ``‖q‖·max‖x‖``
      (ip; 1 for cosine) or ``(‖q‖ + max‖x‖)²`` (l2, which indexes compute as ``‖q‖² + ‖x‖²
      − 2q·x``); ``eps32 · scale`` is one float32 ulp (relative spacing 2⁻²³) at that scale.
    - ``sqrt(ceil(d / SIMD_LANES))``: an index sums a score's ``d`` products in 8 float32
      lanes (AVX2; FAISS's and hnswlib's kernels and BLAS are at least that wide), so each
      lane adds ``d / 8`` terms, each addition rounded by at most half an ulp; independent
      roundings grow like the square root of their number (Higham and Mary's probabilistic
      bound), not linearly.
    - ``TOLERANCE_ULPS`` = 2: the returned vector's score and the k-th neighbour's are both
      rounded, one ulp of room each.

    For unit vectors of 384 dimensions (MiniLM) this is 1.65e-6; the errors of FAISS
    ``IndexFlatIP`` and ``IndexHNSWFlat`` measured against float64 on such data are 2e-8 to
    1.1e-7 (d = 16 to 768), under the tolerance by 3 to 60 times. (The earlier rule,
    ``4·sqrt(d)·eps32``, was 9.3e-6 there: 100 times the real error.)

    >>> import numpy as np
    >>> unit = np.eye(384, dtype="float32")[:2]
    >>> f"{tie_tolerance(unit, unit[:1], 'cosine')[0]:.4g}"  # 2 * 2**-23 * sqrt(48)
    '1.652e-06'
    """
    base = load_vectors(corpus, "corpus")
    ask = load_vectors(queries, "queries")
    check_metric(metric)
    chain = math.ceil(base.shape[1] / SIMD_LANES)
    per_scale = float(np.finfo(np.float32).eps) * TOLERANCE_ULPS * math.sqrt(chain)
    if metric == "cosine":
        return np.full(ask.shape[0], per_scale)
    q = np.linalg.norm(ask.astype(np.float64), axis=1)
    x = float(np.linalg.norm(base.astype(np.float64), axis=1).max())
    scale = q * x if metric == "ip" else (q + x) ** 2
    return np.asarray(per_scale * np.maximum(scale, 1e-30), dtype=np.float64)


def _recall(returned: IntArray, true_scores: FloatArray, kth: FloatArray, tol: FloatArray) -> float:
    """Mean share of each row's returned ids that score at least the k-th exact score."""
    k = returned.shape[1]
    ok = (returned >= 0) & (true_scores >= (kth - tol)[:, None])
    # An id returned twice counts once.
    ordered = np.sort(np.where(ok, returned, -1), axis=1)
    distinct = (ordered >= 0) & np.concatenate(
        [np.ones((ordered.shape[0], 1), dtype=bool), ordered[:, 1:] != ordered[:, :-1]], axis=1
    )
    return float(np.mean(distinct.sum(axis=1) / k))


#: A search is repeated while all its runs together took less than this, up to TIMED_RUNS
#: times, and the fastest run counts: one run of a few milliseconds is mostly noise.
TIMED_BUDGET_S = 0.2
TIMED_RUNS = 5


def _timed_search(index: Index, queries: Float32Array, k: int) -> tuple[IntArray, float]:
    """The ids of one batched search, and the wall time of the fastest of a few runs."""
    best = math.inf
    spent = 0.0
    ids: IntArray | None = None
    for _ in range(TIMED_RUNS):
        started = time.perf_counter()
        _, found = index.search(queries, k)
        took = time.perf_counter() - started
        if ids is None:
            ids = found
        best, spent = min(best, took), spent + took
        if spent >= TIMED_BUDGET_S:
            break
    assert ids is not None  # TIMED_RUNS >= 1
    return ids, best


def ann_recall(
    corpus: Any,
    queries: Any,
    index: str | IndexSpec = "hnsw(M=16,efConstruction=200,efSearch=64)",
    *,
    k: int | Sequence[int] = (1, 10, 100),
    metric: str = "ip",
    backend: str = "faiss",
    sweep: Mapping[str, Sequence[int]] | None = None,
    seed: int = 0,
    threads: int | None = 1,
) -> AnnRecall:
    """Recall@k of an approximate index against the exact k nearest neighbours, with speed,
    build time and memory; over a sweep of a parameter, the recall/QPS trade-off.

    For each query q and each k, with ``E_k(q)`` the exact top k (:func:`exact_search`,
    float64) and ``A_k(q)`` the index's top k::

        recall@k = mean over q of |A_k(q) ∩ E_k(q)| / k

    Ties: a returned vector counts as one of the exact top k when its exact score (recomputed
    in float64, whatever the index reported) is at least the k-th exact score, less float32
    rounding (:func:`tie_tolerance`: 2 float32 ulps at the scores' scale times
    ``sqrt(ceil(d / 8))``, the growth of rounding errors along an 8-lane SIMD sum). So when several vectors are
    equally near at the k-th place, any of them is right, and an exact index scores 1.0.
    Returned ids of -1 (fewer results than k) and repeated ids count nothing.

    Each k is searched on its own, as an application would: a search for 100 results explores
    more of an HNSW graph than a search for 1 (hnswlib uses ``max(efSearch, k)``), which would
    flatter recall@1. FAISS HNSW (1.15) fills all k places even when ``efSearch < k``, but
    for a very small ``efSearch`` (1 to 4) some rows come back short (id -1): the missing
    places count as misses. QPS is the number of queries over the wall time of one
    batched search of all of them, the fastest of up to 5 runs (repeated while they take
    under 0.2 s together); build time covers training and adding, timed once.

    Parameters
    ----------
    corpus, queries : arrays (n, d) and (m, d), or paths to ``.npy`` / ``.parquet`` files
    index : str or IndexSpec
        See :func:`parse_index_spec`.
    k : int or sequence of int
        Each must be at most the corpus size.
    metric : {"ip", "l2", "cosine"}
    backend : {"faiss", "hnswlib"}
    sweep : mapping of parameter name to values, optional
        e.g. ``{"efSearch": [16, 32, 64, 128, 256]}``: one setting per value (several
        parameters: every combination). Search-time parameters (efSearch, nprobe) reuse the
        built index; build-time ones (M, nlist, ...) rebuild it.
    seed : int
        Seeds the training and the HNSW levels; the same seed gives the same recall.
    threads : int or None
        Threads for searching and for training IVF and PQ indexes; None: all cores. The
        default, one, gives queries per second that are comparable between machines and
        steady on a busy one (FAISS's OpenMP threads slow down many times over when the cores
        are shared with other work).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> corpus = rng.normal(size=(300, 8)).astype("float32")
    >>> result = ann_recall(corpus, corpus[:20], "hnsw(M=8)", k=[1, 10], metric="l2",
    ...                     sweep={"efSearch": [4, 64]})
    >>> result.title, result.settings[0]
    ('hnsw(M=8,efConstruction=200,efSearch=*)', 'hnsw(M=8,efConstruction=200,efSearch=4)')
    >>> result.recall(10, "hnsw(M=8,efConstruction=200,efSearch=64)")
    1.0
    """
    spec = parse_index_spec(index)
    check_metric(metric)
    check_backend(spec, backend)
    ks = _ks(k)
    settings = sweep_settings(spec, sweep)
    base = load_vectors(corpus, "corpus")
    ask = load_vectors(queries, "queries")
    names = (_label(corpus, "corpus"), _label(queries, "queries"))
    same_dimension(base, ask, names)
    if ks[-1] > base.shape[0]:
        raise RankmeterError(
            f"k={ks[-1]} is more than the corpus has ({base.shape[0]} vectors); "
            "give smaller k values"
        )
    # The reference arithmetic: float64 (unit vectors for cosine), converted once.
    ref_base, ref_ask, ref_metric = base.astype(np.float64), ask.astype(np.float64), metric
    if metric == "cosine":
        ref_base, ref_ask = normalized(ref_base, names[0]), normalized(ref_ask, names[1])
        ref_metric = "ip"
    started = time.perf_counter()
    exact_scores, _ = exact_search(ref_base, ref_ask, ks[-1], ref_metric)
    exact_s = time.perf_counter() - started
    tol = tie_tolerance(base, ask, metric)

    rows: list[AnnRow] = []
    built: Index | None = None
    built_key: dict[str, int] | None = None
    build_s = 0.0
    nbytes = 0
    for setting in settings:
        if built is None or setting.build_params != built_key:
            built = make_index(setting, base.shape[1], metric, backend, seed=seed, threads=threads)
            started = time.perf_counter()
            built.add(base)
            build_s = time.perf_counter() - started
            nbytes = built.nbytes
            built_key = setting.build_params
        built.set(**setting.search_params)
        for cutoff in ks:
            ids, search_s = _timed_search(built, ask, cutoff)
            true_scores = score_pairs(ref_base, ref_ask, ids, ref_metric)
            value = _recall(ids, true_scores, exact_scores[:, cutoff - 1], tol)
            rows.append(
                AnnRow(
                    setting=str(setting),
                    params=dict(setting.params),
                    k=cutoff,
                    recall=value,
                    qps=ask.shape[0] / max(search_s, 1e-9),
                    search_s=search_s,
                    build_s=build_s,
                    nbytes=nbytes,
                )
            )
    swept = {}
    if sweep:
        for name in sweep:
            canonical = spec.param_name(name)
            swept[canonical] = tuple(
                dict.fromkeys(parse_index_spec(s).params[canonical] for s in settings)
            )
    return AnnRecall(
        index=str(spec),
        backend=backend,
        metric=metric,
        k=ks,
        sweep=swept,
        rows=tuple(rows),
        n_corpus=base.shape[0],
        n_queries=ask.shape[0],
        dim=base.shape[1],
        seed=seed,
        threads=threads,
        exact_s=exact_s,
        memory_method=memory_method(backend),
        corpus=names[0],
        queries=names[1],
    )


def _label(source: Any, what: str) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return f"<{what} array>"
