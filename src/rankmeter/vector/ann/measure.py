"""One index or several measured from what a user gives: :func:`measure_indexes`.

``rankmeter ann-recall`` in one call: index specs and sweeps as typed, vector files or a BEIR
collection folder embedded by a model, every setting checked before any work, then
:func:`~rankmeter.vector.ann.ann_recall` (one index) or
:func:`~rankmeter.vector.ann.ann_benchmark` (several, or a results folder to add to). Each
:class:`~rankmeter.vector.ann.IndexSpecError` it raises names, in ``option``, the parameter it
is about, as the caller names its parameters (``names``): the command line gives its option
names, so a message reads the same from Python and from the shell.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from rankmeter.vector.ann.bench import AnnBenchmark, ann_benchmark, benchmark_settings
from rankmeter.vector.ann.recall import AnnRecall, ann_recall
from rankmeter.vector.ann.spec import (
    IndexSpecError,
    check_backend,
    parse_index_spec,
    parse_sweep,
    sweep_settings,
)

__all__ = ["DEFAULT_INDEX", "DEFAULT_KS", "PARAMETER_NAMES", "measure_indexes"]

#: The index measured when none is given.
DEFAULT_INDEX = "hnsw(M=16,efConstruction=200,efSearch=64)"
#: The k values measured when none is given.
DEFAULT_KS = (1, 10, 100)
#: How :func:`measure_indexes` names its parameters in its messages (and in ``option``) by
#: default: their Python names.
PARAMETER_NAMES: Mapping[str, str] = {
    name: name for name in ("corpus", "queries", "indexes", "backend", "sweep", "model", "results_dir")
}  # fmt: skip

_T = TypeVar("_T")


def _naming(option: str, call: Callable[[], _T]) -> _T:
    """``call()``, its :class:`IndexSpecError` marked as about ``option``."""
    try:
        return call()
    except IndexSpecError as exc:
        raise _about(exc, option) from None


def _about(exc: IndexSpecError, option: str) -> IndexSpecError:
    exc.option = option
    return exc


def _refuse(message: str, option: str) -> IndexSpecError:
    return _about(IndexSpecError(message), option)


def measure_indexes(
    corpus: str | os.PathLike[str] | Any,
    queries: str | os.PathLike[str] | Any = None,
    indexes: Sequence[str] | None = None,
    *,
    k: Sequence[int] | None = None,
    metric: str = "ip",
    backend: str = "faiss",
    sweep: Sequence[str] | Mapping[str, Sequence[int]] | None = None,
    seed: int = 0,
    threads: int | None = 1,
    model: Any = None,
    results_dir: str | os.PathLike[str] | None = None,
    names: Mapping[str, str] | None = None,
) -> AnnRecall | AnnBenchmark:
    """Measure one index or several, as ``rankmeter ann-recall`` does.

    Parameters
    ----------
    corpus, queries : vector files or arrays (as :func:`~rankmeter.vector.ann.ann_recall`
        takes them); or ``corpus`` a BEIR collection folder, embedded by ``model``
        (:func:`~rankmeter.vector.ann.collection_vectors`, cached), and no ``queries``
    indexes : index specs (default: :data:`DEFAULT_INDEX`)
    k : the k of recall@k (default :data:`DEFAULT_KS`)
    metric, backend, seed : as for :func:`~rankmeter.vector.ann.ann_recall`
    sweep : parameter values to measure, as typed (``["efSearch=16,32"]``,
        :func:`~rankmeter.vector.ann.parse_sweep`) or as a mapping
    threads : threads for searching and training; 0 or None: all cores
    model : the embedding model of a collection folder (None: the packaged all-MiniLM-L6-v2)
    results_dir : where the caller will write the results
        (:func:`rankmeter.report.ann.write_results`): checked to be a folder (or missing)
        before any work, and it asks for the benchmark of several indexes even for one
    names : how messages name the parameters (keys of :data:`PARAMETER_NAMES`); the command
        line gives ``{"indexes": "--index", "queries": "QUERIES", ...}``

    Returns
    -------
    :class:`~rankmeter.vector.ann.AnnRecall` for one index, else
    :class:`~rankmeter.vector.ann.AnnBenchmark` (with a collection's judgments, the quality
    each setting loses); with a collection folder, both name the folder and the model as their
    corpus and queries.

    Raises
    ------
    IndexSpecError
        A setting that is not valid or does not fit the data, before any work where it can be
        known then; its ``option`` is the name (from ``names``) of the parameter it is about.

    >>> try:
    ...     measure_indexes("corpus.npy", indexes=["hnsw(M=0)"], names={"indexes": "--index"})
    ... except IndexSpecError as exc:
    ...     print(exc.option, exc)
    --index M=0 in 'hnsw(M=0)' is out of range: it must be at least 2
    """
    named = {**PARAMETER_NAMES, **(names or {})}
    indexes = list(indexes or [DEFAULT_INDEX])
    ks = tuple(k or DEFAULT_KS)
    threads = threads or None
    if len(indexes) > 1 or results_dir is not None:
        swept = _sweep(sweep, named["sweep"])
        try:
            plans = benchmark_settings(indexes, swept, backend)
        except IndexSpecError as exc:
            # The spec checker names a swept value as in 'sweep efSearch'.
            swept_value = re.search(r"\bswe(pt|ep)\b", str(exc))
            raise _about(exc, named["sweep" if swept_value else "indexes"]) from None
        if (
            results_dir is not None
            and Path(results_dir).exists()
            and not Path(results_dir).is_dir()
        ):
            raise _refuse(f"{results_dir} is not a folder", named["results_dir"])
        settings = [setting for _, plan in plans for setting in plan]
        vectors, embedded = _vectors(corpus, queries, model, settings, ks, named)
        judged: dict[str, Any] = {} if embedded is None else embedded.judged()
        result: AnnRecall | AnnBenchmark = _naming(
            named["indexes"],
            lambda: ann_benchmark(
                *vectors,
                indexes,
                k=ks,
                metric=metric,
                backend=backend,
                sweep=swept,
                seed=seed,
                threads=threads,
                **judged,
            ),
        )
    else:
        spec = _naming(named["indexes"], lambda: parse_index_spec(indexes[0]))
        _naming(named["backend"], lambda: check_backend(spec, backend))
        swept = _sweep(sweep, named["sweep"])
        settings = _naming(named["sweep"], lambda: sweep_settings(spec, swept))
        vectors, embedded = _vectors(corpus, queries, model, settings, ks, named)
        result = _naming(
            named["indexes"],  # a spec that does not fit the data (pq m and the dimension)
            lambda: ann_recall(
                *vectors,
                spec,
                k=ks,
                metric=metric,
                backend=backend,
                sweep=swept,
                seed=seed,
                threads=threads,
            ),
        )
    if embedded is not None:
        result = dataclasses.replace(result, corpus=embedded.names[0], queries=embedded.names[1])
    return result


def _sweep(sweep: Sequence[str] | Mapping[str, Sequence[int]] | None, option: str) -> Any:
    """A sweep as typed (read by :func:`parse_sweep`) or as a mapping."""
    if isinstance(sweep, Mapping):
        return dict(sweep)
    return _naming(option, lambda: parse_sweep(list(sweep or [])))


def _vectors(
    corpus: Any,
    queries: Any,
    model: Any,
    settings: list[Any],
    ks: tuple[int, ...],
    named: Mapping[str, str],
) -> tuple[tuple[Any, Any], Any]:
    """The corpus and query vectors as given, or a BEIR collection folder embedded by the
    model (cached), and the embedded collection (None for vectors given)."""
    is_folder = isinstance(corpus, (str, os.PathLike)) and Path(corpus).is_dir()
    corpus_name, queries_name = named["corpus"], named["queries"]
    if not is_folder:
        if queries is None:
            raise _refuse(
                f"give {queries_name} vectors beside the {corpus_name} vectors "
                "(or a collection folder alone)",
                queries_name,
            )
        if model is not None:
            raise _refuse(
                f"{named['model']} embeds a collection folder; {corpus_name} is a vector file",
                named["model"],
            )
        return (corpus, queries), None
    if queries is not None:
        raise _refuse(
            f"a collection folder is embedded whole: give it alone, without {queries_name}",
            queries_name,
        )
    from rankmeter.vector.ann.collection import collection_vectors

    embedded = _naming(
        named["indexes"], lambda: collection_vectors(corpus, model, settings=settings, ks=ks)
    )
    return (embedded.corpus, embedded.queries), embedded
