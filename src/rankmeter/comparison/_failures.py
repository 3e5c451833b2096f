"""Where a system fails: the queries it lost most on, answered with nothing, or missed."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from rankmeter._validate import number_text
from rankmeter.comparison._queries import ComparedQueries
from rankmeter.comparison._records import Failures, QueryLoss, better_of
from rankmeter.comparison._summaries import Scores
from rankmeter.data import Qrels, Run
from rankmeter.metrics import Metric, parse_metric
from rankmeter.results import Policies

#: The points of the distribution of per-query differences each failure list gives.
QUANTILES = ("min", "5%", "25%", "median", "75%", "95%", "max")


def failures_of(
    system: str,
    *,
    base: str,
    metric: str,
    scores: Scores,
    num_rel: Any,
    hits: Any,
    queries: ComparedQueries,
    texts: Mapping[str, str],
    worst: int,
    cutoff: int,
    policies: Policies,
) -> Failures:
    """Where ``system`` fails on ``metric`` (the baseline's list has no worst queries);
    ``num_rel`` and ``hits``: each compared query's relevant documents and the system's
    Success@``cutoff`` there (:func:`success_metric`)."""
    query_ids = queries.ids
    answered = queries.answered[system]
    values = scores[metric][system]
    diffs = values - scores[metric][base]
    gains = -diffs if better_of(metric) == "lower" else diffs  # positive: the system is better
    order = np.lexsort((np.arange(len(gains)), gains))
    losers = [int(i) for i in order[:worst] if gains[i] < 0]
    lost = tuple(
        QueryLoss(
            query=query_ids[i],
            text=texts.get(query_ids[i]),
            baseline=float(scores[metric][base][i]),
            system=float(values[i]),
            difference=float(diffs[i]),
        )
        for i in losers
    )
    no_results = tuple(q for q in query_ids if q not in answered)
    missed = np.flatnonzero((hits == 0) & (num_rel > 0))
    nothing = tuple(query_ids[i] for i in missed if query_ids[i] in answered)
    if len(diffs):
        points = np.quantile(diffs, [0, 0.05, 0.25, 0.5, 0.75, 0.95, 1])
    else:
        points = np.full(len(QUANTILES), np.nan)
    return Failures(
        system=system,
        metric=metric,
        worst=lost if system != base else (),
        no_results=no_results,
        nothing_relevant=nothing,
        quantiles=MappingProxyType({k: float(v) for k, v in zip(QUANTILES, points, strict=True)}),
    )


def success_metric(cutoff: int, rel: float) -> Metric:
    """Success@``cutoff`` at ``rel``: a query it scores 0 has nothing relevant in the top
    ``cutoff`` (a failure)."""
    return parse_metric(f"Success(rel={number_text(rel)})@{cutoff}")


def explain_worst(
    qrels: Qrels,
    run_of: Callable[[str, list[str]], Run],
    base: str,
    metric: Metric,
    failures: tuple[Failures, ...],
    policies: Policies,
) -> dict[str, dict[str, Any]]:
    """The first metric explained rank by rank for each listed worst query, for the system
    that lost on it and for the baseline; ``run_of(system, queries)``: a run holding the
    system's results for these queries."""
    from rankmeter.explanation import explain

    wanted: dict[str, list[str]] = {}
    for f in failures:
        for loss in f.worst:
            wanted.setdefault(f.system, []).append(loss.query)
            wanted.setdefault(base, []).append(loss.query)
    out: dict[str, dict[str, Any]] = {}
    for system, query_list in wanted.items():
        listed = list(dict.fromkeys(query_list))
        run = run_of(system, listed)
        out[system] = {
            q: explain(
                qrels,
                run,
                q,
                metric,
                rel=policies.rel,
                judged_only=policies.judged_only,
                ties=policies.ties,
            )
            for q in listed
        }
    return out
