"""A/B analysis (rankmeter.online.ab): per-user metrics in the engine, tea-tasting's statistics
checked against tea-tasting called directly and against hand computations, the sample-ratio
check, a planted segment regression and bad input."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import numpy as np
import pytest
import scipy.stats

pytest.importorskip("ibis")
pytest.importorskip("tea_tasting")

import ibis
import pyarrow as pa
import tea_tasting as tt
from _ab_logs import impressions, random_log, table
from _logs_support import assert_same_results

from rankmeter.errors import FormatError, MetricError, PolicyError
from rankmeter.online import AB_METRICS, ab, user_metrics

# ----------------------------------------------------------------------------------------------
# Per-user metrics


def _hand_log() -> pa.Table:
    """Four users; every per-user value below is counted by hand from these rows."""
    rows: list[dict[str, Any]] = []
    # user a (control): a success, a reformulation, an abandonment, a no-result request, and
    # an abandoned request in a second session.
    rows += impressions("a", "control", "r1", clicks=[True, False, False], query="q1",
                        latency=100)  # fmt: skip
    rows += impressions("a", "control", "r2", clicks=[False, False], seconds=30, query="q2",
                        latency=200)  # fmt: skip
    rows += impressions("a", "control", "r3", clicks=[], seconds=200, query="q2", latency=0)
    rows += impressions("a", "control", "r4", clicks=[False], seconds=1000, query="q1",
                        session="a-s2", latency=300)  # fmt: skip
    # user b (treatment): the same query again 10 s later is not a reformulation; a 10 s
    # click is no success, a 31 s one is.
    rows += impressions("b", "treatment", "r5", clicks=[True, False], query="q1", latency=50,
                        dwell=10_000)  # fmt: skip
    rows += impressions("b", "treatment", "r6", clicks=[True], seconds=10, query="q1",
                        latency=50, dwell=31_000)  # fmt: skip
    # user c (treatment): a click of exactly 30 s is a success.
    rows += impressions("c", "treatment", "r7", clicks=[False, True], latency=70, dwell=30_000)
    rows += impressions("d", "control", "r8", clicks=[True], latency=10)
    return table(rows)


HAND_USERS = {
    # impressions, clicks, requests, result_requests, abandoned, no_result, reformulated,
    # latency_ms_sum, sessions, successful_sessions
    "a": (6, 1, 4, 3, 2, 1, 1, 600.0, 2, 1),
    "b": (3, 2, 2, 2, 0, 0, 0, 100.0, 1, 1),
    "c": (2, 1, 1, 1, 0, 0, 0, 70.0, 1, 1),
    "d": (1, 1, 1, 1, 0, 0, 0, 10.0, 1, 1),
}


def test_user_metrics_are_an_engine_expression_counted_as_by_hand() -> None:
    users = user_metrics(_hand_log())
    assert isinstance(users, ibis.expr.types.Table)  # nothing computed in Python yet
    got = {row.pop("user_id"): row for row in users.to_pyarrow().to_pylist()}
    columns = [
        "impressions", "clicks", "requests", "result_requests", "abandoned_requests",
        "no_result_requests", "reformulated_requests", "latency_ms_sum", "sessions",
        "successful_sessions",
    ]  # fmt: skip
    assert {u: tuple(got[u][c] for c in columns) for u in got} == HAND_USERS
    assert {u: got[u]["variant"] for u in got} == {
        "a": "control", "b": "treatment", "c": "treatment", "d": "control"
    }  # fmt: skip


def test_success_dwell_and_reformulation_window_are_parameters() -> None:
    users = user_metrics(_hand_log(), success_dwell=5.0, reformulation_window=20.0)
    got = {row["user_id"]: row for row in users.to_pyarrow().to_pylist()}
    # b's 10 s click is a success at 5 s; a's next request 30 s later is no reformulation at 20 s
    assert got["b"]["successful_sessions"] == 1
    assert got["a"]["reformulated_requests"] == 0
    with pytest.raises(PolicyError, match=r"success_dwell=-1 must be a number >= 0 \(seconds\)"):
        user_metrics(_hand_log(), success_dwell=-1)


# ----------------------------------------------------------------------------------------------
# The delta method and CUPED: tea-tasting's numbers, and a hand computation

# Per-user (clicks, impressions) of a tiny experiment, and of its pre-period.
CONTROL = [(1, 4), (2, 5), (0, 3)]
TREATMENT = [(3, 4), (2, 6), (4, 5)]
PRE_CONTROL = [(1, 5), (2, 4), (0, 2)]
PRE_TREATMENT = [(2, 4), (1, 5), (3, 6)]


def _log_of(control: list[tuple[int, int]], treatment: list[tuple[int, int]]) -> pa.Table:
    rows: list[dict[str, Any]] = []
    for variant, users in (("control", control), ("treatment", treatment)):
        for i, (clicks, shown) in enumerate(users):
            marks = [k < clicks for k in range(shown)]
            rows += impressions(f"{variant}{i}", variant, f"{variant}{i}-r", clicks=marks)
    return table(rows)


def _linearized(x: np.ndarray, y: np.ndarray, mx: float, my: float) -> np.ndarray:
    """The delta method's linearisation of mean(x)/mean(y) around the means given."""
    return (x - (mx / my) * y) / my


