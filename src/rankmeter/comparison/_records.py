"""The results of a comparison: frozen records that hold numbers and know ``to_dict()``.

Every renderer (rankmeter.report) reads these; none of them renders itself.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from rankmeter.data.arrays import FloatArray
from rankmeter.results import (
    JUDGED_BELOW,
    JUDGED_DEFAULT_K,
    ByMetric,
    DepthGap,
    JudgedWarning,
    Policies,
    RunFacts,
    check_judged_below,
    judged_warning,
    metric_key,
)


def _fields(record: Any) -> dict[str, Any]:
    """A flat record's fields as a dict, in declaration order."""
    from dataclasses import fields

    return {f.name: getattr(record, f.name) for f in fields(record)}


@dataclass(frozen=True)
class Settings:
    """How a comparison was made: everything needed to reproduce its numbers."""

    baseline: str
    test: str
    correction: str
    alpha: float
    resamples: int
    seed: int
    interval: str
    level: float
    min_segment: int
    cutoff: int
    policies: Policies
    simultaneous: bool = False

    def difference_level(self, family: int) -> float:
        """The confidence level of each difference's interval in a family of ``family``
        comparisons: ``level`` itself, or with ``simultaneous`` the Bonferroni level
        ``1 - (1 - level) / family``, at which the ``family`` intervals all cover their true
        differences together with probability at least ``level``."""
        if not self.simultaneous or family <= 1:
            return self.level
        return 1.0 - (1.0 - self.level) / family

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "test": self.test,
            "correction": self.correction,
            "alpha": self.alpha,
            "resamples": self.resamples,
            "seed": self.seed,
            "interval": self.interval,
            "level": self.level,
            "min_segment": self.min_segment,
            "cutoff": self.cutoff,
            "policies": self.policies.to_dict(),
            "simultaneous": self.simultaneous,
        }

    def describe(self) -> str:
        """How the statistics were made, in one sentence (every report shows it)."""
        from rankmeter.stats import describe_settings

        return describe_settings(
            test=self.test,
            correction=self.correction,
            alpha=self.alpha,
            level=self.level,
            interval=self.interval,
            resamples=self.resamples,
            seed=self.seed,
        )


@dataclass(frozen=True)
class SystemMean:
    """One system's mean of one metric over the compared queries, with its interval."""

    system: str
    metric: str
    mean: float
    low: float
    high: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        return _fields(self)


@dataclass(frozen=True)
class Difference:
    """A system against the baseline on one metric, paired over the same queries."""

    system: str
    baseline: str
    metric: str
    n: int
    baseline_mean: float
    system_mean: float
    difference: float
    relative: float
    low: float
    high: float
    effect_size: float
    p_value: float
    p_corrected: float
    significant: bool
    wins: int
    ties: int
    losses: int
    #: The smallest true difference a paired t-test at the comparison's alpha (each of the
    #: family's tests at alpha / family) detects with 80 % power on these queries' spread
    #: (rankmeter.stats.detectable_difference); NaN with fewer than 2 queries or no spread.
    detectable: float = math.nan
    #: Which way the metric is better (its spec's ``better``): ``"lower"`` for a residual
    #: (RBP_resid), where ``wins`` counts the queries the system is lower on and a positive
    #: ``difference`` is a loss; ``difference`` itself is always system minus baseline.
    better: str = "higher"

    @property
    def gain(self) -> float:
        """The difference turned so that positive is better: ``difference``, negated where
        lower is better."""
        return -self.difference if self.better == "lower" else self.difference

    def to_dict(self) -> dict[str, Any]:
        return _fields(self)


@dataclass(frozen=True)
class QueryLoss:
    """A query where the system scored below the baseline."""

    query: str
    text: str | None
    baseline: float
    system: float
    difference: float

    def to_dict(self) -> dict[str, Any]:
        return _fields(self)


