"""Runs that compare does not read: what it needs of each, computed where the run lives.

A comparison reads a run for more than its metrics: which queries it answered, Judged@k, the
queries with nothing relevant in the top k (Success@k), the metric@k curves, the data
warnings (:class:`~rankmeter.results.RunFacts`) and, for the few queries it lost most on, the
ranked documents. For a run kept on Spark (``rankmeter compare --engine spark``) all of them
but the last are per-query values of metrics (:func:`given_metrics`), computed in the same pass
as the metrics asked for; the documents of the worst queries are fetched alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rankmeter._validate import number_text
from rankmeter.comparison._curves import CURVE_DEPTH, CURVE_FAMILIES

if TYPE_CHECKING:
    from rankmeter.data import Run
    from rankmeter.metrics import Metric
    from rankmeter.results import EvalResult


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
