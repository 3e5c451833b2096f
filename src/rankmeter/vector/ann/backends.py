"""The indexes behind one small interface (:class:`Index`), over FAISS or hnswlib.

:func:`make_index` builds an empty one from an :class:`~rankmeter.vector.ann.spec.IndexSpec`:
``add`` vectors, ``search`` them, ``set`` search-time parameters, ``nbytes`` for its size. Both
libraries are extras (``rankmeter[ann]``), imported when an index is built.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter._validate import integer
from rankmeter.errors import RankmeterError
from rankmeter.vector._vectors import load_vectors
from rankmeter.vector.ann.spec import IndexSpec, IndexSpecError, check_backend, parse_index_spec
from rankmeter.vector.exact import check_metric

__all__ = ["Index", "make_index", "memory_method"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Float32Array = npt.NDArray[np.float32]


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
        return integer("k", k, low=1, what="results per query")

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
    check_backend(parsed, backend)
    dim = integer("dim", dim, low=1, what="dimensions of the vectors")
    if threads is not None:
        threads = integer("threads", threads, low=1, what="or None: all cores")
    cls = _FaissIndex if backend == "faiss" else _HnswlibIndex
    return cls(parsed, dim, metric, seed, threads)


def memory_method(backend: str) -> str:
    """How the ``nbytes`` of an index of this backend is measured."""
    return (_FaissIndex if backend == "faiss" else _HnswlibIndex).memory_method
