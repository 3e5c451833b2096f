"""Fusion of runs: reciprocal-rank fusion and score-normalised CombSUM; :func:`fuse_runs`,
run files fused as ``rankmeter fuse`` fuses them (:class:`FusedRun`).

A hybrid of a lexical and a dense retriever is one run made from two; ``rankmeter compare``
then tells whether it beats both. Fusion works on whole columns (NumPy over every result of
every run at once), never one document at a time.

Examples
--------
>>> from rankmeter import Run
>>> bm25 = Run.from_dict({"q1": {"a": 9.0, "b": 7.0, "c": 1.0}}, name="bm25")
>>> dense = Run.from_dict({"q1": {"c": 0.9, "a": 0.8, "d": 0.1}}, name="dense")
>>> hybrid = fuse([bm25, dense], "rrf")
>>> hybrid
Run('rrf(bm25+dense)', 1 queries, 4 results)
>>> hybrid.ranking("q1")
['a', 'c', 'b', 'd']
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from rankmeter._validate import choice, integer, real
from rankmeter.data import Run
from rankmeter.data.csr import row_groups
from rankmeter.errors import PolicyError, RankmeterError
from rankmeter.io import as_run
from rankmeter.vector import RUN_DEPTH

if TYPE_CHECKING:
    from rankmeter.results import DepthGap

__all__ = ["FUSION_METHODS", "FusedRun", "fuse", "fuse_runs", "parse_weights"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: ``rrf``: reciprocal-rank fusion; ``combsum``: sum of normalised scores (``normalisation``
#: says how); ``minmax`` and ``zscore``: CombSUM with that normalisation.
FUSION_METHODS = ("rrf", "combsum", "minmax", "zscore")
NORMALISATIONS = ("minmax", "zscore")


def fuse(
    runs: Iterable[Any],
    method: str = "rrf",
    *,
    k: float = 60,
    weights: Sequence[float] | None = None,
    normalisation: str | None = None,
    depth: int = RUN_DEPTH,
    name: str | None = None,
) -> Run:
    """Fuse runs into one: reciprocal-rank fusion or a weighted sum of normalised scores.

    Each run contributes its top ``depth`` results per query, in its own rank order (score
    descending, ties by the run's policy: trec_eval's, doc id descending, by default). A
    document's fused score is the sum of its contributions; a document missing from a run
    gets nothing from it.

    - ``"rrf"`` (Cormack et al., 2009): ``w_i / (k + rank_i(d))``, ranks from 1.
    - ``"minmax"``: ``w_i * (s - min) / (max - min)`` with the query's min and max over the
      run's top ``depth``; a query whose scores are all equal gets 1 for each.
    - ``"zscore"``: ``w_i * (s - mean) / std`` (population std) per query; 0 where std is 0.
      A missing document then counts as the run's average, not its worst.
    - ``"combsum"``: the sum of ``normalisation``-normalised scores (``"minmax"`` default).

    Parameters
    ----------
    runs : two runs or more: Run, path, dict ``{query: {doc: score}}``, DataFrame, Arrow table
    method : ``"rrf"``, ``"minmax"``, ``"zscore"`` or ``"combsum"``
    k : RRF's rank constant (>= 0; 60 as in the paper)
    weights : one finite weight >= 0 per run (default all 1)
    normalisation : for ``"combsum"``: ``"minmax"`` (default) or ``"zscore"``
    depth : results read from each run per query, and kept in the fused run
    name : the fused run's name (default ``"rrf(a+b)"`` from the method and the runs' names)

    Returns
    -------
    Run, ranked by fused score; equal fused scores are ordered as trec_eval orders ties (doc
    id descending), so the result never depends on the order of the input rows.
    """
    normalise = _method(method, normalisation)
    loaded = [as_run(r) for r in runs]
    if len(loaded) < 2:
        raise PolicyError(f"fusion needs two runs or more; got {len(loaded)}")
    w = _weights(weights, len(loaded))
    real("k", k, low=0, what="RRF's rank constant")
    _check_depth(depth)
    parts = [
        _contributions(run, weight, normalise, float(k), depth)
        for run, weight in zip(loaded, w, strict=True)
    ]
    if name is None:
        label = "rrf" if normalise is None else normalise
        name = f"{label}({'+'.join(r.name for r in loaded)})"
    return _sum_by_pair(parts, name, depth)


def _method(method: str, normalisation: str | None) -> str | None:
    """The normalisation of a score fusion; None for RRF."""
    choice("method", method, FUSION_METHODS)
    if normalisation is not None:
        choice("normalisation", normalisation, NORMALISATIONS)
    if method == "rrf":
        if normalisation is not None:
            raise PolicyError("normalisation applies to score fusion, not to method='rrf'")
        return None
    if method == "combsum":
        return normalisation or "minmax"
    if normalisation is not None and normalisation != method:
        raise PolicyError(f"method={method!r} contradicts normalisation={normalisation!r}")
    return method


def parse_weights(text: str, *, what: str = "weights") -> list[float]:
    """Weights as typed by hand, one per run: ``"0.7,0.3"``. An empty or malformed item is an
    error naming its position (``what`` names the option in the message), never dropped;
    :func:`fuse` checks the values themselves.

    >>> parse_weights("0.7, 0.3")
    [0.7, 0.3]
    >>> parse_weights("0.7,,0.3", what="--weights")
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: --weights: item 2 is empty in '0.7,,0.3'; give numbers separated by commas, e.g. 0.7,0.3
    """
    from rankmeter import _items

    hint = "give numbers separated by commas, e.g. 0.7,0.3"
    items = _items.split(text, what, hint)
    return [_items.number(item, i, what, hint) for i, item in enumerate(items, start=1)]


def _weights(weights: Sequence[float] | None, n: int) -> list[float]:
    if weights is None:
        return [1.0] * n
    values = list(weights)
    if len(values) != n:
        raise PolicyError(f"{len(values)} weights given for {n} runs; give one weight per run")
    for position, value in enumerate(values):
        real(f"weights[{position}]", value, low=0)
    if not any(float(v) > 0 for v in values):
        raise PolicyError("all weights are 0; at least one run must count")
    return [float(v) for v in values]


def _check_depth(depth: Any) -> int:
    return integer("depth", depth, low=1, what="results read from each run per query")


def _ranks(run: Run) -> tuple[IntArray, IntArray]:
    """Query code (in the run's query table) and 1-based rank of every result, in rank order."""
    offsets = run.offsets
    groups = row_groups(offsets)
    ranks: IntArray = np.arange(len(groups), dtype=np.int64) - offsets[groups] + 1
    return groups, ranks


def _contributions(
    run: Run, weight: float, normalise: str | None, k: float, depth: int
) -> tuple[list[str], IntArray, Any, FloatArray]:
    """The run's query ids, then (query code into them, doc id, contribution) of each of its
    top ``depth`` results per query."""
    groups, ranks = _ranks(run)
    keep = np.flatnonzero(ranks <= depth)
    groups, ranks = groups[keep], ranks[keep]
    scores = run.scores[keep]
    if normalise is None:
        values: FloatArray = weight / (k + ranks.astype(np.float64))
    else:
        if not np.isfinite(scores).all():
            raise RankmeterError(
                f"run {run.name!r} ({run.source}) has infinite scores, which cannot be "
                f"normalised; use method='rrf', which reads ranks only"
            )
        with np.errstate(over="ignore"):  # an infinite product is refused when summed
            values = weight * _normalised(scores, groups, normalise)
    return [str(q) for q in run.segment_ids], groups, run.doc_ids(keep), values


def _normalised(scores: FloatArray, groups: IntArray, how: str) -> FloatArray:
    """Scores normalised per query; rows of a query are contiguous (``groups`` ascending)."""
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    counts = np.diff(np.r_[starts, len(scores)])
    # Both normalisations are scale-free: a query whose scores are huge (their spread or
    # squares would overflow) is normalised scaled down by a power of two, which is exact;
    # other queries are not touched.
    peak = np.repeat(np.maximum.reduceat(np.abs(scores), starts), counts)
    exponent = np.where(peak > 2.0**500, np.frexp(peak)[1], 0)
    scores = np.ldexp(scores, -exponent)
    if how == "minmax":
        low = np.repeat(np.minimum.reduceat(scores, starts), counts)
        span = np.repeat(np.maximum.reduceat(scores, starts), counts) - low
        flat = span == 0
        out: FloatArray = np.where(flat, 1.0, (scores - low) / np.where(flat, 1.0, span))
        return out
    sums = np.add.reduceat(scores, starts)
    mean = np.repeat(sums / counts, counts)
    deviation = scores - mean
    std = np.repeat(np.sqrt(np.add.reduceat(deviation * deviation, starts) / counts), counts)
    # A spread below rounding noise is no spread: all the query's scores are equal.
    flat = std <= 1e-12 * np.maximum(np.abs(mean), np.ldexp(1.0, -exponent))
    out = np.where(flat, 0.0, deviation / np.where(flat, 1.0, std))
    return out


def _sum_by_pair(
    parts: list[tuple[list[str], IntArray, Any, FloatArray]], name: str, depth: int
) -> Run:
    """One run whose score for each (query, doc) is the sum of its contributions: the top
    ``depth`` per query, in trec_eval order."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from rankmeter.data.arrays import arrow_ints, numpy_of

    # Queries are few: each run's query table is mapped onto one shared table, then every
    # result carries a shared query code and a doc code, and (query, doc) is one integer.
    vocab = sorted(set().union(*(p[0] for p in parts)))
    index = {q: i for i, q in enumerate(vocab)}
    query_codes = np.concatenate(
        [np.array([index[q] for q in ids], dtype=np.int64)[groups] for ids, groups, _, _ in parts]
    )
    docs = pa.chunked_array([p[2].cast(pa.large_string()) for p in parts]).combine_chunks()
    values = np.concatenate([p[3] for p in parts])
    encoded = pc.dictionary_encode(docs)
    doc_codes = numpy_of(encoded.indices).astype(np.int64)
    n_docs = max(len(encoded.dictionary), 1)
    keys = query_codes * n_docs + doc_codes
    unique, inverse = np.unique(keys, return_inverse=True)
    with np.errstate(over="ignore", invalid="ignore"):
        sums = np.bincount(inverse.ravel(), weights=values, minlength=len(unique))
    queries, doc_of = unique // n_docs, unique % n_docs
    beyond = np.flatnonzero(~np.isfinite(sums))
    if len(beyond):
        # (inf, or NaN where +inf met -inf): a fused run holds finite scores or is not made.
        raise RankmeterError(
            f"the fused scores of query {vocab[int(queries[beyond[0]])]!r} add up beyond the "
            "largest float (about 1.8e308): use smaller weights"
        )
    # Rank order here (score descending, equal scores by doc id descending in byte order, as
    # trec_eval), so that the cut at depth is exact and the Run finds its rows in order.
    descending = numpy_of(pc.array_sort_indices(encoded.dictionary, order="descending"))
    tie_rank = np.empty(len(descending), dtype=np.int64)
    tie_rank[descending.astype(np.int64)] = np.arange(len(descending), dtype=np.int64)
    order = np.lexsort((tie_rank[doc_of], -sums, queries))
    ordered = queries[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    counts = np.diff(np.r_[starts, len(ordered)])
    rank = np.arange(len(ordered), dtype=np.int64) - np.repeat(starts, counts)
    keep = order[rank < depth]
    return Run.from_columns(
        pa.array(vocab, type=pa.string()).take(arrow_ints(queries[keep])),
        encoded.dictionary.take(arrow_ints(doc_of[keep])),
        sums[keep],
        name=name,
        origin="<fused run>",
    )


@dataclass(frozen=True)
class FusedRun:
    """Runs fused into one (:func:`fuse_runs`): the fused run, how it was made, and the depths
    of the runs fused where they differ (a document past the shallower runs' depth ranks as if
    they had rejected it).

    Attributes
    ----------
    run : the fused :class:`~rankmeter.data.Run`
    method : the fusion method
    runs : how many runs were fused
    depth_gap : the runs' depths (each cut at ``depth``) where they differ, else None
    """

    run: Run
    method: str
    runs: int
    depth_gap: DepthGap | None = None

    @property
    def tag(self) -> str:
        """The tag the run is written under (its name with whitespace as ``_``)."""
        from rankmeter.io import trec_run_tag

        return trec_run_tag(self.run.name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.run.name,
            "tag": self.tag,
            "method": self.method,
            "runs": self.runs,
            "queries": self.run.n_queries,
            "results": len(self.run),
            "depth_gap": None if self.depth_gap is None else self.depth_gap.to_dict(),
        }


def fuse_runs(
    runs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    method: str = "rrf",
    *,
    k: float = 60,
    weights: str | Sequence[float] | None = None,
    normalisation: str | None = None,
    depth: int = RUN_DEPTH,
    name: str | None = None,
    format: str | None = None,
    names: Mapping[str, str] | None = None,
) -> FusedRun:
    """Fuse run files as ``rankmeter fuse`` does: :func:`fuse` over runs read from paths.

    Parameters
    ----------
    runs : two paths or more, each ``PATH`` or ``NAME=PATH`` (:func:`rankmeter.io.read_run_list`;
        a name given twice is an error); at most one ``"-"`` (stdin)
    weights : one weight per run, or the weights as typed (``"0.7,0.3"``: :func:`parse_weights`)
    method, k, normalisation, depth, name : as for :func:`fuse`
    format : the runs' format (None: found from each file)
    names : how messages name the parameters: ``{"weights": "--weights"}`` on the command line

    Returns
    -------
    FusedRun, with the runs' depths where they differ (each up to ``depth``).

    >>> fuse_runs(["a.run"])
    Traceback (most recent call last):
    ...
    rankmeter.errors.PolicyError: fuse needs two runs or more; got 1
    """
    from rankmeter.io.run_args import read_run_list, run_list
    from rankmeter.results import depth_gap, depth_of

    runs = run_list(runs)
    if runs.count("-") > 1:
        raise PolicyError("only one input can be read from stdin ('-')")
    if len(runs) < 2:
        raise PolicyError(f"fuse needs two runs or more; got {len(runs)}")
    if isinstance(weights, str):
        weights = parse_weights(weights, what=(names or {}).get("weights", "weights"))
    loaded = read_run_list(runs, format=format, distinct=False)
    fused = fuse(
        loaded, method, k=k, weights=weights, normalisation=normalisation, depth=depth, name=name
    )
    gap = depth_gap([(r.name, min(depth_of(r.offsets), depth)) for r in loaded])
    return FusedRun(fused, method, len(loaded), gap)
