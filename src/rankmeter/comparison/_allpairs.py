"""compare_all(): every pair of three or more systems, family-wise, per metric.

The queries are chosen and scored exactly as :func:`rankmeter.compare` chooses and scores them
(``_queries``: every judged query by default, a system's missing query scoring 0), so a
system's mean here is the mean ``compare`` reports; the statistics are
:func:`rankmeter.stats.all_pairs` on each metric's query x system matrix.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from rankmeter import _validate
from rankmeter.comparison._queries import join_compared, select_queries
from rankmeter.comparison._records import better_of
from rankmeter.data.arrays import FloatArray
from rankmeter.data.run import check_ties
from rankmeter.errors import PolicyError
from rankmeter.evaluation import check_policies, resolve_metrics
from rankmeter.io import as_qrels, load_runs
from rankmeter.metrics import Metric, reads_subtopics
from rankmeter.results import Policies, depth_of

if TYPE_CHECKING:  # rankmeter.stats (and scipy) load when a comparison is made, not on import
    from rankmeter.stats import AllPairs

#: The fewest runs an all-pairs comparison takes (two are compare's job).
MIN_SYSTEMS = 3


@dataclass(frozen=True)
class AllPairsSettings:
    """How an all-pairs comparison was made: everything needed to reproduce its numbers."""

    method: str
    alpha: float
    resamples: int
    seed: int
    policies: Policies

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "alpha": self.alpha,
            "resamples": self.resamples,
            "seed": self.seed,
            "policies": self.policies.to_dict(),
        }


@dataclass(frozen=True)
class AllPairsComparison:
    """Three or more systems, every pair compared per metric: what :func:`compare_all` returns.

    Attributes
    ----------
    systems : the systems, in the order given
    metrics : the metric labels
    query_ids : the queries compared (the same for every system and metric)
    scores : ``{metric: {system: per-query values}}`` in ``query_ids`` order
    analyses : ``{metric: AllPairs}``: the two-way ANOVA, every pair, the letters
    settings : method, alpha, resamples, seed and the evaluation policies
    filled : per system, how many compared queries it returned nothing for (each scores 0)
    notes : what a reader should know about the queries
    depths : ``{system: depth}``: the most results any query of each run has
        (:func:`rankmeter.results.depth_of`), for the warning about runs cut at different depths
    """

    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    query_ids: tuple[str, ...]
    scores: Mapping[str, Mapping[str, FloatArray]]
    analyses: Mapping[str, AllPairs]
    settings: AllPairsSettings
    filled: Mapping[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    depths: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "analyses", MappingProxyType(dict(self.analyses)))
        object.__setattr__(self, "filled", MappingProxyType(dict(self.filled)))
        object.__setattr__(self, "depths", MappingProxyType(dict(self.depths)))

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def analysis(self, metric: str) -> AllPairs:
        """The analysis of one metric, by its label."""
        try:
            return self.analyses[metric]
        except KeyError:
            raise PolicyError(
                f"no metric {metric!r} in this comparison; metrics: {', '.join(self.metrics)}"
            ) from None

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        """Plain values: the settings, the queries' count, each metric's analysis (and with
        ``per_query`` every query's values)."""
        data: dict[str, Any] = {
            "systems": list(self.systems),
            "metrics": list(self.metrics),
            "n_queries": self.n_queries,
            "settings": self.settings.to_dict(),
            "filled": dict(self.filled),
            "depths": dict(self.depths),
            "notes": list(self.notes),
            "analyses": {label: a.to_dict() for label, a in self.analyses.items()},
        }
        if per_query:
            data["query_ids"] = list(self.query_ids)
            data["per_query"] = {
                label: {name: values.tolist() for name, values in by_system.items()}
                for label, by_system in self.scores.items()
            }
        return data


def compare_all(
    qrels: Any,
    runs: Sequence[Any] | Mapping[str, Any],
    metrics: str | Metric | Iterable[str | Metric] | None = None,
    *,
    method: str = "tukey",
    alpha: float = 0.05,
    resamples: int = 10_000,
    seed: int = 0,
    rel: float = 1,
    judged_only: bool = False,
    ties: str = "trec_eval",
    include_missing: bool = True,
) -> AllPairsComparison:
    """Compare every pair of three or more systems, per metric, with the family-wise error of
    all pairs held at ``alpha``.

    Parameters
    ----------
    qrels : Qrels, path, dict, DataFrame or Arrow table
    runs : three runs or more (paths, Runs, dicts, tables), or a dict ``{name: run}``
    metrics : metric names; default nDCG@10, P@10, R@100, RR, AP (as compare's)
    method : ``"tukey"`` (default): Tukey's HSD on the two-way (system + query) model;
        ``"randomised-tukey"``: Carterette's randomised Tukey HSD (random permutations of each
        query's scores among the systems)
    alpha : the family-wise significance level (per metric: all pairs of one metric are one
        family)
    resamples, seed : the randomised method's permutations and their seed
    rel, judged_only, ties, include_missing : as for :func:`rankmeter.compare`: by default every
        judged query is compared and a system's missing query scores 0 (trec_eval -c), so the
        means are compare's

    Returns
    -------
    AllPairsComparison

    Examples
    --------
    >>> qrels = {f"q{i}": {"a": 1, "b": 1} for i in range(12)}
    >>> good = {f"q{i}": {"a": 2.0, "b": 1.0} for i in range(12)}
    >>> fair = {f"q{i}": {"a": 2.0, "x": 1.0} if i % 3 else {"a": 2.0, "b": 1.0} for i in range(12)}
    >>> poor = {f"q{i}": {"x": 2.0, "a": 1.0} for i in range(12)}
    >>> result = compare_all(qrels, {"poor": poor, "fair": fair, "good": good}, "P@2")
    >>> analysis = result.analysis("P@2")
    >>> analysis.means, analysis.letters
    ((0.5, 0.6666666666666666, 1.0), ('c', 'b', 'a'))
    """
    from rankmeter import stats

    policies = check_policies(rel, include_missing, judged_only, check_ties(ties))
    method = _validate.choice(
        "method", method, stats.ALL_PAIRS_METHODS, what="the all-pairs method"
    )
    alpha = _validate.alpha(alpha)
    resamples = _validate.resamples(
        resamples,
        low=stats.MIN_RESAMPLES,
        what="random permutations; fewer cannot give a p-value below 0.05",
    )
    seed = _validate.seed(seed)
    measures = resolve_metrics(metrics)
    loaded_qrels = as_qrels(qrels, subtopics=reads_subtopics(measures))
    loaded = load_runs(runs, ties=policies.ties)
    if len(loaded) < MIN_SYSTEMS:
        raise PolicyError(
            f"an all-pairs comparison needs {MIN_SYSTEMS} runs or more; got {len(loaded)} "
            "(compare two runs with compare)"
        )
    names = tuple(r.name for r in loaded)
    compared = select_queries(loaded_qrels, loaded, include_missing=policies.include_missing)
    if len(compared.ids) < 2:
        raise PolicyError(
            f"an all-pairs comparison needs 2 compared queries or more; got {len(compared.ids)}"
        )
    ranked = {r.name: join_compared(loaded_qrels, r, policies, compared.rows) for r in loaded}
    scores = {m.label: {n: m.compute(ranked[n]) for n in names} for m in measures}
    analyses = {
        label: stats.all_pairs(
            np.column_stack([by_system[n] for n in names]),
            names,
            method=method,
            alpha=alpha,
            resamples=resamples,
            seed=seed,
            better=better_of(label),
        )
        for label, by_system in scores.items()
    }
    for m in measures:
        if m.spec.aggregate == "geometric":
            # GMAP: per-query log AP; its means are geometric (trec_eval's gm_map), while the
            # ANOVA, the pairs' differences and the HSD stay on the logs.
            found = analyses[m.label]
            means = tuple(float(np.exp(x)) for x in found.means)
            analyses[m.label] = dataclasses.replace(found, means=means)
    return AllPairsComparison(
        systems=names,
        metrics=tuple(m.label for m in measures),
        query_ids=compared.ids,
        scores=scores,
        analyses=analyses,
        settings=AllPairsSettings(
            method=method, alpha=alpha, resamples=resamples, seed=seed, policies=policies
        ),
        filled=compared.filled(),
        notes=tuple(compared.note()),
        depths={r.name: depth_of(r.offsets) for r in loaded},
    )