def _welch(d: float, var_c: float, n_c: int, var_t: float, n_t: int, alpha: float) -> tuple:
    se2_c, se2_t = var_c / n_c, var_t / n_t
    se = math.sqrt(se2_c + se2_t)
    df = (se2_c + se2_t) ** 2 / (se2_c**2 / (n_c - 1) + se2_t**2 / (n_t - 1))
    half = scipy.stats.t.ppf(1 - alpha / 2, df) * se
    return d - half, d + half, 2 * scipy.stats.t.sf(abs(d) / se, df)


def test_delta_method_ctr_equals_tea_tasting_and_a_hand_computation() -> None:
    log = _log_of(CONTROL, TREATMENT)
    effect = ab(log, metrics=["ctr"]).metrics[0]

    # tea-tasting called directly on the same per-user table
    direct = tt.Experiment(ctr=tt.RatioOfMeans("clicks", "impressions")).analyze(
        user_metrics(log), control="control"
    )["ctr"]
    assert effect.control == pytest.approx(direct.control, rel=1e-12)
    assert effect.treatment == pytest.approx(direct.treatment, rel=1e-12)
    assert effect.difference_low == pytest.approx(direct.effect_size_ci_lower, rel=1e-12)
    assert effect.difference_high == pytest.approx(direct.effect_size_ci_upper, rel=1e-12)
    assert effect.relative == pytest.approx(direct.rel_effect_size, rel=1e-12)
    assert effect.relative_low == pytest.approx(direct.rel_effect_size_ci_lower, rel=1e-12)
    assert effect.pvalue == pytest.approx(direct.pvalue, rel=1e-12)

    # by hand: ratio of means, delta-method variance, Welch's t
    c = np.array(CONTROL, dtype=float)
    t = np.array(TREATMENT, dtype=float)
    r_c = c[:, 0].mean() / c[:, 1].mean()
    r_t = t[:, 0].mean() / t[:, 1].mean()
    assert (r_c, r_t) == (pytest.approx(3 / 12), pytest.approx(9 / 15))
    var_c = _linearized(c[:, 0], c[:, 1], c[:, 0].mean(), c[:, 1].mean()).var(ddof=1)
    var_t = _linearized(t[:, 0], t[:, 1], t[:, 0].mean(), t[:, 1].mean()).var(ddof=1)
    # the same variance written out as the delta method's formula
    mx, my = c[:, 0].mean(), c[:, 1].mean()
    formula = (
        c[:, 0].var(ddof=1) / my**2
        - 2 * mx * np.cov(c[:, 0], c[:, 1])[0, 1] / my**3
        + mx**2 * c[:, 1].var(ddof=1) / my**4
    )
    assert var_c == pytest.approx(formula)
    low, high, p = _welch(r_t - r_c, var_c, 3, var_t, 3, 0.05)
    assert effect.difference == pytest.approx(r_t - r_c)
    assert (effect.difference_low, effect.difference_high) == (
        pytest.approx(low), pytest.approx(high)
    )  # fmt: skip
    assert effect.pvalue == pytest.approx(p)
    assert effect.cuped is False


