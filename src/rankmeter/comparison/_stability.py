"""stability(qrels, runs, metrics) -> QueryStability: how much can this query set be trusted?

The runs are scored on compare's query set (every judged query; a run without results for a
query scores 0 on it, as trec_eval -c), one matrix per metric, and each matrix goes to
:func:`rankmeter.stats.query_stability`: how often bootstrap resamples of the queries and
random halves of them keep the systems' order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from rankmeter import _validate
from rankmeter.comparison._queries import join_compared, select_queries
from rankmeter.data.run import check_ties
from rankmeter.errors import PolicyError
from rankmeter.evaluation import check_policies, resolve_metrics
from rankmeter.io import as_qrels, load_runs
from rankmeter.metrics import Metric, reads_subtopics
from rankmeter.results import Policies

if TYPE_CHECKING:
    # Imported when used: importing the comparison package must not load scipy.
    from rankmeter.stats import Stability


@dataclass(frozen=True)
class QueryStability:
    """The stability of the systems' order, per metric: what :func:`stability` returns.

    Attributes
    ----------
    systems : the runs' names, as given
    metrics : the metric labels, in the order asked for
    by_metric : ``{label: Stability}``
    n : the queries the systems are scored on (every judged query)
    filled : per system, how many of them it returned no results for (each scores 0)
    policies : the evaluation policies
    notes : what a reader should know about the queries
    """

    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    by_metric: Mapping[str, Stability]
    n: int
    filled: Mapping[str, int]
    policies: Policies
    notes: tuple[str, ...] = field(default=())

    def __getitem__(self, metric: str) -> Stability:
        if metric not in self.by_metric:
            raise PolicyError(
                f"no metric {metric!r} in this result; it has {', '.join(self.metrics)}"
            )
        return self.by_metric[metric]

    def to_dict(self) -> dict[str, Any]:
        """Plain Python values: the systems, the queries, the policies and every metric's
        :meth:`rankmeter.stats.Stability.to_dict`."""
        return {
            "systems": list(self.systems),
            "metrics": list(self.metrics),
            "n": self.n,
            "filled": dict(self.filled),
            "policies": self.policies.to_dict(),
            "by_metric": {label: s.to_dict() for label, s in self.by_metric.items()},
            "notes": list(self.notes),
        }


def stability(
    qrels: Any,
    runs: Sequence[Any] | Mapping[str, Any],
    metrics: str | Metric | Iterable[str | Metric] | None = None,
    *,
    resamples: int = 1_000,
    splits: int = 1_000,
    seed: int = 0,
    rel: float = 1,
    judged_only: bool = False,
    ties: str = "trec_eval",
) -> QueryStability:
    """How much can this query set be trusted? Bootstrap and split-half stability of the
    systems' order, per metric.

    Parameters
    ----------
    qrels : Qrels, path, dict, DataFrame or Arrow table
    runs : a list of runs (paths, Runs, dicts, tables) or a dict ``{name: run}``; two or more
    metrics : metric names; default nDCG@10, P@10, R@100, RR, AP (compare's)
    resamples : bootstrap resamples of the queries (from 100; default 1,000)
    splits : random splits of the queries into two halves (from 100; default 1,000)
    seed : the seed: the same seed gives the same numbers
    rel, judged_only, ties : evaluation policies, as for :func:`rankmeter.evaluate`

    The queries are compare's: every judged query, a run without results for one scoring 0 on
    it (trec_eval -c), so the set does not depend on which runs are given.

    Returns
    -------
    QueryStability

    Examples
    --------
    >>> qrels = {f"q{i}": {"a": 1} for i in range(20)}
    >>> good = {f"q{i}": {"a": 2.0, "x": 1.0} for i in range(20)}
    >>> poor = {f"q{i}": {"x": 2.0, "a": 1.0} for i in range(20)}
    >>> result = stability(qrels, {"poor": poor, "good": good}, ["RR"])
    >>> result["RR"].order, result["RR"].pair("good", "poor").kept
    (('good', 'poor'), 1.0)
    """
    from rankmeter import stats

    # Every argument is checked before any file is read.
    policies = check_policies(rel, True, judged_only, check_ties(ties))
    resamples = _validate.resamples(
        resamples,
        low=stats.MIN_STABILITY_RESAMPLES,
        what="bootstrap resamples of the queries",
        default=1_000,
        p_values=False,
        kept=False,
    )
    splits = _count("splits", splits, "random splits of the queries into two halves")
    seed = _validate.seed(seed)
    measures = resolve_metrics(metrics)
    loaded_qrels = as_qrels(qrels, subtopics=reads_subtopics(measures))
    loaded = load_runs(runs, ties=policies.ties)
    if len(loaded) < 2:
        raise PolicyError(f"stability needs two runs or more; got {len(loaded)}")
    names = [r.name for r in loaded]
    compared = select_queries(loaded_qrels, loaded, include_missing=True)
    ranked = [join_compared(loaded_qrels, run, policies, compared.rows) for run in loaded]
    by_metric = {}
    for measure in measures:
        scores = np.column_stack([measure.compute(r) for r in ranked])
        by_metric[measure.label] = stats.query_stability(
            scores,
            names,
            resamples=resamples,
            splits=splits,
            seed=seed,
            better=measure.spec.better,
        )
    filled = compared.filled()
    return QueryStability(
        systems=tuple(names),
        metrics=tuple(m.label for m in measures),
        by_metric=by_metric,
        n=len(compared.ids),
        filled=filled,
        policies=policies,
        notes=(
            *compared.note(),
            f"queries: every judged query ({len(compared.ids):,}); a run without results for "
            "one scores 0 on it (trec_eval -c); without results: "
            + ", ".join(f"{name} {count:,}" for name, count in filled.items()),
        ),
    )


def _count(name: str, value: Any, what: str) -> int:
    """A count of splits, checked as :func:`rankmeter.stats.query_stability`
    checks it (here before any file is read)."""
    from rankmeter import stats

    return _validate.integer(
        name, value, low=stats.MIN_STABILITY_RESAMPLES, high=stats.MAX_RESAMPLES, what=what
    )
