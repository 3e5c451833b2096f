"""compare_power(qrels, runs, metrics) -> RunsPower: is the query set big enough to tell a
baseline and a new system apart? ``rankmeter power`` as a Python call: both runs evaluated on
every judged query (a run without results for one scores 0 on it, trec_eval -c), and each
metric's per-query differences analysed by :func:`rankmeter.stats.power`."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rankmeter.data import Qrels, Run
from rankmeter.errors import PolicyError

if TYPE_CHECKING:
    # scipy (through rankmeter.stats) loads when power is computed, not with the records.
    from rankmeter.stats import PowerAnalysis

__all__ = ["RunsPower", "compare_power"]


@dataclass(frozen=True)
class RunsPower:
    """Each metric's power analysis of ``system`` against ``baseline`` (keyed by the metric's
    label, in the order asked), with ``notes`` on the queries used."""

    baseline: str
    system: str
    analyses: dict[str, PowerAnalysis]
    notes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "system": self.system,
            "metrics": {label: a.to_dict() for label, a in self.analyses.items()},
            "notes": list(self.notes),
        }


def compare_power(
    qrels: Any,
    runs: Mapping[str, Any] | Sequence[Any],
    metrics: str | Sequence[str] | None = None,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    correction: str = "holm",
    test: str = "t",
    effect: float | None = None,
    sd: float | None = None,
    simulations: int = 1_000,
    resamples: int = 1_000,
    seed: int = 0,
    rel: float = 1,
    judged_only: bool = False,
    ties: str = "trec_eval",
) -> RunsPower:
    """Power and sample size of the second run against the first, per metric: the power at the
    current number of queries, the queries needed for ``power`` and the smallest difference
    detectable now (see :func:`rankmeter.stats.power` for ``alpha`` … ``seed``).

    ``qrels``: a Qrels or anything :func:`rankmeter.io.as_qrels` reads (a path, a dict, a
    frame). ``runs``: two runs, the baseline first: ``{name: run}`` or a list, each anything
    :func:`rankmeter.io.as_run` reads (:func:`rankmeter.io.load_runs`). ``metrics``: a metric
    name or several; default nDCG@10 P@10 R@100
    RR AP (compare's); the correction runs over them. The queries are every judged query.

    >>> from rankmeter.data import Qrels, Run
    >>> qrels = Qrels.from_dict({f"q{i}": {"d1": 1} for i in range(8)})
    >>> base = Run.from_dict({f"q{i}": {"d2": 2.0, "d1": 1.0} for i in range(8)})
    >>> new = Run.from_dict({f"q{i}": {"d1": 2.0, "d2": 1.0} for i in range(8) if i % 3})
    >>> result = compare_power(qrels, {"base": base, "new": new}, ["RR"])
    >>> result.system, list(result.analyses), result.analyses["RR"].n
    ('new', ['RR'], 8)
    """
    from rankmeter.evaluation import evaluate
    from rankmeter.io import as_qrels, load_runs
    from rankmeter.metrics import DEFAULT_METRICS, reads_subtopics
    from rankmeter.stats import power as analyse

    if isinstance(runs, (str, os.PathLike, Run)) or not isinstance(runs, Iterable):
        runs = [runs]
    if isinstance(metrics, str):
        metrics = [metrics]
    elif metrics is not None and not isinstance(metrics, Iterable):
        raise PolicyError(
            f"metrics= must be a metric name or a list of them, got {type(metrics).__name__}"
        )
    if len(runs) != 2:
        raise PolicyError(f"power compares two runs (a baseline, then a system); got {len(runs)}")
    names = list(dict.fromkeys(metrics or [])) or list(DEFAULT_METRICS)
    qrels = as_qrels(qrels, subtopics=reads_subtopics(names))
    loaded = {run.name: run for run in load_runs(runs, ties=ties)}
    base_name, new_name = loaded
    results = evaluate(
        qrels,
        loaded,
        names,
        rel=rel,
        include_missing=True,
        judged_only=judged_only,
        ties=ties,
    )
    before, after = results[base_name], results[new_name]
    position = {q: i for i, q in enumerate(before.per_query.query_ids)}
    order = [position[q] for q in after.per_query.query_ids]
    analyses = {}
    for label in after.metrics:
        diffs = after.per_query[label] - before.per_query[label][order]
        analyses[label] = analyse(
            diffs,
            effect=effect,
            sd=sd,
            alpha=alpha,
            power=power,
            test=test,
            correction=correction,
            comparisons=len(names),
            simulations=simulations,
            resamples=resamples,
            seed=seed,
        )
    notes = (_query_note(qrels, list(loaded.values()), [base_name, new_name]),)
    return RunsPower(base_name, new_name, analyses, notes)


def _query_note(qrels: Qrels, runs: list[Run], names: list[str]) -> str:
    """Which queries were used, and how many each run had no results for."""
    judged = set(qrels.query_ids)
    missing = [
        f"{name} {len(judged - set(run.query_ids))}" for name, run in zip(names, runs, strict=True)
    ]
    return (
        f"queries: every judged query ({len(judged):,}); a run without results for one scores "
        f"0 on it (trec_eval -c); without results: {', '.join(missing)}"
    )
