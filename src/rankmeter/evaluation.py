"""evaluate(qrels, runs, metrics) -> EvalResult: the front door of the offline evaluation.

The module is named evaluation, not evaluate, so that importing it never rebinds the
package attribute ``rankmeter.evaluate`` (the function) to a module.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, overload

from rankmeter.data import Qrels, Run
from rankmeter.data.run import check_ties
from rankmeter.errors import PolicyError, RankmeterError
from rankmeter.metrics import DEFAULT_METRICS, Metric, parse_metrics
from rankmeter.metrics._ranked import join
from rankmeter.results import EvalResult, EvalResults, PerQuery, Policies

__all__ = ["evaluate"]

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
    >>> round(result.metrics["RR"], 2), result.metrics["P@1"]
    (0.48, 0.3333333333333333)
    >>> result.per_query.to_dict()["b"]["RR"]
    0.3333333333333333
    """
    policies = _policies(rel, include_missing, judged_only, ties)
    measures = parse_metrics(DEFAULT_METRICS if metrics is None else _as_names(metrics))
    loaded_qrels = Qrels.load(qrels)
    if _is_collection(runs):
        loaded = _load_runs(runs, ties)
        return EvalResults(
            tuple(_evaluate_one(loaded_qrels, r, measures, policies) for r in loaded)
        )
    return _evaluate_one(loaded_qrels, Run.load(runs, ties=ties), measures, policies)


def _as_names(metrics: Any) -> Iterable[str | Metric]:
    return [metrics] if isinstance(metrics, (str, Metric)) else metrics


def _policies(rel: Any, include_missing: Any, judged_only: Any, ties: str) -> Policies:
    if isinstance(rel, bool) or not isinstance(rel, (int, float)) or not math.isfinite(rel):
        raise PolicyError(f"rel={rel!r} must be a finite number (the minimum relevant grade)")
    for name, value in (("include_missing", include_missing), ("judged_only", judged_only)):
        if not isinstance(value, bool):
            raise PolicyError(f"{name}={value!r} must be True or False")
    return Policies(rel, include_missing, judged_only, check_ties(ties))


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


def _load_runs(runs: Any, ties: str) -> list[Run]:
    if isinstance(runs, Mapping):
        loaded = [Run.load(v, name=str(k), ties=ties) for k, v in runs.items()]
    else:
        loaded = [Run.load(v, ties=ties) for v in runs]
    if not loaded:
        raise PolicyError("no runs given")
    names = [r.name for r in loaded]
    if len(set(names)) < len(names):
        sources = [r.source for r in loaded]
        unique_sources = len(set(sources)) == len(sources) and not any(
            s.startswith("<") for s in sources
        )
        seen: dict[str, int] = {}
        renamed = []
        for r in loaded:
            if names.count(r.name) == 1:
                renamed.append(r)
            elif unique_sources:
                renamed.append(r.renamed(r.source))
            else:
                seen[r.name] = seen.get(r.name, 0) + 1
                renamed.append(r.renamed(f"{r.name}#{seen[r.name]}"))
        loaded = renamed
    return loaded


def _evaluate_one(
    qrels: Qrels, run: Run, measures: tuple[Metric, ...], policies: Policies
) -> EvalResult:
    ranked = join(
        qrels,
        run,
        rel=policies.rel,
        include_missing=policies.include_missing,
        judged_only=policies.judged_only,
    )
    if ranked.n_queries == 0:
        raise RankmeterError(
            f"run {run.name!r} ({run.source}) has no query in common with the qrels "
            f"({qrels.source}): run queries start {_sample(run.query_ids)}, qrels queries start "
            f"{_sample(qrels.query_ids)}; check that the files belong together"
        )
    values = {str(m): m.compute(ranked) for m in measures}
    means = {name: m.aggregate(values[name]) for name, m in zip(values, measures, strict=True)}
    per_query = PerQuery(tuple(str(q) for q in ranked.query_ids), measures, values)
    return EvalResult(run.name, means, per_query, policies, measures)


def _sample(ids: tuple[str, ...]) -> str:
    shown = ", ".join(ids[:3])
    return shown + (", ..." if len(ids) > 3 else "")
