"""Search logs and online evaluation: reading, checking and writing logs (:mod:`.logs`; the
schema in :mod:`._logschema`, one rule object per check in :mod:`._logchecks`), click models
over a log file (:mod:`.click_logs`), the log simulator (:mod:`.simulate`; an experiment's
logs with its settings as typed by hand, :mod:`.simulated`), A/B analysis (:mod:`.abtest`;
its metrics declared in :mod:`.ab_metrics`, the per-user table in :mod:`.ab_users`, its
results in :mod:`.ab_results`), interleaving (:mod:`.interleaving`), offline against online
(:mod:`.offline`), evaluation query sets drawn from traffic (:mod:`.sampling`).

The module of :func:`interleave` is ``interleaving``, not ``interleave``: importing a submodule
named ``rankmeter.online.interleave`` would rebind the package attribute, the function, to the
module (as ``rankmeter.compare`` would; docs/architecture.md). Names are loaded on first use:
Ibis, DuckDB and tea-tasting are extras."""

from __future__ import annotations

from typing import Any

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rankmeter.online.ab_metrics import AB_METRICS, ABMetric
    from rankmeter.online.ab_results import (
        ABResult,
        LatencyQuantiles,
        MetricEffect,
        SampleRatioCheck,
        SegmentEffect,
    )
    from rankmeter.online.ab_users import user_metrics
    from rankmeter.online.abtest import ab
    from rankmeter.online.click_logs import (
        CLICK_COLUMNS,
        ClickLabels,
        click_labels,
        fit_click_model,
        read_click_log,
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
    from rankmeter.online.simulated import (
        LogCounts,
        RecruitingExperiment,
        SimulatedLogs,
        log_counts,
        read_factors,
        recruiting_experiment,
        simulate_log_files,
        simulate_logs,
    )

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
    "rankmeter.online.click_logs": (
        "CLICK_COLUMNS",
        "ClickLabels",
        "click_labels",
        "fit_click_model",
        "read_click_log",
    ),
    "rankmeter.online.simulated": (
        "LogCounts",
        "RecruitingExperiment",
        "SimulatedLogs",
        "log_counts",
        "read_factors",
        "recruiting_experiment",
        "simulate_log_files",
        "simulate_logs",
    ),
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
    "rankmeter.online.ab_metrics": ("AB_METRICS", "ABMetric"),
    "rankmeter.online.ab_results": (
        "ABResult",
        "LatencyQuantiles",
        "MetricEffect",
        "SampleRatioCheck",
        "SegmentEffect",
    ),
    "rankmeter.online.ab_users": ("user_metrics",),
    "rankmeter.online.abtest": ("ab",),
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
    "CLICK_COLUMNS",
    "DEFAULT_ONLINE_METRICS",
    "LOG_COLUMNS",
    "REQUIRED_COLUMNS",
    "WEIGHTINGS",
    "ABMetric",
    "ABResult",
    "Agreement",
    "ClickLabels",
    "Interleaving",
    "InterleavingResult",
    "LatencyQuantiles",
    "LogCheck",
    "LogCounts",
    "LogProblem",
    "MetricEffect",
    "MixStratum",
    "OnlineOffline",
    "QueryMix",
    "QuerySample",
    "QueryTraffic",
    "RecruitingExperiment",
    "SampleRatioCheck",
    "SegmentEffect",
    "Side",
    "SimulatedLogs",
    "Stratum",
    "VariantCounts",
    "ab",
    "bucket_of",
    "check_log",
    "click_labels",
    "fit_click_model",
    "interleave",
    "interleave_runs",
    "interleaving_credit",
    "interleaving_test",
    "log_counts",
    "log_format",
    "online_vs_offline",
    "query_mix",
    "read_click_log",
    "read_factors",
    "read_log",
    "read_query_ids",
    "read_traffic",
    "recruiting_experiment",
    "sample_queries",
    "simulate_log",
    "simulate_log_files",
    "simulate_logs",
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