def test_cuped_equals_tea_tasting_and_a_hand_computation() -> None:
    log = _log_of(CONTROL, TREATMENT)
    pre = _log_of(PRE_CONTROL, PRE_TREATMENT)
    result = ab(log, pre=pre, metrics=["ctr"])
    effect = result.metrics[0]
    assert result.cuped and effect.cuped

    # tea-tasting directly: the per-user table with the pre-period's values as covariates
    # both as in-memory Ibis tables, so that they join on one backend
    users = user_metrics(ibis.memtable(log))
    pre_users = user_metrics(ibis.memtable(pre)).select(
        "user_id", pre_clicks="clicks", pre_impressions="impressions"
    )
    joined = users.join(pre_users, "user_id")
    direct = tt.Experiment(
        ctr=tt.RatioOfMeans("clicks", "impressions", "pre_clicks", "pre_impressions")
    ).analyze(joined, control="control")["ctr"]
    assert effect.control == pytest.approx(direct.control, rel=1e-12)
    assert effect.treatment == pytest.approx(direct.treatment, rel=1e-12)
    assert effect.difference_low == pytest.approx(direct.effect_size_ci_lower, rel=1e-12)
    assert effect.pvalue == pytest.approx(direct.pvalue, rel=1e-12)

    # by hand: theta from the pooled users, each mean adjusted, the residual variances
    c, t = np.array(CONTROL, float), np.array(TREATMENT, float)
    pc, pt = np.array(PRE_CONTROL, float), np.array(PRE_TREATMENT, float)
    both, pre_both = np.vstack([c, t]), np.vstack([pc, pt])
    m = both.mean(axis=0)
    pm = pre_both.mean(axis=0)
    y_all = _linearized(both[:, 0], both[:, 1], *m)
    x_all = _linearized(pre_both[:, 0], pre_both[:, 1], *pm)
    theta = np.cov(y_all, x_all)[0, 1] / x_all.var(ddof=1)
    pre_ratio_all = pm[0] / pm[1]

    def adjusted(g: np.ndarray, pg: np.ndarray) -> tuple[float, float]:
        gm, pgm = g.mean(axis=0), pg.mean(axis=0)
        y = _linearized(g[:, 0], g[:, 1], *gm)
        x = _linearized(pg[:, 0], pg[:, 1], *pgm)
        mean = gm[0] / gm[1] - theta * (pgm[0] / pgm[1] - pre_ratio_all)
        var = y.var(ddof=1) + theta**2 * x.var(ddof=1) - 2 * theta * np.cov(y, x)[0, 1]
        return mean, var

    mean_c, var_c = adjusted(c, pc)
    mean_t, var_t = adjusted(t, pt)
    low, high, p = _welch(mean_t - mean_c, var_c, 3, var_t, 3, 0.05)
    assert (effect.control, effect.treatment) == (pytest.approx(mean_c), pytest.approx(mean_t))
    assert (effect.difference_low, effect.difference_high) == (
        pytest.approx(low), pytest.approx(high)
    )  # fmt: skip
    assert effect.pvalue == pytest.approx(p)


def test_cuped_narrows_the_interval_when_the_pre_period_predicts() -> None:
    log = random_log(400, seed=3)
    # the pre-period: each user's first page, part of the period itself, so it predicts
    first_pages = log.filter(pa.compute.match_substring(log["request_id"], "-r0"))
    plain = ab(log, metrics=["ctr"]).metrics[0]
    cuped = ab(log, pre=first_pages, metrics=["ctr"]).metrics[0]
    assert cuped.difference_high - cuped.difference_low < (
        plain.difference_high - plain.difference_low
    )
    assert cuped.mde < plain.mde


def test_minimum_detectable_effect_is_tea_tastings_power_analysis() -> None:
    log = random_log(300, seed=5)
    effect = ab(log, metrics=["ctr"], power=0.9).metrics[0]
    direct = tt.Experiment(ctr=tt.RatioOfMeans("clicks", "impressions", power=0.9)).solve_power(
        user_metrics(log), "rel_effect_size"
    )["ctr"][0]
    assert effect.mde == pytest.approx(direct.effect_size, rel=1e-9)
    assert effect.mde_relative == pytest.approx(direct.rel_effect_size, rel=1e-9)


def test_every_metric_is_reported_with_its_direction() -> None:
    result = ab(random_log(200, seed=1))
    assert [m.metric for m in result.metrics] == list(AB_METRICS)
    directions = {m.metric: m.higher_is_better for m in result.metrics}
    assert directions == {
        "ctr": True, "abandonment": False, "success": True, "reformulation": False,
        "no_result": False, "latency": False,
    }  # fmt: skip
    # the adjusted p-values are Holm's over the six metrics
    from statsmodels.stats.multitest import multipletests

    pvalues = [m.pvalue for m in result.metrics]
    assert all(0 < p <= 1 for p in pvalues)
    expected = multipletests(pvalues, method="holm")[1]
    assert [m.adjusted for m in result.metrics] == pytest.approx(list(expected))
    assert {c.variant: c.users for c in result.counts} == {
        "control": result.srm.control_users, "treatment": result.srm.treatment_users
    }  # fmt: skip


