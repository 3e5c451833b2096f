"""Metrics: one frozen spec and one vectorised kernel per metric, and the name grammar.

:func:`join` (a Run with Qrels, under the evaluation policies) gives the :class:`Ranked` table
every kernel reads; both load on first use, with the data model. :class:`Breakdown` is what a
family's explain hook returns; :func:`num`, :func:`approx` and :func:`ranks` write the numbers
of its steps, one style for every metric.
"""

from typing import TYPE_CHECKING, Any

from rankmeter.metrics._parse import metric_names, parse_metric, parse_metrics
from rankmeter.metrics._registry import DEFAULT_METRICS, SPECS
from rankmeter.metrics._spec import Breakdown, Metric, MetricSpec, Param, approx, num, ranks
from rankmeter.metrics.diversity import reads_subtopics, subtopic_notes
from rankmeter.metrics.docs import MetricCatalogue, metric_catalogue
from rankmeter.metrics.goals import GOALS, Goal, GoalMetric, metrics_for_goal
from rankmeter.metrics.ndcg import GainOverflow
from rankmeter.metrics.statap import pool_notes

__all__ = [
    "DEFAULT_METRICS",
    "GOALS",
    "SPECS",
    "Breakdown",
    "GainOverflow",
    "Goal",
    "GoalMetric",
    "Metric",
    "MetricCatalogue",
    "MetricSpec",
    "Param",
    "Ranked",
    "approx",
    "join",
    "metric_catalogue",
    "metric_names",
    "metrics_for_goal",
    "num",
    "parse_metric",
    "parse_metrics",
    "pool_notes",
    "ranks",
    "reads_subtopics",
    "subtopic_notes",
]

if TYPE_CHECKING:
    from rankmeter.metrics._ranked import Ranked, join


def __getattr__(name: str) -> Any:
    # The join needs the data model (rankmeter.data); parsing metric names does not.
    if name in ("Ranked", "join"):
        from rankmeter.metrics import _ranked

        return getattr(_ranked, name)
    raise AttributeError(f"module 'rankmeter.metrics' has no attribute {name!r}")