@dataclass(frozen=True)
class Failures:
    """Where one system fails, judged on the comparison's first metric.

    Attributes
    ----------
    worst : the queries that lost most against the baseline (the most negative difference first;
        the most positive where lower is better, RBP_resid)
    no_results : queries the system returned nothing for
    nothing_relevant : queries with a relevant judgment but none in the system's top ``cutoff``
    quantiles : the distribution of per-query differences (min, 5%, 25%, 50%, 75%, 95%, max)
    """

    system: str
    metric: str
    worst: tuple[QueryLoss, ...]
    no_results: tuple[str, ...]
    nothing_relevant: tuple[str, ...]
    quantiles: Mapping[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "metric": self.metric,
            "worst": [w.to_dict() for w in self.worst],
            "no_results": list(self.no_results),
            "nothing_relevant": list(self.nothing_relevant),
            "quantiles": dict(self.quantiles),
        }


@dataclass(frozen=True)
class SegmentMean:
    """One system's mean of one metric over a segment of queries (``column=value``)."""

    segment: str
    system: str
    metric: str
    mean: float
    low: float
    high: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        return _fields(self)


@dataclass(frozen=True)
class SegmentResult:
    """A segment of queries (``column=value``): one system against the baseline on one metric."""

    segment: str
    system: str
    metric: str
    n: int
    baseline_mean: float
    system_mean: float
    difference: float
    low: float
    high: float
    p_value: float
    p_corrected: float
    small: bool
    flagged: bool
    #: Which way the metric is better (see :attr:`Difference.better`).
    better: str = "higher"

    @property
    def gain(self) -> float:
        """The difference turned so that positive is better (see :attr:`Difference.gain`)."""
        return -self.difference if self.better == "lower" else self.difference

    def to_dict(self) -> dict[str, Any]:
        return _fields(self)


def better_of(metric: str) -> str:
    """Which way ``metric`` (a label) is better: its spec's ``better``, ``"higher"`` for a name
    that is no metric of the registry (values compared as given).

    >>> better_of("RBP_resid@10"), better_of("nDCG@10"), better_of("my own score")
    ('lower', 'higher', 'higher')
    """
    from rankmeter.errors import RankmeterError
    from rankmeter.metrics import parse_metric

    try:
        return parse_metric(metric).spec.better
    except RankmeterError:
        return "higher"


def check_min_effect(value: Any) -> float:
    """The gate's threshold, checked: a drop must be larger than this (in the metric's own
    units) to count as a regression; 0 counts every significant drop.

    >>> check_min_effect(0.01)
    0.01
    """
    from rankmeter._validate import real

    return real(
        "min_effect",
        value,
        low=0,
        what="the smallest drop of a metric's mean that counts as a regression; 0: any "
        "significant drop",
    )


@dataclass(frozen=True)
class Regression:
    """A system significantly worse than the baseline on one metric, overall or in a segment,
    by more than a stated effect: one reason for ``compare --fail-on regression`` to fail.

    Attributes
    ----------
    system, baseline, metric : what got worse, against what, on which metric
    segment : ``column=value`` of the segment that got worse; None for all compared queries
    n : the queries it is measured on
    baseline_mean, system_mean, difference : the two means and the system's minus the
        baseline's (negative)
    low, high : the interval of the difference
    p_corrected : the p-value after the comparison's correction (across segments for a
        segment, as its flag)
    correction : the correction's name (``holm``, ``bonferroni``, ``bh`` or ``none``)
    min_effect : the threshold the drop exceeds
    """

    system: str
    baseline: str
    metric: str
    segment: str | None
    n: int
    baseline_mean: float
    system_mean: float
    difference: float
    low: float
    high: float
    p_corrected: float
    correction: str
    min_effect: float

    def to_dict(self) -> dict[str, Any]:
        return _fields(self)