def test_latency_quantiles_are_exact_over_requests() -> None:
    log = random_log(150, seed=2)
    result = ab(log, metrics=["latency"])
    per_request: dict[str, dict[str, float]] = {}
    for row in log.select(["variant", "request_id", "latency_ms"]).to_pylist():
        per_request.setdefault(row["variant"], {})[row["request_id"]] = row["latency_ms"]
    for q in result.latency:
        values = np.array(list(per_request[q.variant].values()))
        assert q.requests == values.size
        assert (q.p50, q.p95, q.p99) == pytest.approx(tuple(np.quantile(values, [0.5, 0.95, 0.99])))


# ----------------------------------------------------------------------------------------------
# Sample ratio mismatch


def test_sample_ratio_mismatch_is_caught_on_a_60_40_split() -> None:
    result = ab(random_log(2000, seed=7, treatment_share=0.6, pages=1, shown=1), metrics=["ctr"])
    assert (result.srm.control_users, result.srm.treatment_users) == (800, 1200)
    assert result.srm.failed
    direct = tt.SampleRatio().analyze(
        pa.table({"variant": ["control"] * 800 + ["treatment"] * 1200}),
        "control", "treatment", variant="variant",
    )  # fmt: skip
    assert result.srm.pvalue == pytest.approx(direct.pvalue)
    assert result.warnings and result.warnings[0].startswith("SAMPLE RATIO MISMATCH")
    assert result.to_dict()["warnings"] == list(result.warnings)


def test_a_balanced_split_passes_and_an_intended_ratio_is_honoured() -> None:
    balanced = ab(random_log(1000, seed=7, pages=1, shown=1), metrics=["ctr"])
    assert not balanced.srm.failed and balanced.warnings == ()
    intended = ab(
        random_log(2000, seed=7, treatment_share=0.6, pages=1, shown=1),
        metrics=["ctr"],
        expected_ratio=1.5,
    )
    assert not intended.srm.failed


# ----------------------------------------------------------------------------------------------
# Segments


def test_a_planted_segment_regression_is_flagged() -> None:
    # The treatment helps returning users (CTR 0.2 -> 0.3) and hurts new ones (0.2 -> 0.1).
    rates = {
        ("control", True): 0.2, ("control", False): 0.2,
        ("treatment", True): 0.1, ("treatment", False): 0.3,
    }  # fmt: skip
    result = ab(random_log(1000, seed=11, ctr=rates), segments=["is_new_user", "device"])
    flagged = {(s.column, s.value, s.effect.metric) for s in result.worse_segments}
    assert ("is_new_user", "true", "ctr") in flagged
    assert not any(m == "ctr" and c == "is_new_user" and v == "false" for c, v, m in flagged)
    returning = next(
        s for s in result.segments
        if (s.column, s.value, s.effect.metric) == ("is_new_user", "false", "ctr")
    )  # fmt: skip
    assert returning.effect.verdict == "better"
    # corrected per metric across the four segment values (Holm)
    from statsmodels.stats.multitest import multipletests

    ctr_cells = [s for s in result.segments if s.effect.metric == "ctr"]
    assert len(ctr_cells) == 4
    expected = multipletests([s.effect.pvalue for s in ctr_cells], method="holm")[1]
    assert [s.effect.adjusted for s in ctr_cells] == pytest.approx(list(expected))
    assert result.to_dict()["segments"][0]["column"] in {"is_new_user", "device"}


def test_segment_numbers_equal_the_analysis_of_the_segment_alone() -> None:
    log = random_log(300, seed=13)
    result = ab(log, segments=["device"], metrics=["ctr", "success"])
    mobile = log.filter(pa.compute.equal(log["device"], "mobile"))
    alone = ab(mobile, metrics=["ctr", "success"])
    cell = {s.effect.metric: s.effect for s in result.segments if s.value == "mobile"}
    for effect in alone.metrics:
        assert cell[effect.metric].pvalue == pytest.approx(effect.pvalue, rel=1e-9)
        assert cell[effect.metric].difference == pytest.approx(effect.difference, rel=1e-9)


