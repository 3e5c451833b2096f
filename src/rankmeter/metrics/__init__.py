"""Metrics: one frozen spec and one vectorised kernel per metric, and the name grammar."""

from rankmeter.metrics._parse import metric_names, parse_metric, parse_metrics
from rankmeter.metrics._registry import DEFAULT_METRICS, SPECS
from rankmeter.metrics._spec import Metric, MetricSpec, Param
from rankmeter.metrics.goals import GOALS, GoalMetric, metrics_for_goal

__all__ = [
    "DEFAULT_METRICS",
    "GOALS",
    "SPECS",
    "GoalMetric",
    "Metric",
    "MetricSpec",
    "Param",
    "metric_names",
    "metrics_for_goal",
    "parse_metric",
    "parse_metrics",
]
