"""Metrics: one frozen spec and one vectorised kernel per metric, and the name grammar."""

from rankmeter.metrics._parse import metric_names, parse_metric, parse_metrics
from rankmeter.metrics._registry import DEFAULT_METRICS, SPECS
from rankmeter.metrics._spec import Metric, MetricSpec, Param

__all__ = [
    "DEFAULT_METRICS",
    "SPECS",
    "Metric",
    "MetricSpec",
    "Param",
    "metric_names",
    "parse_metric",
    "parse_metrics",
]