# ----------------------------------------------------------------------------------------------
# Bad input: one line each


def test_control_is_chosen_by_name() -> None:
    log = random_log(100, seed=1, variants=("A", "B"))
    assert ab(log, metrics=["ctr"]).control == "A"  # no "control": the first in sort order
    assert ab(log, metrics=["ctr"], control="B").treatment == "A"
    with pytest.raises(
        PolicyError, match=r"^control='C' is not a variant of the log; its variants: 'A', 'B'$"
    ):
        ab(log, control="C")


def test_one_variant_is_refused() -> None:
    log = random_log(20, seed=1, treatment_share=0.0)
    with pytest.raises(FormatError, match=r"exactly two variants; the log has 1: 'control'$"):
        ab(log)


def test_an_unknown_metric_is_refused_with_the_choices() -> None:
    with pytest.raises(
        MetricError,
        match=r"^unknown A/B metric 'ctrr'; choose from ctr, abandonment, success, "
        r"reformulation, no_result, latency$",
    ):
        ab(random_log(20, seed=1), metrics=["ctrr"])


def test_an_unknown_segment_column_is_refused_with_the_choices() -> None:
    with pytest.raises(
        PolicyError,
        match=r"segment column 'country' is not in the log <table>; its segment columns: "
        r"is_new_user, device$",
    ):
        ab(random_log(20, seed=1), segments=["country"])


def test_a_user_in_both_variants_is_refused() -> None:
    rows = impressions("u1", "control", "r1", clicks=[True]) + impressions(
        "u1", "treatment", "r2", clicks=[False]
    )
    for u in (2, 3):
        rows += impressions(f"u{u}", "control", f"r{u}c") + impressions(
            f"v{u}", "treatment", f"r{u}t"
        )
    # the log check names the row (rankmeter.online.logs) ...
    with pytest.raises(FormatError, match=r"^<table>:2: user 'u1' is in variant 'treatment'"):
        ab(table(rows))
    # ... and without it the analysis still refuses
    with pytest.raises(
        FormatError,
        match=r"^<table>: user 'u1' is in more than one variant; the user is the "
        r"randomisation unit, so each user must see one variant$",
    ):
        ab(table(rows), validate=False)


