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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from rankmeter import _validate
from rankmeter.errors import FormatError, PolicyError
from rankmeter.online.ab_metrics import AB_METRICS, ABMetric, IbisTable, metric_names
from rankmeter.online.ab_results import (
    MISSING_SEGMENT,
    ABResult,
    LatencyQuantiles,
    MetricEffect,
    SampleRatioCheck,
    SegmentEffect,
)
from rankmeter.online.ab_users import (
    _as_table,
    _check_one_variant_per_user,
    _check_pre_period_precedes,
    _ibis,
    _one_experiment,
    _pre_period,
    _requests,
    _segment_columns,
    _user_table,
    _with_pre,
    user_metrics,
)
from rankmeter.online.logs import VariantCounts

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
    names = metric_names(metrics)
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
