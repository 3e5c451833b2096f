"""Runs that compare does not read: what it needs of each, computed where the run lives.

A comparison reads a run for more than its metrics: which queries it answered, Judged@k, the
queries with nothing relevant in the top k (Success@k), the metric@k curves, the data
warnings (:class:`~rankmeter.results.RunFacts`) and, for the few queries it lost most on, the
ranked documents. For a run kept on Spark (``rankmeter compare --engine spark``) all of them
but the last are per-query values of metrics (:func:`given_metrics`), computed in the same pass
as the metrics asked for; the documents of the worst queries are fetched alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rankmeter._validate import number_text
from rankmeter.comparison._curves import CURVE_DEPTH, CURVE_FAMILIES
from rankmeter.comparison._failures import success_metric
from rankmeter.errors import PolicyError

if TYPE_CHECKING:
    from rankmeter.data import Qrels, Run
    from rankmeter.metrics import Metric
    from rankmeter.results import EvalResult, Policies, RunFacts


@dataclass(frozen=True)
class GivenRun:
    """A run compared by what was computed of it elsewhere (e.g. on Spark).

    Attributes
    ----------
    name : the run's name in the comparison
    values : its per-query values of every judged query (computed with
        ``include_missing=True`` and the comparison's policies) for the metrics compared and
        :func:`given_metrics`; its ``facts`` set (the data warnings come from them)
    query_ids : the ids of every query it has results for
    rows : ``rows(query_ids)``: a Run holding its results for these queries (the worst ones,
        explained rank by rank); other queries may be missing from it
    depth : the most results one of its queries has
    """

    name: str
    values: EvalResult
    query_ids: tuple[str, ...]
    rows: Callable[[Sequence[str]], Run]
    depth: int


def given_metrics(
    metrics: Sequence[Metric | str] | None, *, rel: float = 1, cutoff: int = 10
) -> list[str]:
    """The metrics a :class:`GivenRun`'s values hold for :func:`~rankmeter.compare` besides
    those compared (``metrics``; None: the defaults): Judged@k (k as
    :func:`~rankmeter.results.judged_cutoff` chooses it), num_ret, Success@``cutoff`` at
    ``rel`` (the failure lists) and the metric@k curves' nDCG@k, P@k and R@k for k = 1 ..
    :data:`~rankmeter.comparison.CURVE_DEPTH`.

    >>> extra = given_metrics(["AP"], rel=2, cutoff=5)
    >>> extra[:3], len(extra)
    (['Judged@10', 'num_ret', 'Success(rel=2)@5'], 303)
    """
    from rankmeter.evaluation import resolve_metrics
    from rankmeter.results import judged_cutoff

    measures = resolve_metrics(metrics)
    number = number_text(rel)
    return [
        f"Judged@{judged_cutoff(measures)}",
        "num_ret",
        f"Success(rel={number})@{cutoff}",
        *(f"{family}@{k}" for family in CURVE_FAMILIES for k in range(1, CURVE_DEPTH + 1)),
    ]


def given_runs(runs: Any) -> dict[str, GivenRun] | None:
    """The runs by name when every one is a :class:`GivenRun` (None when none is; only a
    list, tuple or dict of runs is looked into, so that nothing else is consumed here)."""
    if isinstance(runs, Mapping):
        listed = list(runs.values())
    elif isinstance(runs, (list, tuple)):
        listed = list(runs)
    else:
        return None
    kept = [r for r in listed if isinstance(r, GivenRun)]
    if not kept:
        return None
    if len(kept) != len(listed):
        raise PolicyError("runs: give every run as a GivenRun, or none (they cannot be mixed)")
    named: dict[str, GivenRun] = {}
    for run in kept:
        if run.name in named:
            raise PolicyError(f"two runs are named {run.name!r}: give each run its own name")
        named[run.name] = run
    return named


def run_depth(run: Run | GivenRun) -> int:
    """The most results any query of the run has (a GivenRun knows it)."""
    from rankmeter.results import depth_of

    return run.depth if isinstance(run, GivenRun) else depth_of(run.offsets)


def run_facts(qrels: Qrels, run: Run | GivenRun) -> RunFacts:
    """What the data warnings need of a run: read from it, or given with its values."""
    from rankmeter.results import RunFacts

    if isinstance(run, GivenRun):
        if run.values.facts is None:
            raise PolicyError(f"the values of run {run.name!r} carry no facts (RunFacts)")
        return run.values.facts
    return RunFacts.of_run(qrels.query_ids, run)


def given_extras(
    given: Mapping[str, GivenRun],
    order: Sequence[str],
    measures: tuple[Metric, ...],
    ids: Sequence[str],
    cutoff: int,
    policies: Policies,
) -> tuple[int, dict[str, float], dict[str, Any], dict[str, dict[str, Any]]]:
    """What compare computes from a joined run, taken from given values (:func:`given_metrics`):
    Judged@k (its k and each system's mean), Success@``cutoff`` per system and query, and
    each system's mean curves, as compare computes them from the join (its ``_judged``,
    ``_hits`` and :func:`~rankmeter.comparison._curves.mean_curves`)."""
    import numpy as np

    from rankmeter.metrics import parse_metric
    from rankmeter.results import judged_cutoff, judged_mean

    k = judged_cutoff(measures)
    wanted = [
        parse_metric(f"Judged@{k}"),
        parse_metric("num_ret"),
        success_metric(cutoff, policies.rel),
    ]
    curve_metrics = {
        family: [parse_metric(f"{family}@{i}") for i in range(1, CURVE_DEPTH + 1)]
        for family in CURVE_FAMILIES
    }
    every = [*wanted, *(m for family in CURVE_FAMILIES for m in curve_metrics[family])]
    columns = given_scores({n: given[n].values for n in order}, order, tuple(every), ids)
    judged: dict[str, float] = {}
    hits: dict[str, Any] = {}
    curves: dict[str, dict[str, Any]] = {}
    for n in order:
        judged[n] = judged_mean(columns[wanted[0].label][n], columns[wanted[1].label][n])
        hits[n] = columns[wanted[2].label][n]
        curves[n] = {}
        for family in CURVE_FAMILIES:
            if not len(ids):
                curves[n][family] = np.zeros(CURVE_DEPTH)
                continue
            # One contiguous row per cutoff, averaged as mean_curves averages them.
            per_cutoff = np.stack([columns[m.label][n] for m in curve_metrics[family]])
            curves[n][family] = np.ascontiguousarray(per_cutoff).mean(axis=1)
    return k, judged, hits, curves


def given_scores(
    values: Mapping[str, EvalResult],
    order: Sequence[str],
    measures: tuple[Metric, ...],
    ids: Sequence[str],
) -> dict[str, dict[str, Any]]:
    """``values`` (run name -> EvalResult) as compare's scores: metric -> run -> the values
    of the compared queries ``ids``, in their order."""
    import numpy as np

    scores: dict[str, dict[str, Any]] = {m.label: {} for m in measures}
    for name in order:
        if name not in values:
            raise PolicyError(
                f"values has no run {name!r} (it has {', '.join(map(str, values)) or 'none'})"
            )
        per_query = values[name].per_query
        position = {q: i for i, q in enumerate(per_query.query_ids)}
        absent = [q for q in ids if q not in position]
        if absent:
            raise PolicyError(
                f"values of run {name!r} lack {len(absent)} compared queries (e.g. "
                f"{absent[0]!r}): compute them with include_missing=True"
            )
        rows = np.fromiter((position[q] for q in ids), dtype=np.int64, count=len(ids))
        for m in measures:
            try:
                given = per_query[m.label]
            except KeyError:
                raise PolicyError(f"values of run {name!r} lack the metric {m.label}") from None
            scores[m.label][name] = np.asarray(given, dtype=np.float64)[rows]
    return scores