def test_a_missing_column_is_refused() -> None:
    log = random_log(20, seed=1).drop_columns(["clicked"])
    # read_log's message (rankmeter.online.logs), one line naming the column
    with pytest.raises(FormatError, match=r"^<table>: missing column clicked: a search log"):
        ab(log)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"alpha": 1.5}, r"alpha=1.5 must be a number strictly between 0 and 1"),
        ({"correction": "sidak"}, r"correction='sidak' must be one of"),
        ({"power": 0}, r"power=0 must be a number strictly between 0 and 1"),
        ({"engine": "postgres"}, r"engine='postgres' must be one of 'duckdb', 'spark'"),
    ],
)
def test_bad_parameters_are_one_line(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        ab(random_log(20, seed=1), **kwargs)


def _simulated(**kwargs: object) -> tuple[pa.Table, pa.Table]:
    from rankmeter.online import simulate_log

    qrels = {f"q{i}": {f"d{i}-1": 2, f"d{i}-2": 0} for i in range(20)}
    runs = {
        "control": {f"q{i}": {f"d{i}-2": 2.0, f"d{i}-1": 1.0} for i in range(20)},
        "treatment": {f"q{i}": {f"d{i}-1": 2.0, f"d{i}-2": 1.0} for i in range(20)},
    }
    log = simulate_log(qrels, runs, users=800, seed=3, **kwargs)  # type: ignore[arg-type]
    pre = simulate_log(qrels, runs, users=800, seed=3, pre_period=True, **kwargs)  # type: ignore[arg-type]
    return log, pre


def test_a_segment_without_pre_period_is_analysed_without_cuped() -> None:
    # New users have no pre-period: their CUPED covariate is 0 for all of them, which made
    # every effect in the is_new_user=true segment undefined (NaN) when --pre was given.
    log, pre = _simulated(segment_effects={"new": 0.5})
    result = ab(log, metrics=["ctr"], segments=["is_new_user"], pre=pre)
    by_value = {s.value: s for s in result.segments}
    new, returning = by_value["true"].effect, by_value["false"].effect
    assert math.isfinite(new.difference) and math.isfinite(new.pvalue)
    assert (new.cuped, returning.cuped) == (False, True)
    plain = ab(log, metrics=["ctr"], segments=["is_new_user"])
    assert new.difference == pytest.approx(
        {s.value: s for s in plain.segments}["true"].effect.difference
    )
    assert any("is_new_user=true: its users have no pre-period data" in n for n in result.notes)


def test_variant_counts_whatever_the_metrics() -> None:
    # The counts came from the metrics' aggregates: with only ctr asked, requests and
    # sessions read 0.
    log, _ = _simulated()
    everything = ab(log).counts
    assert ab(log, metrics=["ctr"]).counts == everything
    assert all(c.requests > 0 and c.sessions > 0 for c in everything)


def test_a_metric_without_variance_is_not_tested() -> None:
    # No request returned nothing in either variant: there is no p-value, and the verdict said
    # "no significant difference" as if a test had found nothing.
    log, _ = _simulated()
    result = ab(log, metrics=["no_result", "ctr"])
    no_result, ctr = result.metrics
    assert math.isnan(no_result.pvalue) and no_result.verdict == "not tested"
    assert math.isfinite(ctr.pvalue) and ctr.verdict != "not tested"


# ----------------------------------------------------------------------------------------------
# Several experiments in one log


def _with_experiment(log: pa.Table, experiment: str | None, prefix: str = "") -> pa.Table:
    """``log`` tagged with one experiment id (null for None), its users, sessions and
    requests renamed with ``prefix`` so that two logs can share one file."""
    for column in ("user_id", "session_id", "request_id"):
        renamed = pa.array([prefix + v for v in log[column].to_pylist()])
        log = log.set_column(log.schema.get_field_index(column), column, renamed)
    return log.append_column("experiment_id", pa.array([experiment] * log.num_rows, pa.string()))


def _two_experiments() -> tuple[pa.Table, pa.Table, pa.Table]:
    """exp-a (CTR up in the treatment), exp-b (no effect) and both pooled in one log."""
    rates = {(v, n): r for v, r in (("control", 0.2), ("treatment", 0.3)) for n in (True, False)}
    first = _with_experiment(random_log(300, seed=21, ctr=rates), "exp-a", "a")
    second = _with_experiment(random_log(200, seed=22), "exp-b", "b")
    return first, second, pa.concat_tables([first, second])


def test_several_experiments_are_refused_until_one_is_chosen() -> None:
    first, second, both = _two_experiments()
    # they were pooled silently: 500 users, exp-a's effect diluted by exp-b
    with pytest.raises(
        PolicyError,
        match=rf"^the log <table> holds 2 experiments: 'exp-a' \({first.num_rows:,} rows\), "
        rf"'exp-b' \({second.num_rows:,} rows\); choose one with --experiment ID "
        r"\(experiment= in Python\)$",
    ):
        ab(both, metrics=["ctr"])
    chosen = ab(both, metrics=["ctr"], experiment="exp-a")
    alone = ab(first, metrics=["ctr"])
    # a log of one experiment id names it without being told
    assert chosen.experiment == alone.experiment == "exp-a"
    assert chosen.srm == alone.srm and chosen.counts == alone.counts
    assert chosen.metrics[0].difference == pytest.approx(alone.metrics[0].difference, rel=1e-12)
    assert chosen.to_dict()["experiment"] == "exp-a"


def test_an_unknown_experiment_is_refused_with_the_known_ones() -> None:
    _, _, both = _two_experiments()
    with pytest.raises(
        PolicyError,
        match=r"^experiment='exp-c' is not in the log <table>; its experiments: 'exp-a' "
        r"\(\d[\d,]* rows\), 'exp-b' \(\d[\d,]* rows\)$",
    ):
        ab(both, experiment="exp-c")
    untagged = random_log(40, seed=1)
    with pytest.raises(
        PolicyError, match=r"^experiment='exp-a' is not in the log <table>; it has no experiment_id"
    ):
        ab(untagged, experiment="exp-a")


def test_a_log_of_one_experiment_or_none_is_analysed_as_before() -> None:
    log = random_log(100, seed=3)
    plain = ab(log, metrics=["ctr"])
    tagged = ab(_with_experiment(log, "exp-a"), metrics=["ctr"])
    null = ab(_with_experiment(log, None), metrics=["ctr"])
    # the same analysis, floats up to DuckDB's order of summation
    assert_same_results(tagged.metrics, plain.metrics)
    assert_same_results(null.metrics, plain.metrics)


def test_the_experiment_list_is_cut_after_a_few() -> None:
    parts = [_with_experiment(random_log(4, seed=i), f"e{i}", f"p{i}-") for i in range(8)]
    with pytest.raises(PolicyError, match=r"'e\d' \(\d+ rows\), and 3 more; choose one"):
        ab(pa.concat_tables(parts))


def test_the_pre_period_follows_the_chosen_experiment() -> None:
    first, _, both = _two_experiments()
    pre_first = first.filter(pa.compute.match_substring(first["request_id"], "-r0"))
    # the pre-period of exp-a also holds a day earlier rows of exp-b for some of the same
    # users: with exp-a chosen, only its rows count. (The log check refuses a user in two
    # variants across experiments, so this part runs without it.)
    other = _with_experiment(random_log(50, seed=9), "exp-b", "a")
    earlier = pa.compute.subtract(other["event_ts"], pa.scalar(dt.timedelta(days=1)))
    other = other.set_column(other.schema.get_field_index("event_ts"), "event_ts", earlier)
    pre_both = pa.concat_tables([pre_first, other])
    expected = ab(first, pre=pre_first, metrics=["ctr"]).metrics[0]
    got = ab(both, pre=pre_both, metrics=["ctr"], experiment="exp-a", validate=False).metrics[0]
    untagged_both = pre_both.drop_columns(["experiment_id"])
    polluted = ab(first, pre=untagged_both, metrics=["ctr"], validate=False).metrics[0]
    assert polluted.pvalue != pytest.approx(expected.pvalue, rel=1e-6)
    assert got.difference == pytest.approx(expected.difference, rel=1e-12)
    assert got.pvalue == pytest.approx(expected.pvalue, rel=1e-12)
    # a pre-period without experiment ids is used whole
    untagged = pre_first.drop_columns(["experiment_id"])
    whole = ab(both, pre=untagged, metrics=["ctr"], experiment="exp-a").metrics[0]
    assert whole.pvalue == pytest.approx(expected.pvalue, rel=1e-12)
    # a pre-period with several experiments and none chosen is refused, naming the pre-period
    with pytest.raises(PolicyError, match=r"^the pre-period log <pre-period table> holds 2 "):
        ab(first, pre=pre_both, metrics=["ctr"], validate=False)
    # a pre-period tagged with one id of its own (the simulator's "<id>-pre") is used whole
    own = pre_first.set_column(
        pre_first.schema.get_field_index("experiment_id"),
        "experiment_id",
        pa.array(["exp-a-pre"] * pre_first.num_rows),
    )
    tagged = ab(both, pre=own, metrics=["ctr"], experiment="exp-a").metrics[0]
    assert tagged.pvalue == pytest.approx(expected.pvalue, rel=1e-12)
    # a pre-period with several experiment ids, none the chosen one
    third = _with_experiment(random_log(50, seed=10), "exp-c", "c")
    with pytest.raises(
        PolicyError,
        match=r"^experiment='exp-a' is not in the pre-period log <pre-period table>; its "
        r"experiments: 'exp-(b|c)' \(\d+ rows\), 'exp-(b|c)'",
    ):
        ab(both, pre=pa.concat_tables([other, third]), experiment="exp-a", validate=False)


# ----------------------------------------------------------------------------------------------
# CUPED: the raw means beside the adjusted ones; a pre-period from before the experiment


def _shifted(log: pa.Table, delta: dt.timedelta) -> pa.Table:
    moved = pa.compute.add(log["event_ts"], pa.scalar(delta))
    return log.set_column(log.schema.get_field_index("event_ts"), "event_ts", moved)


def test_cuped_keeps_the_raw_means_beside_the_adjusted_ones() -> None:
    log = _log_of(CONTROL, TREATMENT)
    pre = _shifted(_log_of(PRE_CONTROL, PRE_TREATMENT), dt.timedelta(days=-7))
    effect = ab(log, pre=pre, metrics=["ctr"]).metrics[0]
    plain = ab(log, metrics=["ctr"]).metrics[0]
    # the raw means are the ratios of the per-user sums, as without CUPED
    raw_c = sum(c for c, _ in CONTROL) / sum(n for _, n in CONTROL)
    raw_t = sum(c for c, _ in TREATMENT) / sum(n for _, n in TREATMENT)
    assert (effect.control_raw, effect.treatment_raw) == (
        pytest.approx(raw_c),
        pytest.approx(raw_t),
    )
    assert (plain.control, plain.treatment) == (pytest.approx(raw_c), pytest.approx(raw_t))
    assert (plain.control_raw, plain.treatment_raw) == (plain.control, plain.treatment)
    assert effect.control != pytest.approx(raw_c)  # the adjusted mean moved
    data = effect.to_dict()
    assert (data["control_raw"], data["treatment_raw"]) == (
        effect.control_raw,
        effect.treatment_raw,
    )


def test_a_pre_period_that_overlaps_a_users_experiment_is_refused() -> None:
    log = _log_of(CONTROL, TREATMENT)
    # the pre-period's events an hour into the experiment: its covariate saw the treatment
    late = _shifted(_log_of(PRE_CONTROL, PRE_TREATMENT), dt.timedelta(hours=1))
    with pytest.raises(
        FormatError,
        match=r"^<pre-period table>: user 'control0' has pre-period events up to "
        r"2026-01-01 01:00:00\+00:00, after their first request in the experiment at "
        r"2026-01-01 00:00:00\+00:00 \(<table>\); CUPED needs a covariate from before the "
        r"treatment: give a pre-period that ends before the experiment starts$",
    ):
        ab(log, pre=late, metrics=["ctr"])


def test_staggered_enrolment_may_overlap_overall_and_is_noted() -> None:
    # Each user's pre-period ends before that user's own first request, though the last
    # pre-period event comes after the experiment's first: users entered it one by one.
    log = random_log(100, seed=3)
    first_pages = log.filter(pa.compute.match_substring(log["request_id"], "-r0"))
    pre = _shifted(first_pages, dt.timedelta(seconds=-5))
    result = ab(log, pre=pre, metrics=["ctr"])
    assert result.cuped
    note = next(n for n in result.notes if n.startswith("the pre-period"))
    assert note.startswith(
        "the pre-period runs to 2026-01-02 03:30:15+00:00, after the "
        "experiment's first request at 2026-01-01 00:00:20+00:00"
    )
    assert "(staggered enrolment)" in note
    before = ab(log, pre=_shifted(pre, dt.timedelta(days=-2)), metrics=["ctr"])
    assert not any(n.startswith("the pre-period") for n in before.notes)


# ----------------------------------------------------------------------------------------------
# Segments: a missing value is a level of its own


def test_users_without_a_segment_value_are_a_missing_level() -> None:
    log = random_log(400, seed=8)
    users = log["user_id"].to_pylist()
    # a third of the users' device was not logged
    devices = log["device"].to_pylist()
    device = [None if int(u[1:]) % 3 == 0 else d for u, d in zip(users, devices, strict=True)]
    log = log.set_column(log.schema.get_field_index("device"), "device", pa.array(device))
    result = ab(log, metrics=["ctr"], segments=["device"])
    by_value = {s.value: s for s in result.segments}
    assert set(by_value) == {"desktop", "mobile", "(missing)"}
    missing = by_value["(missing)"]
    assert missing.missing and not by_value["mobile"].missing
    # every user is in exactly one level: nobody was dropped
    counted = sum(s.control_users + s.treatment_users for s in result.segments)
    assert counted == 400
    # the level's numbers are those of its users analysed alone
    alone = ab(log.filter(pa.compute.is_null(log["device"])), metrics=["ctr"]).metrics[0]
    assert missing.effect.difference == pytest.approx(alone.difference, rel=1e-9)
    assert missing.to_dict()["value"] is None and missing.to_dict()["missing"] is True
    assert [s.value for s in result.segments][-1] == "(missing)"  # after the values


def test_a_log_of_one_experiment_names_it() -> None:
    tagged = _with_experiment(random_log(40, seed=3), "exp-only")
    assert ab(tagged, metrics=["ctr"]).experiment == "exp-only"
    assert ab(random_log(40, seed=3), metrics=["ctr"]).experiment is None


def test_a_schema_column_is_not_a_segment() -> None:
    with pytest.raises(
        PolicyError, match=r"^'user_id' is a column of the log schema, not a segment column; "
    ):
        ab(random_log(40, seed=3), metrics=["ctr"], segments=["user_id"])
