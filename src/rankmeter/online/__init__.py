"""Search logs online: per-user metrics, A/B analysis, interleaving, the log simulator.

Heavy imports (ibis, duckdb, tea_tasting) happen inside the functions: importing this package
stays light.
"""

from __future__ import annotations

# A/B analysis (online/abtest.py)
from rankmeter.online.abtest import (
    AB_METRICS,
    ABMetric,
    ABResult,
    LatencyQuantiles,
    MetricEffect,
    SampleRatioCheck,
    SegmentEffect,
    VariantCounts,
    ab,
    user_metrics,
)

__all__ = [
    # A/B analysis
    "AB_METRICS",
    "ABMetric",
    "ABResult",
    "LatencyQuantiles",
    "MetricEffect",
    "SampleRatioCheck",
    "SegmentEffect",
    "VariantCounts",
    "ab",
    "user_metrics",
]
