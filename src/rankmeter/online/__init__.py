"""Search logs and online evaluation: reading, checking and writing logs (:mod:`.logs`; the
schema in :mod:`._logschema`, one rule object per check in :mod:`._logchecks`), the log
simulator (:mod:`.simulate`), A/B analysis (:mod:`.abtest`), interleaving
(:mod:`.interleaving`), offline against online (:mod:`.offline`), evaluation query sets drawn
from traffic (:mod:`.sampling`).

The module of :func:`interleave` is ``interleaving``, not ``interleave``: importing a submodule
named ``rankmeter.online.interleave`` would rebind the package attribute, the function, to the
module (as ``rankmeter.compare`` would; docs/architecture.md). Names are loaded on first use:
Ibis, DuckDB and tea-tasting are extras."""

from __future__ import annotations

from typing import Any

TYPE_CHECKING = False
if TYPE_CHECKING:
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
    from rankmeter.online.interleaving import (
        Interleaving,
        InterleavingResult,
        interleave,
        interleave_runs,
        interleaving_credit,
        interleaving_test,
    )
    from rankmeter.online.logs import (
        LOG_COLUMNS,
        REQUIRED_COLUMNS,
        LogCheck,
        LogProblem,
        VariantCounts,
        check_log,
        log_format,
        read_log,
        write_log,
    )
    from rankmeter.online.offline import (
        AGREEMENTS,
        DEFAULT_ONLINE_METRICS,
        Agreement,
        OnlineOffline,
        Side,
        online_vs_offline,
    )
    from rankmeter.online.sampling import (
        BUCKETS,
        WEIGHTINGS,
        MixStratum,
        QueryMix,
        QuerySample,
        QueryTraffic,
        Stratum,
        bucket_of,
        query_mix,
        read_query_ids,
        read_traffic,
        sample_queries,
    )
    from rankmeter.online.simulate import simulate_log

#: Each module's public names: one entry per module, so that a new module is one new entry.
_MODULES: dict[str, tuple[str, ...]] = {
    "rankmeter.online.logs": (
        "LOG_COLUMNS",
        "REQUIRED_COLUMNS",
        "LogCheck",
        "LogProblem",
        "VariantCounts",
        "check_log",
        "log_format",
        "read_log",
        "write_log",
    ),
    "rankmeter.online.simulate": ("simulate_log",),
    "rankmeter.online.sampling": (
        "BUCKETS",
        "WEIGHTINGS",
        "MixStratum",
        "QueryMix",
        "query_mix",
        "read_query_ids",
        "QuerySample",
        "QueryTraffic",
        "Stratum",
        "bucket_of",
        "read_traffic",
        "sample_queries",
    ),
    "rankmeter.online.abtest": (
        "AB_METRICS",
        "ABMetric",
        "ABResult",
        "LatencyQuantiles",
        "MetricEffect",
        "SampleRatioCheck",
        "SegmentEffect",
        "ab",
        "user_metrics",
    ),
    "rankmeter.online.interleaving": (
        "Interleaving",
        "InterleavingResult",
        "interleave",
        "interleave_runs",
        "interleaving_credit",
        "interleaving_test",
    ),
    "rankmeter.online.offline": (
        "AGREEMENTS",
        "DEFAULT_ONLINE_METRICS",
        "Agreement",
        "OnlineOffline",
        "Side",
        "online_vs_offline",
    ),
}
_LAZY = {name: module for module, names in _MODULES.items() for name in names}

__all__ = [
    "AB_METRICS",
    "AGREEMENTS",
    "BUCKETS",
    "DEFAULT_ONLINE_METRICS",
    "LOG_COLUMNS",
    "REQUIRED_COLUMNS",
    "WEIGHTINGS",
    "ABMetric",
    "ABResult",
    "Agreement",
    "Interleaving",
    "InterleavingResult",
    "LatencyQuantiles",
    "LogCheck",
    "LogProblem",
    "MetricEffect",
    "MixStratum",
    "OnlineOffline",
    "QueryMix",
    "QuerySample",
    "QueryTraffic",
    "SampleRatioCheck",
    "SegmentEffect",
    "Side",
    "Stratum",
    "VariantCounts",
    "ab",
    "bucket_of",
    "check_log",
    "interleave",
    "interleave_runs",
    "interleaving_credit",
    "interleaving_test",
    "log_format",
    "online_vs_offline",
    "query_mix",
    "read_log",
    "read_query_ids",
    "read_traffic",
    "sample_queries",
    "simulate_log",
    "user_metrics",
    "write_log",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rankmeter.online' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
