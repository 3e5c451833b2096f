"""evaluate(qrels, runs, metrics) -> EvalResult: the front door of the offline evaluation.

The module is named evaluation, not evaluate, so that importing it never rebinds the
package attribute ``rankmeter.evaluate`` (the function) to a module.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

from rankmeter._validate import boolean
from rankmeter.data import Qrels, Run
from rankmeter.data.arrays import take
from rankmeter.errors import RankmeterError
from rankmeter.io import as_qrels, as_run, load_runs
from rankmeter.io.pool import sampled_qrels
from rankmeter.metrics import DEFAULT_METRICS, Metric, Ranked, join, parse_metrics, reads_subtopics
from rankmeter.results import (
    WRITTEN_DEPTH,
    EvalResult,
    EvalResults,
    OverlapTally,
    PerQuery,
    Policies,
    RunFacts,
    judged_cutoff,
    judged_mean,
    relevant_only,
)

__all__ = [
    "QueryValues",
    "check_policies",
    "evaluate",
    "no_common_queries",
    "per_query_values",
    "resolve_metrics",
]

RunLike = Any
MetricsLike = str | Metric | Iterable[str | Metric] | None


@overload
def evaluate(
    qrels: Any,
    runs: Sequence[RunLike] | Mapping[str, Run],
    metrics: MetricsLike = ...,
    *,
    rel: float = ...,
    include_missing: bool = ...,
    judged_only: bool = ...,
    ties: str = ...,
    stream: bool | None = ...,
    inclusion: Any = ...,
) -> EvalResults: ...


@overload
def evaluate(
    qrels: Any,
    runs: RunLike,
    metrics: MetricsLike = ...,
    *,
    rel: float = ...,
    include_missing: bool = ...,
    judged_only: bool = ...,
    ties: str = ...,
    stream: bool | None = ...,
    inclusion: Any = ...,
) -> EvalResult: ...


def evaluate(
    qrels: Any,
    runs: Any,
    metrics: MetricsLike = None,
    *,
    rel: float = 1,
    include_missing: bool = False,
    judged_only: bool = False,
    ties: str = "trec_eval",
    stream: bool | None = None,
    inclusion: Any = None,
) -> EvalResult | EvalResults:
    """Evaluate one run, or several against the same qrels, with trec_eval's semantics.

    Parameters
    ----------
    qrels : Qrels, path, dict ``{query: {doc: grade}}``, DataFrame or Arrow table
    runs : Run, path, dict ``{query: {doc: score}}``, DataFrame or Arrow table; or a list of
        them, or a dict ``{name: run}``, for several runs
    metrics : metric names (``"nDCG@10"``, ``"P(rel=2)@5"``, ``"map"``); default
        nDCG@10, P@10, R@100, RR, AP
    rel : minimum grade counted relevant by binary metrics (trec_eval -l); nDCG uses raw grades
    include_missing : evaluate judged queries without results as empty rankings (trec_eval -c)
    judged_only : drop unjudged documents from rankings first (trec_eval -J)
    ties : ``"trec_eval"`` (score descending, then doc id descending) or ``"input"``
    stream : read TREC run files in chunks of whole queries, in memory bounded by the largest
        chunk (the file must be grouped by query); a FIFO or process substitution streams
        too. None (default): TREC run files that are regular files are streamed, and read
        whole when they are not grouped by query; other inputs (read only once) are read
        whole. False: read whole.
    inclusion : where the judgments are a sample (``rankmeter pool --max-per-query``), each
        judgment's inclusion probability, read by statAP, stat_nDCG and stat_P: the pool
        file's path, the Pool, or a mapping ``{(query_id, doc_id): probability}`` (see
        :func:`rankmeter.io.sampled_qrels`); None: every judgment made in full (probability 1)

    Returns
    -------
    EvalResult for one run; EvalResults (a mapping run name -> EvalResult) for a list or dict.

    Edge cases: a query with no relevant documents scores 0 on metrics that divide by the
    number relevant; counts (NumRet, NumRel, NumRelRet) are summed instead of averaged.

    Examples
    --------
    The lesson's example: first relevant results at ranks 1, 3 and 10 give MRR 0.48.

    >>> qrels = {"a": {"x": 1}, "b": {"y": 1}, "c": {"z": 1}}
    >>> def ranked(hit, at):
    ...     return {f"n{i}": 10.0 - i for i in range(1, at)} | {hit: 10.0 - at}
    >>> run = {"a": ranked("x", 1), "b": ranked("y", 3), "c": ranked("z", 10)}
    >>> result = evaluate(qrels, run, ["MRR", "P@1"])
    >>> round(result.metrics["MRR"], 2), result.metrics["P@1"]
    (0.48, 0.3333333333333333)
    >>> result.per_query.to_dict()["b"]["MRR"]
    0.3333333333333333

    Results are keyed by the names asked for; a lookup accepts any name of a metric.

    >>> list(result.metrics), result.metrics["RR"] == result.metrics["recip_rank"]
    (['MRR', 'P@1'], True)

    Every result also carries the run's Judged@k (k: the largest cutoff asked for, here 1),
    for the warning reports give when too much of the top k is unjudged:

    >>> result.judged_k, round(result.judged, 4), result.judged_warning(0.9) is not None
    (1, 0.3333, True)
    """
    from rankmeter.io.stream import run_files_to_stream

    policies = Policies(rel, include_missing, judged_only, ties)
    if stream is not None:
        boolean("stream", stream)
    measures = resolve_metrics(metrics)
    many = _is_collection(runs)
    paths = run_files_to_stream(runs, many=many, explicit=bool(stream))
    if paths is not None and stream is not False:
        # The first run is read (on threads of its own) while the qrels are read here.
        first = _start_stream(paths[0], policies)
        try:
            loaded_qrels = sampled_qrels(
                as_qrels(qrels, subtopics=reads_subtopics(measures)), inclusion
            )
        except BaseException:
            _close(first)
            raise
        try:
            streamed = [
                _evaluate_stream(
                    loaded_qrels, p, measures, policies, name=n, chunks=first if i == 0 else None
                )
                for i, (n, p) in enumerate(paths)
            ]
            if not many:
                return streamed[0]
            return EvalResults.named(streamed, [os.fspath(p) for _, p in paths])
        except RankmeterError:
            if stream:
                raise
            # Automatic streaming gave up (a run not grouped by query, bad data): the
            # in-memory path copes with the former and words errors as the readers do.
        finally:
            _close(first)
    else:
        loaded_qrels = sampled_qrels(
            as_qrels(qrels, subtopics=reads_subtopics(measures)), inclusion
        )
    if many:
        loaded = load_runs(runs, ties=ties)
        return EvalResults(
            tuple(_evaluate_one(loaded_qrels, r, measures, policies) for r in loaded)
        )
    return _evaluate_one(loaded_qrels, as_run(runs, ties=ties), measures, policies)


def _start_stream(named: tuple[str | None, Any], policies: Policies) -> Any:
    """The chunks of a run file, being read already; or the error that opening it raised, to
    be raised when the chunks are asked for (after the qrels' own errors, as before)."""
    from rankmeter.io.stream import iter_run_chunks

    name, path = named
    try:
        return iter_run_chunks(path, name=name, ties=policies.ties)
    except RankmeterError as exc:
        return exc


def _close(chunks: Any) -> None:
    close = getattr(chunks, "close", None)
    if close is not None:
        close()


def _evaluate_stream(
    qrels: Qrels,
    path: Any,
    measures: tuple[Metric, ...],
    policies: Policies,
    *,
    name: str | None = None,
    chunks: Any = None,
) -> EvalResult:
    """Evaluate a run file chunk by chunk (whole queries per chunk) and merge per query;
    ``chunks``: its chunks, if reading them has begun (see :func:`_start_stream`)."""
    from rankmeter.io.stream import iter_run_chunks

    if isinstance(chunks, RankmeterError):
        raise chunks
    if chunks is None:
        chunks = iter_run_chunks(path, name=name, ties=policies.ties)
        try:
            return _evaluate_chunks(qrels, chunks, measures, policies, name=name, path=path)
        finally:
            _close(chunks)
    return _evaluate_chunks(qrels, chunks, measures, policies, name=name, path=path)


def _evaluate_chunks(
    qrels: Qrels,
    chunks: Any,
    measures: tuple[Metric, ...],
    policies: Policies,
    *,
    name: str | None,
    path: Any,
) -> EvalResult:
    """:func:`_evaluate_stream` on the chunks of the run file ``path``."""
    seen = {"name": name or "run", "source": str(path)}
    tally = OverlapTally.of(qrels)  # the overlap, counted chunk by chunk (no set of every id)
    written = [0, 0]  # queries, rising: see RunFacts

    def named(chunks: Iterable[Run]) -> Iterable[Run]:
        nonlocal written
        for chunk in chunks:  # the last chunk read names the run (its tag) and its file
            seen["name"], seen["source"] = chunk.name, chunk.source
            # What the warnings need, from the chunks as they pass (RunFacts).
            tally.add(chunk.segment_strings)
            written = [
                a + b for a, b in zip(written, chunk.written_order(WRITTEN_DEPTH), strict=True)
            ]
            yield chunk

    values = per_query_values(qrels, named(chunks), measures, policies)
    if values.n_queries == 0:
        raise no_common_queries(seen["name"], seen["source"], (), qrels)
    means = {m.label: m.aggregate(values.values[m.label]) for m in measures}
    # (an Arrow array: PerQuery makes the ids Python strings only when they are read)
    per_query = PerQuery(take(qrels.query_strings, values.rows), measures, values.values)
    judged = judged_mean(values.judged, values.num_ret)
    return EvalResult(
        seen["name"],
        means,
        per_query,
        policies,
        measures,
        judged,
        values.judged_k,
        _depth(values.num_ret),
        facts=RunFacts.of_tally(seen["source"], tally, written),
        relevant_only=relevant_only(qrels.grades, policies.rel),
    )


@dataclass(frozen=True)
class QueryValues:
    """Every metric's value per query, as :func:`per_query_values` computes them.

    Attributes
    ----------
    rows : int64 array
        The queries, as rows of the qrels (ascending: the qrels' natural query order).
    values : dict
        Metric label -> float64 array, one value per query of ``rows``.
    judged, num_ret : float64 arrays
        Per query, Judged@``judged_k`` and the number of results (what
        :func:`~rankmeter.results.judged_mean` averages into the run's Judged@k).
    judged_k : int
        The cutoff of ``judged`` (:func:`~rankmeter.results.judged_cutoff` of the metrics).
    """

    rows: Any
    values: dict[str, Any]
    judged: Any
    num_ret: Any
    judged_k: int

    @property
    def n_queries(self) -> int:
        """How many queries have values."""
        return len(self.rows)


def per_query_values(
    qrels: Qrels, runs: Iterable[Run], measures: tuple[Metric, ...], policies: Policies
) -> QueryValues:
    """The per-query work of an evaluation: each part of one run joined with the qrels and
    scored by the metric kernels, then (under ``include_missing``) the judged queries no part
    had, scored as empty rankings; the values merged in the qrels' query order.

    The streaming engine calls it with a run file's chunks, the Spark engine
    (:mod:`rankmeter.engines.spark`) with one bucket's run and qrels; each part must hold
    whole queries, every query in one part only.

    Parameters
    ----------
    qrels : Qrels
    runs : iterable of Run
        The parts of one run (an empty iterable: no results at all).
    measures : the metrics (:func:`resolve_metrics`)
    policies : Policies (:func:`check_policies`; ``ties`` was applied when the parts were read)

    Returns
    -------
    QueryValues
        No queries when no part shares a query with the qrels and ``include_missing`` is off.

    Examples
    --------
    >>> from rankmeter.io import as_qrels, as_run
    >>> qrels = as_qrels({"1": {"a": 1}, "2": {"b": 1}, "3": {"c": 1}})
    >>> parts = [as_run({"2": {"b": 1.0}}), as_run({"1": {"x": 2.0, "a": 1.0}})]
    >>> got = per_query_values(qrels, parts, resolve_metrics("RR"), check_policies())
    >>> got.rows.tolist(), got.values["RR"].tolist()
    ([0, 1], [0.5, 1.0])
    >>> missing = check_policies(include_missing=True)
    >>> per_query_values(qrels, parts, resolve_metrics("RR"), missing).values["RR"].tolist()
    [0.5, 1.0, 0.0]
    """
    import numpy as np

    judged_k, judged_metric, asked = _judged_metric(measures)
    rows: list[Any] = []
    values: dict[str, list[Any]] = {m.label: [] for m in measures}
    judged: list[Any] = []
    num_ret: list[Any] = []

    def collect(ranked: Ranked) -> None:
        rows.append(ranked.qrels_rows)
        for m in measures:
            values[m.label].append(m.compute(ranked))
        # Judged@k from the same join: the metric's values when it was asked for.
        judged.append(values[asked][-1] if asked is not None else judged_metric.compute(ranked))
        num_ret.append(ranked.num_ret)

    for run in runs:
        ranked = join(qrels, run, rel=policies.rel, judged_only=policies.judged_only, compact=True)
        if ranked.n_queries:
            collect(ranked)
    if policies.include_missing:
        seen = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
        missing = np.setdiff1d(np.arange(qrels.n_queries, dtype=np.int64), seen)
        if len(missing):
            collect(join(qrels, None, rel=policies.rel, only=missing))
    if not rows:
        empty = np.zeros(0, dtype=np.float64)
        return QueryValues(
            np.zeros(0, dtype=np.int64), {m.label: empty for m in measures}, empty, empty, judged_k
        )
    all_rows = np.concatenate(rows)
    order = np.argsort(all_rows, kind="stable")  # qrels rows are in natural query order
    return QueryValues(
        all_rows[order],
        {k: np.concatenate(v)[order] for k, v in values.items()},
        np.concatenate(judged)[order].astype(np.float64),
        np.concatenate(num_ret)[order].astype(np.float64),
        judged_k,
    )


def resolve_metrics(metrics: MetricsLike) -> tuple[Metric, ...]:
    """The metrics asked for: one name or :class:`~rankmeter.metrics.Metric`, several, or None
    for the defaults (nDCG@10, P@10, R@100, RR, AP), parsed as :func:`rankmeter.evaluate` and
    :func:`rankmeter.compare` read them.

    >>> [m.label for m in resolve_metrics("P@5")], len(resolve_metrics(None))
    (['P@5'], 5)
    """
    return parse_metrics(DEFAULT_METRICS if metrics is None else _as_names(metrics))


def check_policies(
    rel: Any = 1, include_missing: Any = False, judged_only: Any = False, ties: Any = "trec_eval"
) -> Policies:
    """The evaluation policies, each checked (a PolicyError names a bad one), as
    :func:`rankmeter.evaluate` takes them (:class:`~rankmeter.results.Policies` checks its
    values itself)."""
    return Policies(rel, include_missing, judged_only, ties)


def _as_names(metrics: Any) -> Iterable[str | Metric]:
    return [metrics] if isinstance(metrics, (str, Metric)) else metrics


def _is_collection(runs: Any) -> bool:
    if isinstance(runs, (list, tuple)):
        return True
    if isinstance(runs, Mapping) and runs:
        # {query: {doc: score}} is one run; {name: run} (a Run, path, frame or run dict) is many.
        first = next(iter(runs.values()))
        if not isinstance(first, Mapping):
            return True
        inner = next(iter(first.values()), None)
        return isinstance(inner, Mapping)
    return False


def _evaluate_one(
    qrels: Qrels, run: Run, measures: tuple[Metric, ...], policies: Policies
) -> EvalResult:
    ranked = join(
        qrels,
        run,
        rel=policies.rel,
        include_missing=policies.include_missing,
        judged_only=policies.judged_only,
        compact=True,
    )
    if ranked.n_queries == 0:
        raise no_common_queries(run.name, run.source, run.query_ids, qrels)
    values = {m.label: m.compute(ranked) for m in measures}
    means = {name: m.aggregate(values[name]) for name, m in zip(values, measures, strict=True)}
    per_query = PerQuery(take(qrels.query_strings, ranked.qrels_rows), measures, values)
    judged_k, judged_metric, asked = _judged_metric(measures)
    judged = values[asked] if asked is not None else judged_metric.compute(ranked)
    coverage = judged_mean(judged, ranked.num_ret)
    return EvalResult(
        run.name,
        means,
        per_query,
        policies,
        measures,
        coverage,
        judged_k,
        _depth(ranked.num_ret),
        facts=RunFacts.of_run(qrels, run),
        relevant_only=relevant_only(qrels.grades, policies.rel),
    )


def _depth(num_ret: Any) -> int:
    """The most results any query joined has (:attr:`EvalResult.depth`)."""
    return int(num_ret.max()) if len(num_ret) else 0


def _judged_metric(measures: tuple[Metric, ...]) -> tuple[int, Metric, str | None]:
    """The run's Judged@k (k: :func:`~rankmeter.results.judged_cutoff` of the metrics): k, the
    metric, and the label it was asked for by (its values are then reused), else None."""
    from rankmeter.metrics import parse_metric

    judged_k = judged_cutoff(measures)
    metric = parse_metric(f"Judged@{judged_k}")
    return judged_k, metric, next((m.label for m in measures if m == metric), None)


def no_common_queries(
    name: str, source: str, run_queries: tuple[str, ...], qrels: Qrels
) -> RankmeterError:
    """The error for a run that has no query in common with the qrels (ids from another
    scheme, or files that do not belong together)."""
    shown = f"run queries start {_sample(run_queries)}, " if run_queries else ""
    return RankmeterError(
        f"run {name!r} ({source}) has no query in common with the qrels ({qrels.source}): "
        f"{shown}qrels queries start {_sample(qrels.query_ids)}; check that the files belong "
        "together"
    )


def _sample(ids: tuple[str, ...]) -> str:
    shown = ", ".join(ids[:3])
    return shown + (", ..." if len(ids) > 3 else "")
