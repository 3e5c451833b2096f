"""Runs compared where they live, on Spark: ``compare(..., engine="spark")`` and its source,
:func:`spark_runs`.

One Spark pass (:func:`rankmeter.engines.spark.evaluate_with_rows`) computes every judged
query's values of the metrics compared and of what a comparison needs besides
(:func:`~rankmeter.comparison.given_metrics`), each run's facts, query ids and depth; the runs
come back as :class:`~rankmeter.comparison.GivenRun`, whose rows of a few queries (the worst,
explained rank by rank) are fetched from Spark when asked for. No run is read on the driver.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rankmeter.comparison._given import GivenRun, given_metrics
from rankmeter.errors import FormatError

if TYPE_CHECKING:
    from rankmeter.data import Run
    from rankmeter.engines.spark import KeptRuns
    from rankmeter.metrics import Metric


def spark_runs(
    spark: Any,
    qrels: Any,
    runs: Any,
    metrics: Sequence[Metric | str] | None = None,
    *,
    rel: float = 1,
    judged_only: bool = False,
    ties: str = "trec_eval",
    cutoff: int = 10,
    names: Callable[[list[str]], Sequence[str]] | None = None,
) -> dict[str, GivenRun]:
    """The runs evaluated on Spark, as :class:`~rankmeter.comparison.GivenRun` by name, for
    :func:`~rankmeter.compare` (which calls this with ``engine="spark"``; call it yourself to
    make several comparisons of one Spark pass, giving each the same ``metrics``, ``rel``,
    ``judged_only``, ``ties`` and ``cutoff``).

    Parameters
    ----------
    spark : a SparkSession, or the backend ``rankmeter.engines.connect("spark")`` gives; None:
        that backend (the process's one local session)
    qrels, runs : as :func:`rankmeter.engines.spark.evaluate` takes them: Spark DataFrames or
        paths Spark reads (Parquet, TREC text); the runs a list or a dict ``{name: run}``
    metrics : the metrics compared (None: compare's defaults)
    rel, judged_only, ties, cutoff : the comparison's policies and failure-list cutoff
    names : ``names(own)``: the names the runs are compared under, from their own names
        (``own``, in order: a dict's keys, else each run's tag or file name before runs of a
        list that share one are told apart). None: the names
        :func:`rankmeter.engines.spark.evaluate` gives (told apart by their files).

    Every judged query's values are computed (``include_missing=True``: compare scores a
    run's missing query 0), whatever the comparison's ``include_missing``.
    """
    from rankmeter.engines.spark import evaluate_with_rows
    from rankmeter.results import EvalResults

    backend = _backend(spark)
    extra = given_metrics(metrics, rel=rel, cutoff=cutoff)
    asked = [*(metrics if metrics is not None else _defaults()), *extra]
    on_spark, kept = evaluate_with_rows(
        backend,
        qrels,
        runs,
        asked,
        rel=rel,
        include_missing=True,
        judged_only=judged_only,
        ties=ties,
    )
    evaluated = list(on_spark.results if isinstance(on_spark, EvalResults) else [on_spark])
    shown = [r.run for r in evaluated]
    if names is not None:
        shown = list(names([kept.own_names[r.run] for r in evaluated]))
    return {
        n: GivenRun(
            n,
            r if r.run == n else dataclasses.replace(r, run=n),
            kept.query_ids[r.run],
            _fetch(kept, r.run, n),
            kept.depths[r.run],
        )
        for n, r in zip(shown, evaluated, strict=True)
    }


def driver_qrels(qrels: Any) -> Any:
    """What the driver reads of ``qrels`` (:func:`rankmeter.io.as_qrels` takes it): a Spark
    DataFrame's query_id, doc_id and relevance columns collected (qrels are small), else
    ``qrels`` as given (a path both Spark and the driver read)."""
    if hasattr(qrels, "sparkSession") and hasattr(qrels, "columns"):
        from rankmeter.engines.spark import QRELS_COLUMNS

        missing = [c for c in QRELS_COLUMNS if c not in qrels.columns]
        if missing:
            raise FormatError(
                "<DataFrame>",
                f"qrels needs the columns {', '.join(QRELS_COLUMNS)}; missing "
                f"{', '.join(missing)} (it has {', '.join(qrels.columns) or 'none'})",
            )
        return qrels.select(*QRELS_COLUMNS).toArrow()
    return qrels


def _fetch(kept: KeptRuns, name: str, shown: str) -> Callable[[Sequence[str]], Run]:
    """``rows(query_ids)`` of run ``name`` (as Spark names it), under the name it is
    compared by (``shown``)."""

    def rows(query_ids: Sequence[str]) -> Run:
        run = kept.of(name, query_ids)
        return run if run.name == shown else run.renamed(shown)

    return rows


def _backend(spark: Any) -> Any:
    """``spark``, or the process's one Spark backend."""
    if spark is not None:
        return spark
    from rankmeter.engines import connect

    return connect("spark")


def _defaults() -> list[str]:
    from rankmeter.metrics import DEFAULT_METRICS

    return list(DEFAULT_METRICS)
