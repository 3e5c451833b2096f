"""ANN recall: how much of the exact nearest neighbours an approximate index returns.

Two different things are both called recall in vector search. A *search system's* Recall@k
(:mod:`rankmeter.metrics`) is the share of the relevant documents found in the top k: it needs
relevance judgments. An *index's* recall@k, measured here, is the share of the exact k nearest
neighbours that the approximate index returns: it needs no judgments, and it says whether the
index (rather than the embedding model) is what loses results.

The pieces:

- :func:`parse_index_spec`: a small grammar for indexes, e.g. ``hnsw(M=16,efSearch=64)``,
  ``ivf(nlist=100,nprobe=8)``, ``pq(m=8,nbits=8)``, ``ivfpq(nlist=100,m=8,nprobe=8)``, ``flat``.
- :func:`make_index`: builds one behind a small interface (:class:`Index`: ``add``, ``search``,
  ``set`` for search-time parameters, ``nbytes``) over FAISS or hnswlib.
- :func:`ann_recall`: recall@k against :func:`~rankmeter.vector.exact.exact_search`, queries
  per second, build time and memory, for one index or a sweep of a parameter.
"""

from __future__ import annotations

import difflib
import itertools
import math
import os
import re
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter.errors import RankmeterError
from rankmeter.vector._vectors import load_vectors, same_dimension
from rankmeter.vector.exact import check_metric, exact_search, normalized, score_pairs

__all__ = [
    "BACKENDS",
    "AnnRecall",
    "AnnRow",
    "Index",
    "IndexSpec",
    "IndexSpecError",
    "ann_recall",
    "make_index",
    "parse_index_spec",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Float32Array = npt.NDArray[np.float32]

BACKENDS = ("faiss", "hnswlib")

#: How the float32 arithmetic of an index may differ from the exact float64 scores: a result
#: whose exact score is within TOLERANCE_ULPS * sqrt(d) * eps32 * scale of the k-th exact
#: score is indistinguishable from it to any float32 index, and counts as a correct neighbour.
TOLERANCE_ULPS = 4.0

RECALL_RULE = (
    "recall@k = |ANN top-k ∩ exact top-k| / k, averaged over queries; a returned vector whose "
    "exact score ties the k-th exact neighbour's (within float32 rounding) counts as correct, "
    "so equal distances never cost recall"
)


class IndexSpecError(RankmeterError):
    """An index specification (``hnsw(M=16)``, sweep parameter, backend) is not valid."""


@dataclass(frozen=True)
class _Kind:
    """One kind of index: its parameters with defaults, which of them apply at search time."""

    defaults: Mapping[str, int]
    search: tuple[str, ...]
    minimum: Mapping[str, int]
    maximum: Mapping[str, int]
    what: str
    backends: tuple[str, ...]


_KINDS: dict[str, _Kind] = {
    "flat": _Kind({}, (), {}, {}, "exhaustive search (exact)", ("faiss", "hnswlib")),
    "hnsw": _Kind(
        {"M": 16, "efConstruction": 200, "efSearch": 64},
        ("efSearch",),
        {"M": 2},
        {},
        "HNSW graph",
        ("faiss", "hnswlib"),
    ),
    "ivf": _Kind(
        {"nlist": 100, "nprobe": 8}, ("nprobe",), {}, {}, "inverted file, flat lists", ("faiss",)
    ),
    "pq": _Kind({"m": 8, "nbits": 8}, (), {}, {"nbits": 16}, "product quantization", ("faiss",)),
    "ivfpq": _Kind(
        {"nlist": 100, "m": 8, "nbits": 8, "nprobe": 8},
        ("nprobe",),
        {},
        {"nbits": 16},
        "inverted file with product-quantized lists",
        ("faiss",),
    ),
}


def _signature(kind: str) -> str:
    params = _KINDS[kind].defaults
    return kind if not params else f"{kind}({','.join(params)})"


def _valid_kinds() -> str:
    return ", ".join(_signature(k) for k in _KINDS)


@dataclass(frozen=True)
class IndexSpec:
    """A parsed index specification: its kind and every parameter (defaults filled in).

    ``str(spec)`` is canonical and parses back to the same spec.

    >>> spec = parse_index_spec("HNSW(m=32, efsearch=128)")
    >>> str(spec)
    'hnsw(M=32,efConstruction=200,efSearch=128)'
    >>> spec.search_params, str(spec.replace(efSearch=16))
    ({'efSearch': 128}, 'hnsw(M=32,efConstruction=200,efSearch=16)')
    """

    kind: str
    params: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    def __str__(self) -> str:
        if not self.params:
            return self.kind
        return f"{self.kind}({','.join(f'{k}={v}' for k, v in self.params.items())})"

    def __repr__(self) -> str:
        return f"IndexSpec({str(self)!r})"

    def __hash__(self) -> int:
        return hash((self.kind, tuple(self.params.items())))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IndexSpec):
            return NotImplemented
        return self.kind == other.kind and dict(self.params) == dict(other.params)

    @property
    def search_params(self) -> dict[str, int]:
        """The parameters that apply at search time (changing them needs no rebuild)."""
        return {k: v for k, v in self.params.items() if k in _KINDS[self.kind].search}

    @property
    def build_params(self) -> dict[str, int]:
        """The parameters fixed when the index is built."""
        return {k: v for k, v in self.params.items() if k not in _KINDS[self.kind].search}

    def param_name(self, name: str) -> str:
        """The canonical spelling of a parameter of this kind (case-insensitive)."""
        return _param_name(self.kind, name, str(self))

    def replace(self, **changes: Any) -> IndexSpec:
        """The same spec with some parameters changed (checked as when parsed)."""
        params = dict(self.params)
        for name, value in changes.items():
            canonical = self.param_name(name)
            params[canonical] = _value(self.kind, canonical, value, str(self))
        return IndexSpec(self.kind, params)


