"""Search logs and online evaluation: the log schema and its checks (:mod:`.logs`), the log
simulator (:mod:`.simulate`), A/B analysis (:mod:`.abtest`). Names are loaded on first use:
Ibis, DuckDB and tea-tasting are extras."""

from __future__ import annotations

from typing import Any

TYPE_CHECKING = False
if TYPE_CHECKING:
    # A/B analysis
    from rankmeter.online.abtest import (
        AB_METRICS,
        ABMetric,
        ABResult,
        LatencyQuantiles,
        MetricEffect,
        SampleRatioCheck,
        SegmentEffect,
        ab,
        user_metrics,
    )
    from rankmeter.online.logs import (
        LOG_COLUMNS,
        REQUIRED_COLUMNS,
        LogCheck,
        LogProblem,
        VariantCounts,
        check_log,
        read_log,
    )
    from rankmeter.online.offline import (
        AGREEMENTS,
        DEFAULT_ONLINE_METRICS,
        Agreement,
        OnlineOffline,
        Side,
        online_vs_offline,
    )

__all__ = [
    "AB_METRICS",
    "AGREEMENTS",
    "DEFAULT_ONLINE_METRICS",
    "LOG_COLUMNS",
    "REQUIRED_COLUMNS",
    "ABMetric",
    "ABResult",
    "Agreement",
    "LatencyQuantiles",
    "LogCheck",
    "LogProblem",
    "MetricEffect",
    "OnlineOffline",
    "SampleRatioCheck",
    "SegmentEffect",
    "Side",
    "VariantCounts",
    "ab",
    "check_log",
    "online_vs_offline",
    "read_log",
    "user_metrics",
]

# The names of the A/B analysis (online/abtest.py); the others are the log's (online/logs.py).
_AB_NAMES = (
    "AB_METRICS",
    "ABMetric",
    "ABResult",
    "LatencyQuantiles",
    "MetricEffect",
    "SampleRatioCheck",
    "SegmentEffect",
    "ab",
    "user_metrics",
)
# Offline against online (online/offline.py).
_OFFLINE_NAMES = (
    "AGREEMENTS",
    "DEFAULT_ONLINE_METRICS",
    "Agreement",
    "OnlineOffline",
    "Side",
    "online_vs_offline",
)
_LAZY = {
    name: "rankmeter.online.abtest"
    if name in _AB_NAMES
    else "rankmeter.online.offline"
    if name in _OFFLINE_NAMES
    else "rankmeter.online.logs"
    for name in __all__
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rankmeter.online' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