@dataclass(frozen=True)
class Gate:
    """The regression gate of a comparison (``compare --fail-on regression``): whether it
    passed and, when not, why (:meth:`Comparison.gate`).

    Attributes
    ----------
    baseline : the run the systems were compared with
    min_effect : the smallest drop of a mean that counts (0: any significant drop)
    regressions : every reason the gate fails (:meth:`Comparison.regressions`); none: passed
    segments : whether segments were compared (they can fail the gate too)
    depth : the runs' depth gap when they were cut at different depths and a metric compared
        reads past the shallower one (:func:`rankmeter.results.depth_gap`): a regression on
        such a metric, of the shallower run, may be the cut alone; None otherwise
    """

    baseline: str
    min_effect: float
    regressions: tuple[Regression, ...]
    segments: bool = False
    depth: DepthGap | None = None

    @property
    def passed(self) -> bool:
        """No system regressed: the gate lets the change through."""
        return not self.regressions

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "baseline": self.baseline,
            "min_effect": self.min_effect,
            "regressions": [r.to_dict() for r in self.regressions],
            "segments": self.segments,
            "depth": None
            if self.depth is None
            else {"depths": dict(self.depth.depths), "metrics": list(self.depth.metrics)},
        }


@dataclass(frozen=True)
class Comparison:
    """The comparison of several systems with a baseline on the same queries.

    Attributes
    ----------
    systems : names, baseline first
    metrics : the metrics' names as asked for (``MRR@10`` stays ``MRR@10``), in that order;
        lookups (``mean``, ``difference``) accept any name of a metric
    query_ids : the compared queries: every judged query, or with ``include_missing=False``
        the judged queries that at least one system answered
    scores : ``{metric: {system: per-query values aligned with query_ids}}``
    means : every system's mean of every metric, with its interval
    differences : every system other than the baseline against it, per metric
    failures : per system (the baseline included) on the first metric
    segments : per segment, system and metric against the baseline (empty without segments)
    segment_means : per segment, every system's mean of every metric with its interval
    curves : ``{family: {system: mean metric@k for k = 1..CURVE_DEPTH}}``
    settings : how the numbers were made (test, correction, alpha, seed, ...)
    notes : what a reader should know (queries left out, tests flagged as not recommended)
    queries : the texts of the compared queries, where given
    explanations : ``{system: {query: Explanation}}`` of the first metric, rank by rank, for
        every listed worst query, for the system that lost and for the baseline
    judged : ``{system: mean Judged@k}`` over the compared queries each system answered, with
        the comparison's qrels and policies: how much of what the metrics looked at is judged
        (empty for a comparison built without it)
    judged_k : the k of ``judged``: the largest cutoff of the metrics, 10 when none has one
    filled : ``{system: queries}``: how many compared queries each system returned nothing
        for, each scored 0 (empty for a comparison built without it)
    no_relevant : how many compared queries have no relevant judgment (every metric is 0 there
        for every system)
    cautions : why some numbers cannot be trusted as they stand (too few queries for the test
        or the intervals, too few resamples to reach alpha after the correction); every report
        shows them as warnings
    facts : ``{system: RunFacts}``: what the comparison saw of each run's data (source, query
        overlap with the qrels, written order), for the warnings beside the numbers
        (:func:`rankmeter.checking.result_warnings`; empty for a comparison built without it)
    relevant_only : the qrels hold only relevant judgments
        (:func:`rankmeter.results.relevant_only`): the Judged@k warnings then say so once
    depths : ``{system: depth}``: the most results any query of each run has
        (:func:`rankmeter.results.depth_of`), for the warning about runs cut at different
        depths (empty for a comparison built without it)
    """

    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    query_ids: tuple[str, ...]
    scores: Mapping[str, Mapping[str, FloatArray]] = field(repr=False)
    means: tuple[SystemMean, ...]
    differences: tuple[Difference, ...]
    failures: tuple[Failures, ...]
    segments: tuple[SegmentResult, ...]
    segment_means: tuple[SegmentMean, ...]
    curves: Mapping[str, Mapping[str, FloatArray]] = field(repr=False)
    settings: Settings
    notes: tuple[str, ...] = ()
    queries: Mapping[str, str] = field(default_factory=dict, repr=False)
    explanations: Mapping[str, Mapping[str, Any]] = field(default_factory=dict, repr=False)
    judged: Mapping[str, float] = field(default_factory=dict)
    judged_k: int = JUDGED_DEFAULT_K
    filled: Mapping[str, int] = field(default_factory=dict)
    no_relevant: int = 0
    cautions: tuple[str, ...] = ()
    facts: Mapping[str, RunFacts] = field(default_factory=dict, repr=False, compare=False)
    depths: Mapping[str, int] = field(default_factory=dict)
    relevant_only: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "judged", MappingProxyType(dict(self.judged)))
        object.__setattr__(self, "depths", MappingProxyType(dict(self.depths)))
        object.__setattr__(self, "filled", MappingProxyType(dict(self.filled)))
        object.__setattr__(
            self, "scores", ByMetric(self.metrics, _frozen_nested(self.scores), done="compared")
        )
        object.__setattr__(self, "curves", _frozen_nested(self.curves))
        object.__setattr__(self, "queries", MappingProxyType(dict(self.queries)))
        object.__setattr__(
            self,
            "explanations",
            MappingProxyType(
                {s: MappingProxyType(dict(by_query)) for s, by_query in self.explanations.items()}
            ),
        )

    @property
    def baseline(self) -> str:
        return self.settings.baseline

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def difference_level(self) -> float:
        """The confidence level of the differences' intervals: ``settings.level``, or the
        Bonferroni level over every difference with ``settings.simultaneous``."""
        return self.settings.difference_level(len(self.differences))

    def mean(self, system: str, metric: str) -> SystemMean:
        metric = metric_key(metric, self.metrics, done="compared")
        for m in self.means:
            if m.system == system and m.metric == metric:
                return m
        raise KeyError(f"no system {system!r}; systems: {', '.join(self.systems)}")

    def difference(self, system: str, metric: str) -> Difference:
        metric = metric_key(metric, self.metrics, done="compared")
        for d in self.differences:
            if d.system == system and d.metric == metric:
                return d
        others = [s for s in self.systems if s != self.baseline]
        raise KeyError(f"no comparison for {system!r}; compared systems: {', '.join(others)}")

    def regressions(self, min_effect: float = 0.0) -> tuple[Regression, ...]:
        """Where a system got significantly worse than the baseline by more than
        ``min_effect``: the reasons a regression gate fails, none when it passes.

        A metric regresses when its difference is significant after the comparison's
        correction and below ``-min_effect``; a segment when it is flagged (at least
        ``min_segment`` queries, significantly worse after the correction across segments)
        and its difference is below ``-min_effect``, both turned by the metric's direction: a
        lower-is-better metric (RBP_resid) regresses when it rises by more than ``min_effect``.

        Parameters
        ----------
        min_effect : the smallest drop of a mean, in the metric's units, that counts
            (``0.01`` on nDCG@10 lets a significant drop of 0.008 pass); 0 counts every
            significant drop

        Returns
        -------
        The regressions of every metric over all compared queries, in the order of
        ``differences``, then those of the segments, in the order of ``segments``.
        """
        min_effect = check_min_effect(min_effect)
        correction = self.settings.correction
        found = [
            Regression(
                system=d.system,
                baseline=d.baseline,
                metric=d.metric,
                segment=None,
                n=d.n,
                baseline_mean=d.baseline_mean,
                system_mean=d.system_mean,
                difference=d.difference,
                low=d.low,
                high=d.high,
                p_corrected=d.p_corrected,
                correction=correction,
                min_effect=min_effect,
            )
            for d in self.differences
            if d.significant and d.gain < -min_effect
        ]
        found += [
            Regression(
                system=s.system,
                baseline=self.baseline,
                metric=s.metric,
                segment=s.segment,
                n=s.n,
                baseline_mean=s.baseline_mean,
                system_mean=s.system_mean,
                difference=s.difference,
                low=s.low,
                high=s.high,
                p_corrected=s.p_corrected,
                correction=correction,
                min_effect=min_effect,
            )
            for s in self.segments
            if s.flagged and s.gain < -min_effect
        ]
        return tuple(found)

    def gate(self, min_effect: float = 0.0) -> Gate:
        """The regression gate's decision (``compare --fail-on regression``): the
        :meth:`regressions` larger than ``min_effect``, and the runs' depth gap that may
        explain some of them (see :class:`Gate`).

        >>> from rankmeter import compare
        >>> qrels = {f"q{i}": {"r": 1} for i in range(30)}
        >>> base = {f"q{i}": {"r": 2.0, "n": 1.0} for i in range(30)}
        >>> new = {f"q{i}": {"n": 2.0, "r": 1.0} for i in range(30)}
        >>> gate = compare(qrels, {"base": base, "new": new}, ["RR"], resamples=1000).gate()
        >>> gate.passed, [(r.system, r.metric) for r in gate.regressions]
        (False, [('new', 'RR')])
        """
        from rankmeter.metrics import parse_metric
        from rankmeter.results import depth_gap

        found = self.regressions(min_effect)
        measures = [parse_metric(label).labelled(label) for label in self.metrics]
        gap = depth_gap(self.depths, measures) if self.depths else None
        return Gate(
            baseline=self.baseline,
            min_effect=check_min_effect(min_effect),
            regressions=found,
            segments=bool(self.segments),
            depth=gap if gap is not None and gap.metrics else None,
        )

    def judged_warnings(self, threshold: float = JUDGED_BELOW) -> tuple[JudgedWarning, ...]:
        """The systems whose Judged@k is below ``threshold`` (0: none), in the systems' order."""
        threshold = check_judged_below(threshold)
        found = (
            judged_warning(s, self.judged_k, self.judged[s], threshold, self.relevant_only)
            for s in self.systems
            if s in self.judged
        )
        return tuple(w for w in found if w is not None)

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        """A JSON-ready dict: settings, means, differences, failures, segments, curves."""
        out: dict[str, Any] = {
            "settings": self.settings.to_dict(),
            "systems": list(self.systems),
            "metrics": list(self.metrics),
            "n_queries": self.n_queries,
            "filled": dict(self.filled),
            "depths": dict(self.depths),
            "no_relevant": self.no_relevant,
            "difference_level": self.difference_level,
            "means": [m.to_dict() for m in self.means],
            "differences": [d.to_dict() for d in self.differences],
            "failures": [f.to_dict() for f in self.failures],
            "segments": [s.to_dict() for s in self.segments],
            "segment_means": [s.to_dict() for s in self.segment_means],
            "curves": {
                family: {s: [float(v) for v in values] for s, values in by_system.items()}
                for family, by_system in self.curves.items()
            },
            "notes": list(self.notes),
            "cautions": list(self.cautions),
        }
        if per_query:
            out["per_query"] = {
                metric: {
                    s: dict(zip(self.query_ids, map(float, values), strict=True))
                    for s, values in by_system.items()
                }
                for metric, by_system in self.scores.items()
            }
        return out

    def to_pandas(self) -> Any:
        """The differences as a DataFrame, one row per (system, metric)."""
        from rankmeter.data.arrays import import_pandas

        return import_pandas().DataFrame([d.to_dict() for d in self.differences])


def _frozen_nested(data: Mapping[str, Mapping[str, Any]]) -> Mapping[str, Mapping[str, Any]]:
    out = {}
    for key, inner in data.items():
        frozen = {}
        for name, array in inner.items():
            copy = np.array(array, dtype=np.float64)
            copy.flags.writeable = False
            frozen[name] = copy
        out[key] = MappingProxyType(frozen)
    return MappingProxyType(out)