def _param_name(kind: str, name: str, text: str) -> str:
    valid = list(_KINDS[kind].defaults)
    for candidate in valid:
        if candidate.lower() == name.strip().lower():
            return candidate
    if not valid:
        raise IndexSpecError(f"{kind} has no parameters, got {name.strip()!r} in {text!r}")
    close = difflib.get_close_matches(name.strip(), valid, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise IndexSpecError(
        f"{kind} has no parameter {name.strip()!r} in {text!r}{hint}; "
        f"valid parameters: {', '.join(valid)}"
    )


def _value(kind: str, name: str, value: Any, text: str) -> int:
    if isinstance(value, str):
        token = value.strip()
        if not re.fullmatch(r"[+]?\d+", token):
            raise IndexSpecError(f"{name}={token!r} in {text!r} is not a whole number")
        number = int(token)
    elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        number = int(value)
    else:
        raise IndexSpecError(f"{name}={value!r} in {text!r} is not a whole number")
    low = _KINDS[kind].minimum.get(name, 1)
    high = _KINDS[kind].maximum.get(name)
    if number < low or (high is not None and number > high):
        allowed = f"at least {low}" if high is None else f"from {low} to {high}"
        raise IndexSpecError(f"{name}={number} in {text!r} is out of range: it must be {allowed}")
    return number


_SPEC = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*")


def parse_index_spec(text: str | IndexSpec) -> IndexSpec:
    """Parse ``kind`` or ``kind(param=value,...)``; omitted parameters take their defaults.

    Kinds (case-insensitive, as are parameter names): ``flat``;
    ``hnsw(M=16,efConstruction=200,efSearch=64)``; ``ivf(nlist=100,nprobe=8)``;
    ``pq(m=8,nbits=8)``; ``ivfpq(nlist=100,m=8,nbits=8,nprobe=8)``.

    >>> str(parse_index_spec("ivf(nlist=64)"))
    'ivf(nlist=64,nprobe=8)'
    >>> parse_index_spec("hnsw(ef=10)")
    Traceback (most recent call last):
    ...
    rankmeter.vector.ann.IndexSpecError: hnsw has no parameter 'ef' in 'hnsw(ef=10)'; valid parameters: M, efConstruction, efSearch
    """
    if isinstance(text, IndexSpec):
        return text
    if not isinstance(text, str):
        raise IndexSpecError(f"an index spec is a string such as 'hnsw(M=16)', got {text!r}")
    match = _SPEC.fullmatch(text)
    if match is None:
        raise IndexSpecError(
            f"cannot parse index spec {text!r}: expected NAME or NAME(param=value,...), "
            f"one of {_valid_kinds()}"
        )
    kind = match.group(1).lower()
    if kind not in _KINDS:
        close = difflib.get_close_matches(kind, list(_KINDS), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise IndexSpecError(
            f"unknown index {match.group(1)!r} in {text!r}{hint}; valid indexes: {_valid_kinds()}"
        )
    params = dict(_KINDS[kind].defaults)
    body = match.group(2)
    seen: set[str] = set()
    if body is not None and body.strip():
        for token in body.split(","):
            name, equals, value = token.partition("=")
            if not equals or not name.strip():
                raise IndexSpecError(
                    f"bad parameter {token.strip()!r} in {text!r}: expected name=value, "
                    f"e.g. {_example(kind)}"
                )
            canonical = _param_name(kind, name, text)
            if canonical in seen:
                raise IndexSpecError(f"{canonical} is given twice in {text!r}")
            seen.add(canonical)
            params[canonical] = _value(kind, canonical, value, text)
    return IndexSpec(kind, params)


def _example(kind: str) -> str:
    defaults = _KINDS[kind].defaults
    return str(IndexSpec(kind, defaults)) if defaults else kind


# --------------------------------------------------------------------------------------------
# Indexes


class Index:
    """An approximate (or exact) nearest-neighbour index over one backend.

    Scores follow :mod:`rankmeter.vector.exact`: higher is better (``l2``: ``-‖q - x‖²``;
    ``cosine``: vectors are normalised, then the inner product). Built by :func:`make_index`.

    Attributes
    ----------
    spec : IndexSpec
    dim : int
    metric : str
    backend : str
    threads : int or None
        Threads used by ``search`` and by FAISS IVF/PQ training (None: the backend's default).
    """

    #: How ``nbytes`` is measured.
    memory_method = ""

    def __init__(
        self, spec: IndexSpec, dim: int, metric: str, seed: int, threads: int | None
    ) -> None:
        self.spec = spec
        self.dim = dim
        self.metric = metric
        self.backend = ""
        self.seed = seed
        self.threads = threads

    def __repr__(self) -> str:
        return (
            f"<Index {self.spec} backend={self.backend} metric={self.metric} dim={self.dim} "
            f"ntotal={self.ntotal}>"
        )

    def _prepare(self, vectors: Any, what: str) -> Float32Array:
        array = load_vectors(vectors, what)
        if array.shape[1] != self.dim:
            raise RankmeterError(
                f"{what} have {array.shape[1]} dimensions but the index has {self.dim}"
            )
        if self.metric == "cosine":
            norms = np.linalg.norm(array, axis=1)
            zero = np.flatnonzero(norms == 0)
            if zero.size:
                raise RankmeterError(
                    f"{what}: row {int(zero[0])} is a zero vector; cosine similarity is "
                    "undefined for it (use metric 'ip' or 'l2', or drop the row)"
                )
            array = np.ascontiguousarray(array / norms[:, None], dtype=np.float32)
        return array

    def add(self, vectors: Any) -> None:
        """Add vectors (ids continue from ``ntotal``); the first call trains the index where
        it needs training (IVF, PQ), on these vectors."""
        raise NotImplementedError

    def search(self, queries: Any, k: int) -> tuple[FloatArray, IntArray]:
        """The ``k`` best corpus ids per query: ``(scores, ids)``, best first; id -1 (score
        ``-inf``) where the index has fewer than ``k`` results."""
        raise NotImplementedError

    def set(self, **params: int) -> None:
        """Change search-time parameters (``efSearch``, ``nprobe``) without rebuilding."""
        for name, value in params.items():
            canonical = self.spec.param_name(name)
            if canonical not in self.spec.search_params:
                raise IndexSpecError(
                    f"{canonical} of {self.spec.kind} is fixed when the index is built; "
                    f"search-time parameters: {', '.join(self.spec.search_params) or 'none'}"
                )
            self.spec = self.spec.replace(**{canonical: value})
            self._apply(canonical, self.spec.params[canonical])

    def _apply(self, name: str, value: int) -> None:
        raise NotImplementedError

    @property
    def ntotal(self) -> int:
        """How many vectors the index holds."""
        raise NotImplementedError

    @property
    def nbytes(self) -> int:
        """The index's size in bytes (see ``memory_method``)."""
        raise NotImplementedError

    def _check_k(self, k: int) -> int:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise RankmeterError(f"k must be a positive integer, got {k!r}")
        return int(k)

    def _check_training(self, n: int) -> None:
        needed = {
            "nlist": self.spec.params.get("nlist", 0),
            "nbits": 2 ** self.spec.params.get("nbits", 0) if "nbits" in self.spec.params else 0,
        }
        for name, count in needed.items():
            if count > n:
                what = f"nlist={count}" if name == "nlist" else f"nbits={self.spec.params[name]}"
                raise RankmeterError(
                    f"{self.spec} needs at least {count} vectors to train ({what}), "
                    f"got {n}: lower {name} or add more vectors"
                )


@contextmanager
def _faiss_threads(faiss: Any, threads: int | None) -> Iterator[None]:
    """Run a block with this many OpenMP threads (FAISS's setting is global: restore it)."""
    if threads is None:
        yield
        return
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(threads)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


class _FaissIndex(Index):
    memory_method = "faiss.serialize_index size"

    def __init__(
        self, spec: IndexSpec, dim: int, metric: str, seed: int, threads: int | None
    ) -> None:
        from rankmeter.vector import require

        super().__init__(spec, dim, metric, seed, threads)
        self.backend = "faiss"
        self._faiss = faiss = require("faiss", "ann", "a FAISS index")
        kind, p = spec.kind, spec.params
        if "m" in p and dim % p["m"]:
            raise IndexSpecError(
                f"m={p['m']} in {spec} must divide the dimension {dim} "
                "(each of the m sub-quantizers takes dim / m dimensions)"
            )
        fmetric = faiss.METRIC_L2 if metric == "l2" else faiss.METRIC_INNER_PRODUCT
        self._quantizer: Any = None
        index: Any
        if kind == "flat":
            index = faiss.IndexFlatL2(dim) if metric == "l2" else faiss.IndexFlatIP(dim)
        elif kind == "hnsw":
            index = faiss.IndexHNSWFlat(dim, p["M"], fmetric)
            index.hnsw.efConstruction = p["efConstruction"]
        elif kind == "pq":
            index = faiss.IndexPQ(dim, p["m"], p["nbits"], fmetric)
            index.pq.cp.seed = seed
        else:
            self._quantizer = faiss.IndexFlatL2(dim) if metric == "l2" else faiss.IndexFlatIP(dim)
            if kind == "ivf":
                index = faiss.IndexIVFFlat(self._quantizer, dim, p["nlist"], fmetric)
            else:
                index = faiss.IndexIVFPQ(
                    self._quantizer, dim, p["nlist"], p["m"], p["nbits"], fmetric
                )
                index.pq.cp.seed = seed
            index.cp.seed = seed
        self._index = index
        for name, value in spec.search_params.items():
            self._apply(name, value)

    def _apply(self, name: str, value: int) -> None:
        if name == "efSearch":
            self._index.hnsw.efSearch = value
        elif name == "nprobe":
            self._index.nprobe = value

    def add(self, vectors: Any) -> None:
        array = self._prepare(vectors, "vectors")
        # HNSW insertion on several threads depends on their timing; one thread makes the
        # same data give the same graph. Training (k-means) is deterministic on any number.
        threads = 1 if self.spec.kind == "hnsw" else self.threads
        with _faiss_threads(self._faiss, threads):
            if not self._index.is_trained:
                self._check_training(array.shape[0])
                self._index.train(array)
            self._index.add(array)

    def search(self, queries: Any, k: int) -> tuple[FloatArray, IntArray]:
        k = self._check_k(k)
        array = self._prepare(queries, "queries")
        with _faiss_threads(self._faiss, self.threads):
            distances, labels = self._index.search(array, k)
        ids = np.asarray(labels, dtype=np.int64)
        scores = np.asarray(distances, dtype=np.float64)
        if self.metric == "l2":
            scores = -scores
        scores[ids < 0] = -np.inf
        return scores, ids

    @property
    def ntotal(self) -> int:
        return int(self._index.ntotal)

    @property
    def nbytes(self) -> int:
        return int(self._faiss.serialize_index(self._index).size)


class _HnswlibIndex(Index):
    memory_method = "hnswlib save_index file size"

    def __init__(
        self, spec: IndexSpec, dim: int, metric: str, seed: int, threads: int | None
    ) -> None:
        from rankmeter.vector import require

        super().__init__(spec, dim, metric, seed, threads)
        self.backend = "hnswlib"
        self._hnswlib = require("hnswlib", "ann", "an hnswlib index")
        self._index: Any = None
        self._count = 0
        # cosine: the vectors are normalised here, as for FAISS, then compared by inner product.
        self._space = "l2" if metric == "l2" else "ip"

    def _apply(self, name: str, value: int) -> None:
        if name == "efSearch" and self._index is not None:
            self._index.set_ef(value)

    def add(self, vectors: Any) -> None:
        array = self._prepare(vectors, "vectors")
        total = self._count + array.shape[0]
        if self._index is None:
            if self.spec.kind == "flat":
                self._index = self._hnswlib.BFIndex(space=self._space, dim=self.dim)
                self._index.init_index(max_elements=total)
            else:
                p = self.spec.params
                self._index = self._hnswlib.Index(space=self._space, dim=self.dim)
                self._index.init_index(
                    max_elements=total,
                    ef_construction=p["efConstruction"],
                    M=p["M"],
                    random_seed=self.seed,
                )
                self._index.set_ef(p["efSearch"])
        elif self.spec.kind == "hnsw":
            self._index.resize_index(total)
        else:
            raise RankmeterError("an hnswlib flat index is filled by one add() call")
        labels = np.arange(self._count, total, dtype=np.int64)
        if self.spec.kind == "hnsw":
            # One thread: insertion order (and so the graph) does not depend on timing.
            self._index.add_items(array, labels, num_threads=1)
        else:
            self._index.add_items(array, labels)
        self._count = total

    def search(self, queries: Any, k: int) -> tuple[FloatArray, IntArray]:
        k = self._check_k(k)
        array = self._prepare(queries, "queries")
        m = array.shape[0]
        scores = np.full((m, k), -np.inf)
        ids = np.full((m, k), -1, dtype=np.int64)
        found = min(k, self._count)
        if self._index is None or found == 0:
            return scores, ids
        threads = -1 if self.threads is None else self.threads
        try:
            if self.spec.kind == "flat":
                labels, distances = self._index.knn_query(array, k=found)
            else:
                labels, distances = self._index.knn_query(array, k=found, num_threads=threads)
        except RuntimeError as exc:  # too few results for a full row (tiny ef or graph)
            raise RankmeterError(f"hnswlib could not return {found} results: {exc}") from None
        distances = np.asarray(distances, dtype=np.float64)
        # hnswlib's 'ip' distance is 1 - q·x, its 'l2' distance is ‖q - x‖².
        scores[:, :found] = -distances if self._space == "l2" else 1.0 - distances
        ids[:, :found] = np.asarray(labels, dtype=np.int64)
        return scores, ids

    @property
    def ntotal(self) -> int:
        return self._count

    @property
    def nbytes(self) -> int:
        if self._index is None:
            return 0
        with tempfile.TemporaryDirectory(prefix="rankmeter-") as folder:
            path = os.path.join(folder, "index.bin")
            self._index.save_index(path)
            return os.path.getsize(path)


def _check_backend(spec: IndexSpec, backend: str) -> None:
    if backend not in BACKENDS:
        raise IndexSpecError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if backend not in _KINDS[spec.kind].backends:
        raise IndexSpecError(
            f"{spec.kind} indexes need the {' or '.join(_KINDS[spec.kind].backends)} backend, "
            f"not {backend} (which has: "
            f"{', '.join(k for k, v in _KINDS.items() if backend in v.backends)})"
        )


def make_index(
    spec: str | IndexSpec,
    dim: int,
    metric: str = "ip",
    backend: str = "faiss",
    *,
    seed: int = 0,
    threads: int | None = None,
) -> Index:
    """An empty index: ``add`` vectors, then ``search``; ``set(efSearch=...)`` between searches.

    Parameters
    ----------
    spec : str or IndexSpec
        e.g. ``"hnsw(M=16,efConstruction=200,efSearch=64)"``, ``"ivf(nlist=100,nprobe=8)"``,
        ``"pq(m=8,nbits=8)"``, ``"ivfpq(nlist=100,m=8,nprobe=8)"``, ``"flat"``.
    dim : int
        Dimensions of the vectors.
    metric : {"ip", "l2", "cosine"}
        cosine normalises every vector added or searched, then uses the inner product.
    backend : {"faiss", "hnswlib"}
        hnswlib has ``hnsw`` and ``flat`` only.
    seed : int
        Seeds the k-means training of IVF and PQ (FAISS) and the HNSW levels (hnswlib; FAISS
        HNSW uses its own fixed seed). HNSW graphs are built on one thread, so the same seed
        gives the same index.
    threads : int or None
        Threads for ``search``, and for training and adding to FAISS IVF and PQ indexes
        (None: the backend's default, all cores). One thread is much faster than several on
        a machine that is busy with other work.

    Examples
    --------
    >>> index = make_index("hnsw(M=8)", dim=2, metric="l2")
    >>> index.add([[0.0, 0.0], [1.0, 0.0], [5.0, 5.0]])
    >>> scores, ids = index.search([[0.9, 0.1]], k=2)
    >>> ids.tolist(), scores.round(2).tolist()  # l2 scores are -‖q - x‖²: higher is nearer
    ([[1, 0]], [[-0.02, -0.82]])
    >>> index.set(efSearch=128)  # a search-time parameter: no rebuild
    >>> index.spec
    IndexSpec('hnsw(M=8,efConstruction=200,efSearch=128)')
    """
    parsed = parse_index_spec(spec)
    check_metric(metric)
    _check_backend(parsed, backend)
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
        raise RankmeterError(f"dim must be a positive integer, got {dim!r}")
    if threads is not None and threads < 1:
        raise RankmeterError(f"threads must be at least 1, got {threads}")
    cls = _FaissIndex if backend == "faiss" else _HnswlibIndex
    return cls(parsed, int(dim), metric, seed, threads)


# --------------------------------------------------------------------------------------------
# Recall against exact neighbours


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
    ``to_markdown()`` and ``to_html()`` render the trade-off table (and, in HTML, the
    recall-vs-QPS plot).
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

    def table(self) -> tuple[list[str], list[list[str]]]:
        """The trade-off table as text: one row per setting, recall@k and QPS@k per k."""
        header = ["setting", "build s", "memory"]
        for k in self.k:
            header += [f"recall@{k}", f"QPS@{k}"]
        body = []
        for setting in self.settings:
            rows = {r.k: r for r in self.rows if r.setting == setting}
            first = rows[self.k[0]]
            line = [self.label(setting), f"{first.build_s:.2f}", _size(first.nbytes)]
            for k in self.k:
                line += [f"{rows[k].recall:.4f}", f"{rows[k].qps:,.0f}"]
            body.append(line)
        return header, body

    def describe(self) -> str:
        """One line: what was measured, on what."""
        threads = "all threads" if self.threads is None else f"{self.threads} thread(s)"
        return (
            f"{self.title} ({self.backend}, {self.metric}) on {self.n_corpus:,} corpus vectors x "
            f"{self.dim} dimensions, {self.n_queries:,} queries; QPS: one batch, {threads}, best "
            f"of up to {TIMED_RUNS} runs; "
            f"exact neighbours in {self.exact_s:.2f} s; memory: {self.memory_method}"
        )

    def to_markdown(self) -> str:
        header, body = self.table()
        lines = [
            f"## ANN recall: {self.title}",
            "",
            self.describe() + ".",
            "",
            "| " + " | ".join(header) + " |",
            "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|",
        ]
        lines += ["| " + " | ".join(cells) + " |" for cells in body]
        lines += ["", f"{self.recall_rule[0].upper()}{self.recall_rule[1:]}.", ""]
        return "\n".join(lines)

    def to_html(self) -> str:
        """One self-contained page (inline style and SVG, no script, nothing loaded)."""
        from rankmeter.report.ann import render_html

        return render_html(self)


def _size(nbytes: int) -> str:
    value = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{nbytes} B"  # pragma: no cover


def _ks(k: int | Sequence[int]) -> tuple[int, ...]:
    values = [k] if isinstance(k, (int, np.integer)) else list(k)
    if not values:
        raise RankmeterError("give at least one k (e.g. k=(1, 10, 100))")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise RankmeterError(f"k must be positive integers, got {value!r}")
    return tuple(sorted({int(v) for v in values}))


def _settings(spec: IndexSpec, sweep: Mapping[str, Sequence[Any]] | None) -> list[IndexSpec]:
    """Every setting of the sweep, build-time parameters outermost (so each build is reused
    by the search-time values that follow it)."""
    if not sweep:
        return [spec]
    named: dict[str, list[int]] = {}
    for name, values in sweep.items():
        canonical = spec.param_name(name)
        if canonical in named:
            raise IndexSpecError(f"{canonical} is swept twice")
        listed = [values] if isinstance(values, (int, str)) else list(values)
        if not listed:
            raise IndexSpecError(f"sweep of {canonical} has no values")
        named[canonical] = list(
            dict.fromkeys(_value(spec.kind, canonical, v, f"sweep {canonical}") for v in listed)
        )
    searched = spec.search_params
    order = sorted(named, key=lambda n: n in searched)
    combos = itertools.product(*(named[n] for n in order))
    return [spec.replace(**dict(zip(order, combo, strict=True))) for combo in combos]


def _tolerance(corpus: Float32Array, queries: Float32Array, metric: str) -> FloatArray:
    """Per query: how far apart two exact scores may be and still look equal in float32."""
    eps = float(np.finfo(np.float32).eps) * TOLERANCE_ULPS * math.sqrt(corpus.shape[1])
    if metric == "cosine":
        return np.full(queries.shape[0], eps)
    q = np.linalg.norm(queries.astype(np.float64), axis=1)
    x = float(np.linalg.norm(corpus.astype(np.float64), axis=1).max())
    scale = q * x if metric == "ip" else (q + x) ** 2
    return np.asarray(eps * np.maximum(scale, 1e-30), dtype=np.float64)


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
    rounding (``4·sqrt(d)·eps32`` times the scale of the scores). So when several vectors are
    equally near at the k-th place, any of them is right, and an exact index scores 1.0.
    Returned ids of -1 (fewer results than k) and repeated ids count nothing.

    Each k is searched on its own, as an application would: a search for 100 results explores
    more of an HNSW graph than a search for 1 (hnswlib uses ``max(efSearch, k)``), which would
    flatter recall@1; FAISS HNSW returns fewer than k results when ``efSearch < k``, and the
    missing places count as misses. QPS is the number of queries over the wall time of one
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
    _check_backend(spec, backend)
    ks = _ks(k)
    settings = _settings(spec, sweep)
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
    tol = _tolerance(base, ask, metric)

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
        memory_method=(_FaissIndex if backend == "faiss" else _HnswlibIndex).memory_method,
        corpus=names[0],
        queries=names[1],
    )


def _label(source: Any, what: str) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return f"<{what} array>"
