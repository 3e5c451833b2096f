"""evaluate(qrels, runs, metrics) -> EvalResult: the front door of the offline evaluation.

The module is named evaluation, not evaluate, so that importing it never rebinds the
package attribute ``rankmeter.evaluate`` (the function) to a module.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, overload

from rankmeter._validate import boolean
from rankmeter.data import Qrels, Run
from rankmeter.errors import RankmeterError
from rankmeter.io import as_qrels, as_run, load_runs
from rankmeter.metrics import DEFAULT_METRICS, Metric, join, parse_metrics
from rankmeter.results import (
    EvalResult,
    EvalResults,
    PerQuery,
    Policies,
    judged_cutoff,
    judged_mean,
)

__all__ = ["check_policies", "evaluate", "resolve_metrics"]

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
            loaded_qrels = as_qrels(qrels)
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
        loaded_qrels = as_qrels(qrels)
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
    import numpy as np

    rows: list[Any] = []
    values: dict[str, list[Any]] = {m.label: [] for m in measures}
    coverage = _Coverage(measures)
    source = str(path)
    run_name = name or "run"

    def collect(ranked: Any) -> None:
        rows.append(ranked.qrels_rows)
        for m in measures:
            values[m.label].append(m.compute(ranked))
        coverage.add(ranked, values)

    for chunk in chunks:
        run_name, source = chunk.name, chunk.source
        ranked = join(
            qrels, chunk, rel=policies.rel, judged_only=policies.judged_only, compact=True
        )
        if ranked.n_queries:
            collect(ranked)
    seen = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    if policies.include_missing:
        missing = np.setdiff1d(np.arange(qrels.n_queries, dtype=np.int64), seen)
        if len(missing):
            collect(join(qrels, None, rel=policies.rel, only=missing))
    if not rows:
        raise _no_common_queries(run_name, source, (), qrels)
    all_rows = np.concatenate(rows)
    order = np.argsort(all_rows, kind="stable")  # qrels rows are in natural query order
    merged = {k: np.concatenate(v)[order] for k, v in values.items()}
    means = {k: m.aggregate(merged[k]) for k, m in zip(merged, measures, strict=True)}
    query_ids = tuple(str(q) for q in qrels.segment_ids[all_rows[order]])
    per_query = PerQuery(query_ids, measures, merged)
    return EvalResult(
        run_name,
        means,
        per_query,
        policies,
        measures,
        coverage.mean(),
        coverage.k,
        coverage.depth(),
    )


class _Coverage:
    """The run's Judged@k (k: :func:`~rankmeter.results.judged_cutoff` of the metrics), from
    the same joins as the metrics: reused when it was asked for, else one more kernel."""

    def __init__(self, measures: tuple[Metric, ...]) -> None:
        from rankmeter.metrics import parse_metric

        self.k = judged_cutoff(measures)
        self.metric = parse_metric(f"Judged@{self.k}")
        self.asked = next((m.label for m in measures if m == self.metric), None)
        self.values: list[Any] = []
        self.num_ret: list[Any] = []

    def add(self, ranked: Any, values: Mapping[str, Any]) -> None:
        """The values of one join (``values``: the metrics' so far; the last is this join's)."""
        if self.asked is not None:
            self.values.append(values[self.asked][-1])
        else:
            self.values.append(self.metric.compute(ranked))
        self.num_ret.append(ranked.num_ret)

    def mean(self) -> float:
        import numpy as np

        return judged_mean(np.concatenate(self.values), np.concatenate(self.num_ret))

    def depth(self) -> int:
        """The most results any query joined has."""
        return max((int(n.max()) for n in self.num_ret if len(n)), default=0)


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
        raise _no_common_queries(run.name, run.source, run.query_ids, qrels)
    values = {m.label: m.compute(ranked) for m in measures}
    means = {name: m.aggregate(values[name]) for name, m in zip(values, measures, strict=True)}
    per_query = PerQuery(tuple(str(q) for q in ranked.query_ids), measures, values)
    coverage = _Coverage(measures)
    coverage.add(ranked, {k: [v] for k, v in values.items()})
    return EvalResult(
        run.name,
        means,
        per_query,
        policies,
        measures,
        coverage.mean(),
        coverage.k,
        coverage.depth(),
    )


def _no_common_queries(
    name: str, source: str, run_queries: tuple[str, ...], qrels: Qrels
) -> RankmeterError:
    shown = f"run queries start {_sample(run_queries)}, " if run_queries else ""
    return RankmeterError(
        f"run {name!r} ({source}) has no query in common with the qrels ({qrels.source}): "
        f"{shown}qrels queries start {_sample(qrels.query_ids)}; check that the files belong "
        "together"
    )


def _sample(ids: tuple[str, ...]) -> str:
    shown = ", ".join(ids[:3])
    return shown + (", ..." if len(ids) > 3 else "")
