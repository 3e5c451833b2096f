"""A/B analysis of a search log: per-user metrics computed in the engine, statistics from
tea-tasting.

The log (one row per impression, the columns of the online contract) is aggregated inside its
engine (DuckDB or Spark, through Ibis) in three steps: impressions into requests (one row per
results page), requests into users (the randomisation unit), and users into tea-tasting's
per-variant aggregates (count, means, variances and covariances of the per-user columns).
Only those aggregates, and the latency quantiles per variant, come back to Python.

The statistics are tea-tasting's (:class:`tea_tasting.RatioOfMeans` with the delta method,
CUPED through its covariates, :class:`tea_tasting.SampleRatio`, its power analysis): this module
decides what is measured, not how it is tested. Corrections across metrics and across segments
are :func:`rankmeter.stats.correct` (Holm by default; the values of statsmodels).

The module is ``abtest`` rather than ``ab``: a submodule named like the function
``rankmeter.online.ab`` would rebind that name to the module when imported.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, TypeAlias

from rankmeter import _validate
from rankmeter.errors import FormatError, MetricError, PolicyError
from rankmeter.online.logs import LOG_COLUMNS, VariantCounts, read_log

#: An Ibis table expression (Ibis ships no type information).
IbisTable: TypeAlias = Any

__all__ = [
    "AB_METRICS",
    "ABMetric",
    "ABResult",
    "LatencyQuantiles",
    "MetricEffect",
    "SampleRatioCheck",
    "SegmentEffect",
    "ab",
    "user_metrics",
]

#: The latency quantiles reported per variant (exact, linear interpolation between requests).
LATENCY_QUANTILES: tuple[float, ...] = (0.5, 0.95, 0.99)

#: A segment column with more distinct values than this is refused (it is not a segment).
MAX_SEGMENT_VALUES = 100

#: How the level of the requests whose segment value is null (not logged) is shown.
MISSING_SEGMENT = "(missing)"


@dataclass(frozen=True)
class ABMetric:
    """One A/B metric: a ratio of two per-user sums, tested with the delta method.

    Attributes
    ----------
    name : str
        The name users give (``ctr``).
    numerator, denominator : str
        The per-user columns (:func:`user_metrics`) whose means are divided.
    higher_is_better : bool
        The direction that counts as better (a segment is flagged when it moved the other way).
    unit : str
        What one unit of the denominator is (``impression``, ``request``, ``session``).
    description : str
        What the metric measures, in a sentence.
    """

    name: str
    numerator: str
    denominator: str
    higher_is_better: bool
    unit: str
    description: str


#: The metrics, in the order they are reported. Each is a ratio of means (per-user sums): a
#: user with many requests weighs as much as those requests, and the delta method accounts for
#: the requests of one user not being independent.
AB_METRICS: Mapping[str, ABMetric] = {
    m.name: m
    for m in (
        ABMetric("ctr", "clicks", "impressions", True, "impression", "clicks per shown result"),
        ABMetric(
            "abandonment",
            "abandoned_requests",
            "result_requests",
            False,
            "request",
            "share of requests that showed results and got no click",
        ),
        ABMetric(
            "success",
            "successful_sessions",
            "sessions",
            True,
            "session",
            "share of sessions with a click whose dwell time reached the success threshold",
        ),
        ABMetric(
            "reformulation",
            "reformulated_requests",
            "requests",
            False,
            "request",
            "share of requests followed in their session by a request for another query "
            "within the reformulation window",
        ),
        ABMetric(
            "no_result",
            "no_result_requests",
            "requests",
            False,
            "request",
            "share of requests that returned no result",
        ),
        ABMetric(
            "latency",
            "latency_ms_sum",
            "requests",
            False,
            "request",
            "mean server latency per request, in milliseconds",
        ),
    )
}

#: The per-user columns of :func:`user_metrics`, besides ``user_id`` and ``variant``.
USER_COLUMNS: tuple[str, ...] = (
    "impressions",
    "clicks",
    "requests",
    "result_requests",
    "abandoned_requests",
    "no_result_requests",
    "reformulated_requests",
    "latency_ms_sum",
    "sessions",
    "successful_sessions",
)


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


# ---------------------------------------------------------------------------------------------
# Per-user metrics in the engine


def _ibis() -> Any:
    try:
        import ibis  # type: ignore[import-untyped, unused-ignore]
    except ImportError:  # pragma: no cover - the extra is part of [dev]
        raise PolicyError(
            "A/B analysis needs the [online] extra: pip install 'rankmeter[online]'"
        ) from None
    return ibis


def _requests(
    log: IbisTable, segments: Sequence[str], success_dwell: float, reformulation_window: float
) -> IbisTable:
    """One row per request: its counts, latency, whether it was reformulated, its segments."""
    ibis = _ibis()
    columns = set(log.columns)
    clicked = log.clicked.cast("boolean").fill_null(False)
    if "dwell_ms" in columns:
        long_click = clicked & (log.dwell_ms.cast("float64") >= success_dwell * 1000.0)
    else:
        long_click = ibis.literal(False)
    query_parts = [log[c].cast("string") for c in ("query_id", "query_text") if c in columns]
    query = ibis.coalesce(*query_parts) if query_parts else ibis.literal("")
    requests = log.mutate(
        _query=query, _click=clicked.cast("int64"), _long=long_click.fill_null(False).cast("int64")
    )
    keys = ["user_id", "session_id", "request_id", "variant"]
    requests = requests.group_by(keys).aggregate(
        event_ts=requests.event_ts.min(),
        query=requests._query.min(),
        result_count=requests.result_count.max(),
        latency_ms=requests.latency_ms.cast("float64").max(),
        impressions=requests.doc_id.notnull().cast("int64").sum(),
        clicks=requests._click.sum(),
        long_clicks=requests._long.sum(),
        **{f"segment_{i}": requests[c].min() for i, c in enumerate(segments)},
    )
    # A request is reformulated when the next request of its session (by time, then id) asks
    # another query and starts at most `reformulation_window` seconds later.
    window = ibis.window(
        group_by=[requests.user_id, requests.session_id],
        order_by=[requests.event_ts, requests.request_id],
    )
    next_ts = requests.event_ts.lead().over(window)
    next_query = requests.query.lead().over(window)
    window_ms = round(reformulation_window * 1000)
    reformulated = (
        next_ts.notnull()
        & (next_ts <= requests.event_ts + ibis.interval(milliseconds=window_ms))
        & (next_query.fill_null("") != requests.query.fill_null(""))
    )
    return requests.mutate(reformulated=reformulated.fill_null(False).cast("int64"))


def _per_user(requests: IbisTable, keys: Sequence[str]) -> IbisTable:
    has_results = requests.result_count > 0
    return requests.group_by(list(keys)).aggregate(
        impressions=requests.impressions.sum(),
        clicks=requests.clicks.sum(),
        requests=requests.count(),
        result_requests=has_results.cast("int64").sum(),
        abandoned_requests=(has_results & (requests.clicks == 0)).cast("int64").sum(),
        no_result_requests=(requests.result_count == 0).cast("int64").sum(),
        reformulated_requests=requests.reformulated.sum(),
        latency_ms_sum=requests.latency_ms.sum(),
        sessions=requests.session_id.nunique(),
        successful_sessions=requests.session_id.nunique(where=requests.long_clicks > 0),
    )


def user_metrics(
    log: Any,
    *,
    success_dwell: float = 30.0,
    reformulation_window: float = 60.0,
    engine: str = "duckdb",
    validate: bool = True,
) -> IbisTable:
    """The per-user table of a log, as an Ibis expression (nothing is computed yet).

    One row per ``(user_id, variant)`` with the columns of :data:`USER_COLUMNS`:
    ``impressions`` (shown results), ``clicks``, ``requests`` (results pages),
    ``result_requests`` (requests with ``result_count > 0``), ``abandoned_requests`` (of those,
    the ones without a click), ``no_result_requests`` (``result_count == 0``),
    ``reformulated_requests`` (followed in their session by a request for another query within
    ``reformulation_window`` seconds), ``latency_ms_sum`` (the requests' latencies added up),
    ``sessions`` and ``successful_sessions`` (with a click of ``dwell_ms >= success_dwell``
    seconds).

    Parameters
    ----------
    log : path, Ibis table, pyarrow Table or DataFrame
        The log (see :func:`ab`).
    success_dwell : float, default 30
        Seconds of dwell that make a click a success.
    reformulation_window : float, default 60
        Seconds within which the next request of a session counts as a reformulation.
    engine : {"duckdb", "spark"}, default "duckdb"
        Where a log given as a path or a table in memory is read.
    validate : bool, default True
        Check the log first (:func:`rankmeter.online.check_log`): its first problem is raised.

    Returns
    -------
    ibis.Table
        The per-user expression; ``.to_pyarrow()`` computes it.
    """
    success_dwell = _validate.real("success_dwell", success_dwell, low=0, what="seconds")
    reformulation_window = _validate.real(
        "reformulation_window", reformulation_window, low=0, what="seconds"
    )
    validate = _validate.boolean("validate", validate)
    table, _ = _as_table(log, engine, validate)
    return _user_table(table, (), success_dwell, reformulation_window)


def _user_table(
    table: IbisTable, segments: Sequence[str], success_dwell: float, reformulation_window: float
) -> IbisTable:
    requests = _requests(table, segments, success_dwell, reformulation_window)
    keys = ["user_id", "variant", *(f"segment_{i}" for i in range(len(segments)))]
    return _per_user(requests, keys)


def _as_table(
    log: Any,
    engine: str,
    validate: bool,
    ts_unit: str = "s",
    ordered: bool = True,
    *,
    unnamed: str = "<table>",
) -> tuple[IbisTable, str]:
    """The log as a typed Ibis table (:func:`rankmeter.online.read_log`), and how to name it
    in errors (``unnamed`` for a table in memory)."""
    _ibis()
    table = read_log(log, engine=engine, validate=validate, ts_unit=ts_unit, ordered=ordered)
    name = str(log) if isinstance(log, (str, os.PathLike)) else unnamed
    return table, name


# ---------------------------------------------------------------------------------------------
# The analysis


def ab(
    log: Any,
    *,
    experiment: str | None = None,
    control: str | None = None,
    metrics: Iterable[str] | None = None,
    segments: Iterable[str] | None = None,
    pre: Any = None,
    alpha: float = 0.05,
    correction: str = "holm",
    power: float = 0.8,
    success_dwell: float = 30.0,
    reformulation_window: float = 60.0,
    srm_alpha: float = 0.001,
    expected_ratio: float = 1.0,
    engine: str = "duckdb",
    validate: bool = True,
    ts_unit: str = "s",
    ordered: bool = True,
) -> ABResult:
    """Analyse an A/B test from its search log: did the treatment win, for whom, and can the
    split be trusted?

    The log is aggregated to users in its engine (:func:`user_metrics`); tea-tasting tests each
    metric (a ratio of per-user means, delta method, Welch's t), checks the sample ratio and
    gives the minimum detectable effect; with ``pre`` each metric is adjusted by CUPED with the
    same metric's pre-period value per user as covariate.

    Parameters
    ----------
    log : Ibis table, pyarrow Table or path
        One row per impression, with the columns of the online log contract (docs/ab.md).
    experiment : str, optional
        The ``experiment_id`` to analyse: only its rows are read (and only its rows of the
        pre-period, when the pre-period has experiment ids). Required when the log holds more
        than one experiment id; a log whose ``experiment_id`` is null or one value throughout
        is analysed whole without it.
    control : str, optional
        The control variant's name; default ``"control"`` if present, else the first variant
        in sort order. The log must have exactly two variants.
    metrics : iterable of str, optional
        Names from :data:`AB_METRICS` (default: all of them, in that order).
    segments : iterable of str, optional
        Segment columns of the log (``device``, ``is_new_user``): every metric is analysed per
        segment value too, corrected across all segment values per metric, and segments that
        got significantly worse are flagged.
    pre : same kinds as ``log``, optional
        The pre-period log of the same users: enables CUPED. Where it has experiment ids,
        ``experiment`` chooses its rows as it does the log's (several ids and none chosen is
        refused; ids without the chosen one too); without ids it is used whole.
    alpha : float, default 0.05
        Significance level (the intervals are at ``1 - alpha``).
    correction : {"holm", "bonferroni", "bh", "none"}, default "holm"
        Across the metrics, and per metric across the segment values.
    power : float, default 0.8
        The power at which the minimum detectable effect is given.
    success_dwell : float, default 30
        Seconds of dwell that make a click (and its session) successful.
    reformulation_window : float, default 60
        Seconds within which a next request for another query is a reformulation.
    srm_alpha : float, default 0.001
        The sample-ratio check fails below this p-value.
    expected_ratio : float, default 1
        Treatment users / control users that the assignment intended.
    engine : {"duckdb", "spark"}, default "duckdb"
        Where a log given as a path or table in memory is read (an Ibis table stays on its
        backend).
    validate : bool, default True
        Check the log first (:func:`rankmeter.online.check_log`): its first problem is raised
        as one line naming the file and row.
    ts_unit, ordered : default "s", True
        How the log and ``pre`` are read (:func:`rankmeter.online.read_log`): the unit of
        epoch numbers in event_ts, and whether rows are in time order within a session. An
        Ibis table (such as read_log returns) has typed timestamps and no file order: neither
        applies to it.

    Returns
    -------
    ABResult

    Examples
    --------
    >>> import pyarrow as pa, datetime as dt
    >>> rows = []
    >>> for u in range(40):
    ...     variant = "control" if u % 2 else "treatment"
    ...     for r in range(3):
    ...         clicked = (u + r) % (2 if variant == "treatment" else 3) == 0
    ...         rows.append(dict(event_ts=dt.datetime(2026, 1, 1, 0, r), user_id=f"u{u}",
    ...             session_id=f"s{u}", request_id=f"r{u}-{r}", query_id=f"q{r}",
    ...             result_count=10, latency_ms=100.0 + r, variant=variant, doc_id="d1",
    ...             position=1, clicked=clicked, dwell_ms=40_000.0 if clicked else None))
    >>> result = ab(pa.Table.from_pylist(rows), metrics=["ctr"])
    >>> result.control, result.treatment, result.srm.failed
    ('control', 'treatment', False)
    >>> effect = result.metrics[0]
    >>> round(effect.control, 3), round(effect.treatment, 3)
    (0.333, 0.667)
    """
    names = _metric_names(metrics)
    alpha = _validate.alpha(alpha)
    power = _validate.real("power", power, low=0, high=1, open_low=True, open_high=True)
    srm_alpha = _validate.alpha(srm_alpha, name="srm_alpha")
    expected_ratio = _validate.real("expected_ratio", expected_ratio, low=0, open_low=True)
    success_dwell = _validate.real("success_dwell", success_dwell, low=0, what="seconds")
    reformulation_window = _validate.real(
        "reformulation_window", reformulation_window, low=0, what="seconds"
    )
    from rankmeter.stats import CORRECTIONS

    correction = _validate.choice("correction", correction, CORRECTIONS)
    engine = _validate.choice("engine", engine, ("duckdb", "spark"))
    if control is not None:
        control = _validate.identifier("control", control)
    if experiment is not None:
        experiment = _validate.identifier("experiment", experiment)
    validate = _validate.boolean("validate", validate)

    table, name = _as_table(log, engine, validate, ts_unit, ordered)
    # The experiment analysed (reported): the one chosen, or the log's only experiment id.
    table, analysed = _one_experiment(table, experiment, f"the log {name}")
    segment_columns = _segment_columns(segments, table, name)
    users = _user_table(table, (), success_dwell, reformulation_window)
    _check_one_variant_per_user(users, name)
    cuped = pre is not None
    pre_users: IbisTable | None = None
    notes: list[str] = []
    if cuped:
        pre_table, pre_name = _as_table(
            pre, engine, validate, ts_unit, ordered, unnamed="<pre-period table>"
        )
        pre_table, _ = _one_experiment(
            pre_table, experiment, f"the pre-period log {pre_name}", untagged_whole=True
        )
        pre_users = _pre_period(pre_table, success_dwell, reformulation_window)
        _check_pre_period_precedes(table, pre_users, name, pre_name, notes)
        users = _with_pre(users, pre_users)

    chosen = [AB_METRICS[n] for n in names]
    tt_metrics = {m.name: _tea_metric(m, cuped, alpha, power) for m in chosen}
    aggregates = _aggregates(users, "variant", tt_metrics.values())
    control, treatment = _variants(sorted(map(str, aggregates)), control, name)

    srm = _sample_ratio(aggregates, control, treatment, expected_ratio, srm_alpha)
    effects = _effects(chosen, tt_metrics, aggregates, control, treatment, alpha, correction)
    counts = tuple(_counts(v, aggregates[v]) for v in (control, treatment))
    latency = _latency(table, success_dwell, reformulation_window, (control, treatment))

    segment_effects: list[SegmentEffect] = []
    if segment_columns:
        segment_effects = _segments(
            table,
            segment_columns,
            chosen,
            tt_metrics,
            pre_users,
            control,
            treatment,
            alpha,
            correction,
            success_dwell,
            reformulation_window,
            notes,
        )
    return ABResult(
        control=control,
        treatment=treatment,
        srm=srm,
        counts=counts,
        metrics=tuple(effects),
        latency=latency,
        segments=tuple(segment_effects),
        alpha=alpha,
        correction=correction,
        power=power,
        success_dwell=success_dwell,
        reformulation_window=reformulation_window,
        cuped=cuped,
        notes=tuple(notes),
        experiment=analysed,
    )


#: How many experiment ids an error message lists before "and N more".
SHOWN_EXPERIMENTS = 5


def _one_experiment(
    table: IbisTable, experiment: str | None, where: str, *, untagged_whole: bool = False
) -> tuple[IbisTable, str | None]:
    """The rows of one experiment: ``experiment``'s when chosen, else the whole table, which
    may then hold at most one experiment id (several are never pooled silently).
    ``untagged_whole``: a table without experiment ids, or with one id that is not the chosen
    one, is used whole even when one was chosen (a pre-period logged before the experiment)."""
    counted = table.group_by("experiment_id").aggregate(rows=table.count())
    found = [
        (str(row["experiment_id"]), int(row["rows"]))
        for row in counted.to_pyarrow().to_pylist()
        if row["experiment_id"] is not None
    ]
    found.sort(key=lambda item: (-item[1], item[0]))
    listed = ", ".join(f"{e!r} ({n:,} rows)" for e, n in found[:SHOWN_EXPERIMENTS])
    if len(found) > SHOWN_EXPERIMENTS:
        listed += f", and {len(found) - SHOWN_EXPERIMENTS} more"
    if experiment is None:
        if len(found) > 1:
            raise PolicyError(
                f"{where} holds {len(found)} experiments: {listed}; choose one with "
                "--experiment ID (experiment= in Python)"
            )
        return table, found[0][0] if found else None
    if experiment in {e for e, _ in found}:
        return table.filter(table.experiment_id == experiment), experiment
    if untagged_whole and len(found) <= 1:
        # A pre-period logged before the experiment: untagged, or tagged once with an id of
        # its own (rankmeter's simulator writes "<id>-pre").
        return table, None
    if not found:
        raise PolicyError(
            f"experiment={experiment!r} is not in {where}; it has no experiment_id values"
        )
    raise PolicyError(f"experiment={experiment!r} is not in {where}; its experiments: {listed}")


def _metric_names(metrics: Iterable[str] | None) -> list[str]:
    if metrics is None:
        return list(AB_METRICS)
    if isinstance(metrics, str):
        metrics = [metrics]
    names: list[str] = []
    for given in metrics:
        name = str(given).strip().lower().replace("-", "_")
        if name not in AB_METRICS:
            raise MetricError(f"unknown A/B metric {given!r}; choose from {', '.join(AB_METRICS)}")
        if name not in names:
            names.append(name)
    if not names:
        raise MetricError(f"no A/B metric given; choose from {', '.join(AB_METRICS)}")
    return names


def _segment_columns(segments: Iterable[str] | None, table: IbisTable, name: str) -> list[str]:
    if segments is None:
        return []
    if isinstance(segments, str):
        segments = segments.split(",")
    available = [c for c in table.columns if c not in LOG_COLUMNS]
    chosen: list[str] = []
    for given in segments:
        column = str(given).strip()
        if not column:
            continue
        if column not in available:
            offer = ", ".join(available) if available else "none"
            what = (
                f"{column!r} is a column of the log schema, not a segment column"
                if column in LOG_COLUMNS
                else f"segment column {column!r} is not in the log {name}"
            )
            raise PolicyError(f"{what}; its segment columns: {offer}")
        if column not in chosen:
            chosen.append(column)
    return chosen


def _check_one_variant_per_user(users: IbisTable, name: str) -> None:
    """The user is the randomisation unit: one seen in both variants breaks the analysis."""
    per_user = users.group_by("user_id").aggregate(n=users.variant.nunique())
    both = per_user.filter(per_user.n > 1)
    found = both.limit(1).to_pyarrow().column("user_id").to_pylist()
    if found:
        raise FormatError(
            name,
            f"user {found[0]!r} is in more than one variant; the user is the randomisation "
            "unit, so each user must see one variant",
        )


def _variants(variants: list[str], control: str | None, name: str) -> tuple[str, str]:
    if len(variants) != 2:
        shown = ", ".join(map(repr, variants)) or "none"
        raise FormatError(
            name,
            f"an A/B analysis needs exactly two variants; the log has {len(variants)}: {shown}",
        )
    if control is None:
        control = "control" if "control" in variants else variants[0]
    elif control not in variants:
        raise PolicyError(
            f"control={control!r} is not a variant of the log; its variants: "
            f"{', '.join(map(repr, variants))}"
        )
    treatment = variants[1] if control == variants[0] else variants[0]
    return control, treatment


def _pre_period(pre_table: IbisTable, success_dwell: float, window: float) -> IbisTable:
    """The pre-period's per-user values (``pre_<column>``, one row per user) and the user's
    last pre-period event (``pre_last_ts``), brought back as a small Arrow table and handed to
    the log's engine as an in-memory table: the pre-period may have been read on another
    connection than the log."""
    ibis = _ibis()
    users = _user_table(pre_table, (), success_dwell, window)
    per_user = users.group_by("user_id").aggregate(
        **{f"pre_{c}": users[c].sum() for c in USER_COLUMNS}
    )
    last = pre_table.group_by("user_id").aggregate(pre_last_ts=pre_table.event_ts.max())
    per_user = per_user.join(last, "user_id")
    return ibis.memtable(per_user.rename(pre_user_id="user_id").to_pyarrow())


def _check_pre_period_precedes(
    table: IbisTable, pre_users: IbisTable, name: str, pre_name: str, notes: list[str]
) -> None:
    """CUPED's covariate must come from before the treatment. A user whose pre-period runs
    past their own first request of the experiment is refused; a pre-period that runs past
    the experiment's first request only overall (users enrolled one by one, each user's
    pre-period ending before their own start) is legitimate, and noted."""
    first = table.aggregate(first_ts=table.event_ts.min()).to_pyarrow()["first_ts"][0].as_py()
    last = pre_users.aggregate(last_ts=pre_users.pre_last_ts.max()).to_pyarrow()
    pre_last = last["last_ts"][0].as_py()
    if first is None or pre_last is None or pre_last <= first:
        return
    starts = table.group_by("user_id").aggregate(first_ts=table.event_ts.min())
    joined = starts.join(pre_users, starts.user_id == pre_users.pre_user_id)
    late = joined.filter(joined.pre_last_ts > joined.first_ts).order_by("user_id").limit(1)
    found = late.select("user_id", "first_ts", "pre_last_ts").to_pyarrow().to_pylist()
    if found:
        row = found[0]
        raise FormatError(
            pre_name,
            f"user {row['user_id']!r} has pre-period events up to {row['pre_last_ts']}, after "
            f"their first request in the experiment at {row['first_ts']} ({name}); CUPED needs "
            "a covariate from before the treatment: give a pre-period that ends before the "
            "experiment starts",
        )
    notes.append(
        f"the pre-period runs to {pre_last}, after the experiment's first request at {first}, "
        "but each user's pre-period ends before that user's own first request (staggered "
        "enrolment), so CUPED's covariate still comes from before the treatment"
    )


def _with_pre(users: IbisTable, pre: IbisTable) -> IbisTable:
    """The per-user table with the pre-period's values of every column (``pre_<column>``), 0
    for users the pre-period did not see (CUPED stays unbiased: the covariate does not depend
    on the assignment)."""
    ibis = _ibis()
    joined = users.left_join(pre, users.user_id == pre.pre_user_id)
    return joined.select(
        *(users[c] for c in users.columns),
        **{f"pre_{c}": ibis.coalesce(joined[f"pre_{c}"], 0) for c in USER_COLUMNS},
    )


def _tea_metric(metric: ABMetric, cuped: bool, alpha: float, power: float) -> Any:
    import tea_tasting as tt

    return tt.RatioOfMeans(
        metric.numerator,
        metric.denominator,
        f"pre_{metric.numerator}" if cuped else None,
        f"pre_{metric.denominator}" if cuped else None,
        alpha=alpha,
        confidence_level=1 - alpha,
        power=power,
    )


#: Per-user columns whose means are always aggregated: the variant counts are built from them.
COUNTED: tuple[str, ...] = ("sessions", "requests", "impressions", "clicks")


def _aggregates(users: IbisTable, group: str, tt_metrics: Iterable[Any]) -> dict[Any, Any]:
    """tea-tasting's aggregates per group (count, means, variances, covariances), computed in
    the engine in one query; the means of :data:`COUNTED` whatever the metrics."""
    from tea_tasting.aggr import read_aggregates

    mean_cols: set[str] = set(COUNTED)
    var_cols: set[str] = set()
    cov_cols: set[tuple[str, str]] = set()
    for metric in tt_metrics:
        cols = metric.aggr_cols
        mean_cols.update(cols.mean_cols)
        var_cols.update(cols.var_cols)
        cov_cols.update(cols.cov_cols)
    return dict(
        read_aggregates(
            users,
            group,
            has_count=True,
            mean_cols=sorted(mean_cols),
            var_cols=sorted(var_cols),
            cov_cols=sorted(cov_cols),
        )
    )


def _sample_ratio(
    aggregates: dict[Any, Any], control: str, treatment: str, ratio: float, alpha: float
) -> SampleRatioCheck:
    import tea_tasting as tt

    result = tt.SampleRatio(ratio).analyze(aggregates, control, treatment)
    return SampleRatioCheck(
        control_users=int(result.control),
        treatment_users=int(result.treatment),
        expected_ratio=ratio,
        pvalue=float(result.pvalue),
        alpha=alpha,
        failed=bool(result.pvalue < alpha),
    )


def _nan_effect(metric: ABMetric, cuped: bool) -> MetricEffect:
    nan = math.nan
    return MetricEffect(
        metric.name, metric.higher_is_better, nan, nan, nan, nan, nan, nan, nan, nan, nan,
        nan, False, "not enough users", nan, nan, cuped,
    )  # fmt: skip


class _Analysed(NamedTuple):
    """tea-tasting's result for one metric (None: undefined), its minimum detectable effect
    (absolute, relative) and the raw (not CUPED-adjusted) means of both variants."""

    result: Any
    mde: float
    mde_relative: float
    control_raw: float
    treatment_raw: float


def _raw_mean(metric: ABMetric, aggregate: Any) -> float:
    """mean(numerator) / mean(denominator) over the users: the metric without CUPED."""
    denominator = float(aggregate.mean(metric.denominator))
    if denominator == 0 or not math.isfinite(denominator):
        return math.nan
    return float(aggregate.mean(metric.numerator)) / denominator


def _analyse(metric: ABMetric, tt_metric: Any, control: Any, treatment: Any) -> _Analysed:
    """tea-tasting's result and minimum detectable effect (absolute, relative) for one metric;
    NaN where the statistics are undefined (a variance of zero, no denominator)."""
    import numpy as np

    raw = (_raw_mean(metric, control), _raw_mean(metric, treatment))
    with np.errstate(all="ignore"):
        try:
            result = tt_metric.analyze_aggregates(control, treatment)
        except (ZeroDivisionError, ValueError):
            return _Analysed(None, math.nan, math.nan, *raw)
        try:
            mde = tt_metric.solve_power_from_aggregates(control + treatment, "rel_effect_size")[0]
            return _Analysed(result, float(mde.effect_size), float(mde.rel_effect_size), *raw)
        except (ZeroDivisionError, ValueError, RuntimeError):
            return _Analysed(result, math.nan, math.nan, *raw)


def _effects(
    chosen: Sequence[ABMetric],
    tt_metrics: Mapping[str, Any],
    aggregates: Mapping[Any, Any],
    control: str,
    treatment: str,
    alpha: float,
    correction: str,
) -> list[MetricEffect]:
    raw = [
        _analyse(m, tt_metrics[m.name], aggregates[control], aggregates[treatment]) for m in chosen
    ]
    cuped = tt_metrics[chosen[0].name].numer_covariate is not None
    return _corrected(chosen, raw, alpha, correction, cuped)


def _corrected(
    chosen: Sequence[ABMetric],
    raw: Sequence[_Analysed],
    alpha: float,
    correction: str,
    cuped: bool,
) -> list[MetricEffect]:
    from rankmeter.stats import correct

    pvalues = [math.nan if a.result is None else _finite(a.result.pvalue) for a in raw]
    corrected = correct(pvalues, correction, alpha=alpha)
    effects = []
    for i, (metric, analysed) in enumerate(zip(chosen, raw, strict=True)):
        r, mde, mde_rel = analysed.result, analysed.mde, analysed.mde_relative
        if r is None:
            effects.append(
                replace(
                    _nan_effect(metric, cuped),
                    control_raw=analysed.control_raw,
                    treatment_raw=analysed.treatment_raw,
                )
            )
            continue
        significant = bool(corrected.significant[i])
        if not math.isfinite(float(r.pvalue)):
            # No variance to test (e.g. no no-result request in either variant): nothing was
            # tested, which is not the same as a test that found nothing.
            verdict = "not tested"
        elif not significant:
            verdict = "no significant difference"
        elif (r.effect_size > 0) == metric.higher_is_better:
            verdict = "better"
        else:
            verdict = "worse"
        effects.append(
            MetricEffect(
                metric=metric.name,
                higher_is_better=metric.higher_is_better,
                control=float(r.control),
                treatment=float(r.treatment),
                difference=float(r.effect_size),
                difference_low=float(r.effect_size_ci_lower),
                difference_high=float(r.effect_size_ci_upper),
                relative=float(r.rel_effect_size),
                relative_low=float(r.rel_effect_size_ci_lower),
                relative_high=float(r.rel_effect_size_ci_upper),
                pvalue=float(r.pvalue),
                adjusted=float(corrected.adjusted[i]),
                significant=significant,
                verdict=verdict,
                mde=mde,
                mde_relative=mde_rel,
                cuped=cuped,
                control_raw=analysed.control_raw,
                treatment_raw=analysed.treatment_raw,
            )
        )
    return effects


def _finite(value: float) -> float:
    value = float(value)
    return value if math.isfinite(value) else math.nan


def _counts(variant: str, aggregate: Any) -> VariantCounts:
    n = int(aggregate.count())

    def total(column: str) -> int:
        return round(float(aggregate.mean(column)) * n)

    return VariantCounts(
        variant=variant,
        users=n,
        sessions=total("sessions"),
        requests=total("requests"),
        impressions=total("impressions"),
        clicks=total("clicks"),
    )


def _latency(
    table: IbisTable,
    success_dwell: float,
    reformulation_window: float,
    variants: Sequence[str],
) -> tuple[LatencyQuantiles, ...]:
    """Exact latency quantiles per variant over requests (linear interpolation: DuckDB's
    quantile_cont, Spark's percentile)."""
    requests = _requests(table, (), success_dwell, reformulation_window)
    stats = requests.group_by("variant").aggregate(
        requests=requests.count(),
        **{f"p{round(q * 100)}": requests.latency_ms.quantile(q) for q in LATENCY_QUANTILES},
    )
    rows = {str(r["variant"]): r for r in stats.to_pyarrow().to_pylist()}
    return tuple(
        LatencyQuantiles(
            variant=v,
            requests=int(rows[v]["requests"]),
            p50=float(rows[v]["p50"]),
            p95=float(rows[v]["p95"]),
            p99=float(rows[v]["p99"]),
        )
        for v in variants
        if v in rows
    )


def _segments(
    table: IbisTable,
    columns: Sequence[str],
    chosen: Sequence[ABMetric],
    tt_metrics: Mapping[str, Any],
    pre_users: IbisTable | None,
    control: str,
    treatment: str,
    alpha: float,
    correction: str,
    success_dwell: float,
    reformulation_window: float,
    notes: list[str],
) -> list[SegmentEffect]:
    """Every metric per segment value; corrected per metric across all segment values."""
    ibis = _ibis()
    cells: list[tuple[str, Any, Any, Any]] = []  # column, value, control and treatment aggr.
    for column in columns:
        distinct = table.select(column).distinct().to_pyarrow().column(column).to_pylist()
        values: list[Any] = [v for v in distinct if v is not None]
        if len(values) > MAX_SEGMENT_VALUES:
            raise PolicyError(
                f"segment column {column!r} has {len(values)} values (at most "
                f"{MAX_SEGMENT_VALUES}): segments are a few groups, such as device or "
                "is_new_user"
            )
        values.sort(key=lambda v: (str(type(v)), v))
        if len(values) < len(distinct):
            values.append(None)  # requests without a value: a level of their own, last
        users = _user_table(table, [column], success_dwell, reformulation_window)
        if pre_users is not None:
            users = _with_pre(users, pre_users)
        # One integer cell per (value, variant): one query gives every cell's aggregates.
        code = ibis.cases(
            *(
                (users.segment_0.isnull() if v is None else users.segment_0 == v, k)
                for k, v in enumerate(values)
            ),
            else_=-1,
        )
        cell = code * 2 + (users.variant != control).cast("int64")
        users = users.mutate(_cell=cell)
        aggregates = _aggregates(users, "_cell", tt_metrics.values())
        for k, value in enumerate(values):
            cells.append((column, value, aggregates.get(2 * k), aggregates.get(2 * k + 1)))
    results: list[SegmentEffect] = []
    cuped = pre_users is not None
    for metric in chosen:
        raw: list[_Analysed] = []
        kept: list[tuple[str, Any, int, int, bool]] = []
        for column, value, c_aggr, t_aggr in cells:
            shown = _shown(value)
            n_c = 0 if c_aggr is None else int(c_aggr.count())
            n_t = 0 if t_aggr is None else int(t_aggr.count())
            if n_c < 2 or n_t < 2:
                if metric is chosen[0]:
                    notes.append(
                        f"segment {column}={shown}: {n_c} control and {n_t} treatment users; "
                        "at least 2 of each are needed, so it is not analysed"
                    )
                continue
            tt_metric = tt_metrics[metric.name]
            without_pre = cuped and not _has_pre_period(metric, c_aggr, t_aggr)
            if without_pre:
                # New users have no pre-period: a covariate that is 0 for every user of the
                # segment makes CUPED's ratio 0/0. The segment is analysed without it.
                tt_metric = _tea_metric(metric, False, alpha, tt_metric.power)
                if metric is chosen[0]:
                    notes.append(
                        f"segment {column}={shown}: its users have no pre-period data, so it "
                        "is analysed without CUPED"
                    )
            raw.append(_analyse(metric, tt_metric, c_aggr, t_aggr))
            kept.append((column, value, n_c, n_t, without_pre))
        if not raw:
            continue
        effects = _corrected([metric] * len(raw), raw, alpha, correction, cuped)
        for (column, value, n_c, n_t, without_pre), effect in zip(kept, effects, strict=True):
            final = replace(effect, cuped=False) if without_pre else effect
            results.append(
                SegmentEffect(column, _shown(value), n_c, n_t, final, missing=value is None)
            )
    return results


def _has_pre_period(metric: ABMetric, control: Any, treatment: Any) -> bool:
    """Whether the users of both variants in a cell have pre-period values of the metric's
    denominator (CUPED needs a covariate that is not 0 for all of them)."""
    column = f"pre_{metric.denominator}"
    return all(float(aggr.mean(column)) > 0 for aggr in (control, treatment))


def _shown(value: Any) -> str:
    if value is None:
        return MISSING_SEGMENT
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
