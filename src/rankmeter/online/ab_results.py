"""The result objects of an A/B analysis (:func:`rankmeter.online.ab`): frozen, holding data,
each with ``to_dict()`` for JSON; every rendering is made in :mod:`rankmeter.report.ab`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from rankmeter.online.logs import VariantCounts

__all__ = ["ABResult", "LatencyQuantiles", "MetricEffect", "SampleRatioCheck", "SegmentEffect"]

#: How the level of the requests whose segment value is null (not logged) is shown.
MISSING_SEGMENT = "(missing)"


@dataclass(frozen=True)
class SampleRatioCheck:
    """The sample-ratio-mismatch check (tea-tasting's :class:`~tea_tasting.SampleRatio`).

    ``failed`` when the p-value of the users per variant against ``expected_ratio``
    (treatment / control) is below ``alpha``: the split is not what the assignment promised,
    and no effect below can be trusted until the cause is found.
    """

    control_users: int
    treatment_users: int
    expected_ratio: float
    pvalue: float
    alpha: float
    failed: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "control_users": self.control_users,
            "treatment_users": self.treatment_users,
            "expected_ratio": self.expected_ratio,
            "pvalue": self.pvalue,
            "alpha": self.alpha,
            "failed": self.failed,
        }


@dataclass(frozen=True)
class MetricEffect:
    """One metric's effect: treatment against control.

    ``difference`` is treatment − control with its interval; ``relative`` is
    treatment / control − 1 with its interval (tea-tasting's, on the log scale). ``pvalue`` is
    tea-tasting's (Welch's t on the delta-method variances); ``adjusted`` is corrected across
    the metrics of the analysis (or the segments, in a :class:`SegmentEffect`). ``verdict`` is
    ``"better"``, ``"worse"`` (significance after the correction, direction per
    :attr:`ABMetric.higher_is_better`), ``"no significant difference"`` or ``"not tested"`` (no
    p-value: the metric has no variance in the data). ``mde`` and ``mde_relative``
    are the minimum detectable effect at the analysis' power with the users observed.

    With CUPED (``cuped``), ``control`` and ``treatment`` are tea-tasting's CUPED-adjusted
    means, and the difference, its interval, the relative difference, the p-values and the
    MDE are the adjusted ones; ``control_raw`` and ``treatment_raw`` are the unadjusted means
    (the ratio of the per-user sums), equal to ``control`` and ``treatment`` without CUPED.
    """

    metric: str
    higher_is_better: bool
    control: float
    treatment: float
    difference: float
    difference_low: float
    difference_high: float
    relative: float
    relative_low: float
    relative_high: float
    pvalue: float
    adjusted: float
    significant: bool
    verdict: str
    mde: float
    mde_relative: float
    cuped: bool
    control_raw: float = math.nan
    treatment_raw: float = math.nan

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "higher_is_better": self.higher_is_better,
            "control": self.control,
            "treatment": self.treatment,
            "control_raw": self.control_raw,
            "treatment_raw": self.treatment_raw,
            "difference": self.difference,
            "difference_ci": [self.difference_low, self.difference_high],
            "relative": self.relative,
            "relative_ci": [self.relative_low, self.relative_high],
            "pvalue": self.pvalue,
            "adjusted_pvalue": self.adjusted,
            "significant": self.significant,
            "verdict": self.verdict,
            "mde": self.mde,
            "mde_relative": self.mde_relative,
            "cuped": self.cuped,
        }


@dataclass(frozen=True)
class SegmentEffect:
    """One metric's effect within one segment (``column == value``).

    ``adjusted`` is corrected across every segment value of every segment column, per metric;
    ``worse`` flags a significant effect (after that correction) in the worse direction.
    ``missing`` marks the level of the users whose segment value is null: ``value`` reads
    :data:`MISSING_SEGMENT` (``null`` in :meth:`to_dict`), and they are analysed as a level of
    their own rather than dropped.
    """

    column: str
    value: str
    control_users: int
    treatment_users: int
    effect: MetricEffect
    missing: bool = False

    @property
    def worse(self) -> bool:
        return self.effect.verdict == "worse"

    def to_dict(self) -> dict[str, Any]:
        return {
            "column": self.column,
            "value": None if self.missing else self.value,
            "missing": self.missing,
            "control_users": self.control_users,
            "treatment_users": self.treatment_users,
            "worse": self.worse,
            **self.effect.to_dict(),
        }


@dataclass(frozen=True)
class LatencyQuantiles:
    """Exact latency quantiles (milliseconds) over one variant's requests: descriptive, not
    tested (the ``latency`` metric tests the mean)."""

    variant: str
    requests: int
    p50: float
    p95: float
    p99: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "requests": self.requests,
            "p50": self.p50,
            "p95": self.p95,
            "p99": self.p99,
        }


@dataclass(frozen=True)
class ABResult:
    """The A/B analysis of a log (:func:`ab`): frozen; :meth:`to_dict` for JSON.

    ``srm`` comes first: when ``srm.failed`` every output leads with a warning. ``metrics``
    holds one :class:`MetricEffect` per metric asked for, ``segments`` one
    :class:`SegmentEffect` per metric and segment value, ``latency`` the exact quantiles per
    variant (control first), ``counts`` the size of each variant (control first).
    ``experiment`` is the ``experiment_id`` analysed when one was chosen (``None``: the log's
    rows whatever their id, which is at most one).
    """

    control: str
    treatment: str
    srm: SampleRatioCheck
    counts: tuple[VariantCounts, ...]
    metrics: tuple[MetricEffect, ...]
    latency: tuple[LatencyQuantiles, ...]
    segments: tuple[SegmentEffect, ...]
    alpha: float
    correction: str
    power: float
    success_dwell: float
    reformulation_window: float
    cuped: bool
    notes: tuple[str, ...] = field(default=())
    experiment: str | None = None

    @property
    def warnings(self) -> tuple[str, ...]:
        """What every rendering must say first: a failed sample-ratio check."""
        if not self.srm.failed:
            return ()
        return (
            f"SAMPLE RATIO MISMATCH: {self.srm.control_users:,} control users vs "
            f"{self.srm.treatment_users:,} treatment users (expected ratio "
            f"{self.srm.expected_ratio:g}), p = {self.srm.pvalue:.3g} < {self.srm.alpha:g}: "
            "the split is broken, so the effects below cannot be trusted until the cause is "
            "found",
        )

    @property
    def worse_segments(self) -> tuple[SegmentEffect, ...]:
        """The segments flagged: significantly worse after the correction."""
        return tuple(s for s in self.segments if s.worse)

    def to_dict(self) -> dict[str, Any]:
        return {
            "warnings": list(self.warnings),
            "experiment": self.experiment,
            "control": self.control,
            "treatment": self.treatment,
            "sample_ratio": self.srm.to_dict(),
            "counts": [c.to_dict() for c in self.counts],
            "metrics": {m.metric: m.to_dict() for m in self.metrics},
            "latency_quantiles": [q.to_dict() for q in self.latency],
            "segments": [s.to_dict() for s in self.segments],
            "settings": {
                "alpha": self.alpha,
                "correction": self.correction,
                "power": self.power,
                "success_dwell_s": self.success_dwell,
                "reformulation_window_s": self.reformulation_window,
                "cuped": self.cuped,
                "test": "Welch's t on delta-method variances (tea-tasting RatioOfMeans)",
            },
            "notes": list(self.notes),
        }
