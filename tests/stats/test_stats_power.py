"""Power and sample size (issue 13, item 1): the paired t-test's numbers equal statsmodels'
TTestPower; the randomization test's simulated ones agree with the t-test on normal data
within their Monte-Carlo error and with a direct simulation; bad input is one clear line."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import scipy.stats

from rankmeter.errors import PolicyError
from rankmeter.stats import (
    PowerAnalysis,
    detectable_difference,
    paired_pvalues,
    power,
    power_sentence,
)

statsmodels_power = pytest.importorskip(
    "statsmodels.stats.power", reason="the reference needs statsmodels (rankmeter[judge])"
)

# (n, effect, sd, alpha, target power): small and large n, small and large effects, levels.
CASES = [
    (25, 0.05, 0.2, 0.05, 0.8),
    (76, 0.031, 0.12, 0.05, 0.8),
    (225, 0.01, 0.15, 0.01, 0.9),
    (8, 0.3, 0.25, 0.05, 0.5),
    (40, -0.04, 0.1, 0.1, 0.95),
    (1000, 0.002, 0.08, 0.05, 0.8),
]


def _normal(n: int, mean: float, sd: float, seed: int) -> np.ndarray:
    """n values whose sample mean and standard deviation are exactly ``mean`` and ``sd``."""
    raw = np.random.default_rng(seed).standard_normal(n)
    return mean + sd * (raw - raw.mean()) / raw.std(ddof=1)


def _solver_slack(function: Any, answer: float, target: float) -> float:
    """1e-6, or how far statsmodels' ``answer`` can be from the exact root given how far its
    power misses the target (residual over the slope, twice)."""
    step = 1e-6 * max(1.0, abs(answer))
    slope = abs(function(answer + step) - function(answer - step)) / (2 * step)
    return max(1e-6, 2 * abs(function(answer) - target) / slope)


@pytest.mark.parametrize(("n", "effect", "sd", "alpha", "target"), CASES)
def test_t_test_numbers_equal_statsmodels(
    n: int, effect: float, sd: float, alpha: float, target: float
) -> None:
    reference = statsmodels_power.TTestPower()
    d = effect / sd
    result = power(effect=effect, sd=sd, n=n, alpha=alpha, power=target, test="t")
    assert isinstance(result, PowerAnalysis)
    expected_power = reference.power(effect_size=d, nobs=n, alpha=alpha)
    assert result.power_at_n == pytest.approx(expected_power, abs=1e-9)
    # The sample size and the detectable effect are exact roots of statsmodels' own power
    # equation (its power there is the target to 1e-9) ...
    at_needed = reference.power(effect_size=abs(d), nobs=result.n_required, alpha=alpha)
    assert at_needed == pytest.approx(target, abs=1e-9)
    at_detectable = reference.power(effect_size=result.detectable_effect_size, nobs=n, alpha=alpha)
    assert at_detectable == pytest.approx(target, abs=1e-9)
    # ... and equal statsmodels' solve_power to 1e-6, up to the error of its root finder
    # (brentq_expanding stops early: at n = 1000 its power at its own answer misses the
    # target by 1.7e-5, which is 2e-6 in d).
    expected_n = reference.solve_power(effect_size=abs(d), alpha=alpha, power=target)
    assert result.n_required == pytest.approx(
        expected_n,
        abs=_solver_slack(lambda x: reference.power(abs(d), x, alpha), expected_n, target),
    )
    assert result.queries_needed == math.ceil(result.n_required)
    expected_d = reference.solve_power(nobs=n, alpha=alpha, power=target)
    assert result.detectable_effect_size == pytest.approx(
        expected_d, abs=_solver_slack(lambda x: reference.power(x, n, alpha), expected_d, target)
    )
    assert result.detectable_difference == pytest.approx(result.detectable_effect_size * sd)


def test_observed_differences_give_the_same_numbers_as_their_mean_and_sd() -> None:
    diffs = _normal(50, 0.03, 0.11, seed=3)
    observed = power(diffs, test="t")
    stated = power(effect=0.03, sd=0.11, n=50, test="t")
    assert (observed.n, observed.effect, observed.sd) == pytest.approx((50, 0.03, 0.11))
    assert observed.power_at_n == pytest.approx(stated.power_at_n, abs=1e-12)
    assert observed.n_required == pytest.approx(stated.n_required, rel=1e-9)
    assert observed.detectable_difference == pytest.approx(stated.detectable_difference)
    reference = statsmodels_power.TTestPower()
    expected = reference.power(effect_size=diffs.mean() / diffs.std(ddof=1), nobs=50, alpha=0.05)
    assert observed.power_at_n == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize(
    ("correction", "family", "per_test"),
    [
        ("none", 4, 0.05),
        ("bonferroni", 4, 0.0125),
        ("holm", 4, 0.0125),
        ("bh", 5, 0.01),
    ],
)
def test_a_correction_tests_each_comparison_at_alpha_over_m(
    correction: str, family: int, per_test: float
) -> None:
    result = power(effect=0.03, sd=0.1, n=80, correction=correction, comparisons=family, test="t")
    assert result.alpha_per_test == pytest.approx(per_test)
    reference = statsmodels_power.TTestPower()
    assert result.power_at_n == pytest.approx(
        reference.power(effect_size=0.3, nobs=80, alpha=per_test), abs=1e-9
    )
    assert reference.power(0.3, result.n_required, per_test) == pytest.approx(0.8, abs=1e-9)
    expected = reference.solve_power(effect_size=0.3, alpha=per_test, power=0.8)
    slack = _solver_slack(lambda x: reference.power(0.3, x, per_test), expected, 0.8)
    assert result.n_required == pytest.approx(expected, abs=slack)


def test_analytic_power_matches_a_direct_simulation_of_t_tests() -> None:
    # 20,000 normal query sets of n = 30 at d = 0.45, each tested by scipy's t-test.
    n, effect, sd, draws = 30, 0.045, 0.1, 20_000
    rng = np.random.default_rng(11)
    samples = effect + sd * rng.standard_normal((draws, n))
    rejected = scipy.stats.ttest_1samp(samples, 0.0, axis=1).pvalue < 0.05
    simulated = rejected.mean()
    error = math.sqrt(simulated * (1 - simulated) / draws)
    analytic = power(effect=effect, sd=sd, n=n, test="t").power_at_n
    assert abs(simulated - analytic) < 4 * error


def test_zero_effect_has_power_alpha_and_no_sample_size() -> None:
    result = power(effect=0.0, sd=0.1, n=50, test="t")
    assert result.power_at_n == pytest.approx(0.05, abs=1e-12)
    assert result.queries_needed is None and math.isinf(result.n_required)
    assert result.detectable_difference > 0


def test_a_huge_effect_needs_few_queries_but_at_least_two() -> None:
    reference = statsmodels_power.TTestPower()
    for effect in (0.3, 0.6, 5.0):
        result = power(effect=effect, sd=0.1, n=10, test="t")
        needed = result.queries_needed
        assert needed is not None and needed >= 2
        assert _t_power_of(effect / 0.1, needed) >= 0.8
        assert needed == 2 or _t_power_of(effect / 0.1, needed - 1) < 0.8
    assert reference.power(effect_size=3.0, nobs=4, alpha=0.05) == pytest.approx(
        _t_power_of(3.0, 4), abs=1e-9
    )


def _t_power_of(d: float, n: int) -> float:
    """Two-sided t-test power by integrating over the chi-square of the variance (no nct)."""
    from scipy import integrate

    df = n - 1
    critical = scipy.stats.t.isf(0.025, df)

    def rejected(v: float) -> float:
        scale = critical * math.sqrt(v / df)
        tails = scipy.stats.norm.sf(scale - d * math.sqrt(n)) + scipy.stats.norm.cdf(
            -scale - d * math.sqrt(n)
        )
        return float(tails * scipy.stats.chi2.pdf(v, df))

    return float(integrate.quad(rejected, 0, np.inf, epsabs=1e-13, epsrel=1e-12, limit=200)[0])


# --- the randomization test, by simulation ------------------------------------------------


def test_simulated_randomization_power_agrees_with_the_t_test_on_normal_data() -> None:
    n, effect, sd = 40, 0.04, 0.1
    diffs = _normal(n, effect, sd, seed=5)
    t = power(diffs, test="t")
    simulated = power(diffs, test="randomization", simulations=2000, resamples=1000, seed=1)
    assert simulated.simulations == 2000 and simulated.resamples == 1000
    assert simulated.power_error is not None
    expected_error = math.sqrt(simulated.power_at_n * (1 - simulated.power_at_n) / 2000)
    assert simulated.power_error == pytest.approx(expected_error)
    # Within four Monte-Carlo errors of the analytic value (the randomization test and the
    # t-test have the same power on normal data, up to O(1/n)).
    assert abs(simulated.power_at_n - t.power_at_n) < 4 * simulated.power_error
    assert simulated.queries_needed is not None and t.queries_needed is not None
    assert abs(simulated.queries_needed - t.queries_needed) <= max(3, 0.1 * t.queries_needed)
    assert simulated.detectable_difference == pytest.approx(t.detectable_difference, rel=0.08)


def test_simulated_power_matches_a_direct_simulation_with_the_randomization_test() -> None:
    # Directly: draw normal query sets with the stated mean and sd, test each one with
    # rankmeter's paired randomization test, count the rejections.
    n, effect, sd, draws = 20, 0.05, 0.1, 600
    rng = np.random.default_rng(23)
    samples = effect + sd * rng.standard_normal((n, draws))
    direct = float((paired_pvalues(samples, resamples=999, seed=4) < 0.05).mean())
    direct_error = math.sqrt(direct * (1 - direct) / draws)
    stated = power(
        effect=effect, sd=sd, n=n, test="randomization", simulations=2000, resamples=999, seed=2
    )
    assert stated.power_error is not None
    combined = math.hypot(direct_error, stated.power_error)
    assert abs(stated.power_at_n - direct) < 4 * combined


def test_simulation_is_reproducible_and_depends_on_the_seed() -> None:
    diffs = _normal(30, 0.03, 0.1, seed=8)
    one = power(diffs, test="randomization", simulations=300, resamples=200, seed=3)
    again = power(diffs, test="randomization", simulations=300, resamples=200, seed=3)
    other = power(diffs, test="randomization", simulations=300, resamples=200, seed=4)
    assert one.to_dict() == again.to_dict()
    assert one.to_dict() != other.to_dict()


def test_simulation_resamples_the_observed_shape() -> None:
    # Skewed differences (most queries unchanged, a few improved a lot): the randomization
    # test's simulated power follows the shape, not a normal model of the same mean and sd.
    diffs = np.array([0.0] * 36 + [0.3, 0.4, 0.25, 0.35])
    t = power(diffs, test="t")
    simulated = power(diffs, test="randomization", simulations=1000, resamples=500, seed=0)
    assert 0 < simulated.power_at_n < 1
    assert simulated.power_error is not None
    assert t.power_error is None and t.simulations is None


def test_too_few_sign_flips_for_the_corrected_alpha_are_refused() -> None:
    with pytest.raises(
        PolicyError,
        match=r"resamples=99 sign flips cannot give a p-value below 0\.005 \(alpha 0\.05 over 10 "
        r"comparisons\): the smallest is 1/100; use resamples >= 2,000 \(10 / 0\.005\)",
    ):
        power(
            effect=0.1,
            sd=0.1,
            n=20,
            test="randomization",
            resamples=99,
            correction="bonferroni",
            comparisons=10,
        )


# --- input checks ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"effect": 0.1, "sd": 0.1, "n": 1}, r"n=1 must be an integer >= 2 \(queries"),
        (
            {"effect": 0.1, "sd": 0.1, "n": 20, "alpha": 1.0},
            r"alpha=1\.0 must be a number strictly "
            r"between 0 and 1 \(the significance level\)",
        ),
        ({"effect": 0.1, "sd": 0.1, "n": 20, "alpha": 0}, r"alpha=0 must be a number strictly"),
        (
            {"effect": 0.1, "sd": 0.1, "n": 20, "power": 1},
            r"power=1 must be a number strictly "
            r"between 0 and 1 \(the target power",
        ),
        ({"effect": 0.1, "sd": 0.1, "n": 20, "power": -0.2}, r"power=-0\.2 must be a number"),
        (
            {"effect": 0.1, "sd": 0.0, "n": 20},
            r"sd=0\.0 must be a number > 0 \(the standard "
            r"deviation of the per-query differences\)",
        ),
        ({"effect": float("nan"), "sd": 0.1, "n": 20}, r"effect=nan must be a finite number"),
        ({"effect": 0.1, "n": 20}, r"give sd= with effect= and n= \(or the observed differences\)"),
        (
            {"effect": 0.1, "sd": 0.1},
            r"give n= with effect= and sd= \(or the observed differences\)",
        ),
        ({}, r"give the per-query differences, or effect=, sd= and n="),
        (
            {"effect": 0.1, "sd": 0.1, "n": 20, "test": "wilcoxon"},
            r"test='wilcoxon' must be one of "
            r"'t', 'randomization'",
        ),
        (
            {"effect": 0.1, "sd": 0.1, "n": 20, "correction": "sidak"},
            r"correction='sidak' must be "
            r"one of 'holm', 'bonferroni', 'bh', 'none'",
        ),
        (
            {"effect": 0.1, "sd": 0.1, "n": 20, "comparisons": 0},
            r"comparisons=0 must be an integer "
            r">= 1",
        ),
        (
            {"effect": 0.1, "sd": 0.1, "n": 20, "test": "randomization", "simulations": 5},
            r"simulations=5 must be an integer from 100 to 1,000,000",
        ),
    ],
)
def test_bad_arguments_are_one_clear_line(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(PolicyError, match=message) as raised:
        power(**kwargs)  # type: ignore[arg-type]
    assert "\n" not in str(raised.value)


def test_too_few_differences_are_refused() -> None:
    with pytest.raises(
        PolicyError, match=r"differences has 1 value; power needs at least 2 queries"
    ):
        power([0.1])


def test_differences_without_spread_are_refused() -> None:
    with pytest.raises(
        PolicyError,
        match=r"the 5 differences have no spread \(every one is 0\.1\): power is undefined; "
        r"give sd= to state a spread",
    ):
        power([0.1] * 5)


def test_differences_must_be_finite_numbers() -> None:
    with pytest.raises(PolicyError, match=r"differences contains nan at row 1"):
        power([0.1, float("nan"), 0.2])
    with pytest.raises(PolicyError, match=r"differences has shape \(2, 2\); expected"):
        power([[0.1, 0.2], [0.3, 0.4]])


# --- the one-line summary for compare reports ----------------------------------------------


def test_detectable_difference_is_the_t_tests_mde() -> None:
    diffs = _normal(76, 0.02, 0.12, seed=1)
    reference = statsmodels_power.TTestPower()
    expected = reference.solve_power(nobs=76, alpha=0.05, power=0.8) * 0.12
    assert detectable_difference(diffs) == pytest.approx(expected, abs=1e-6)
    corrected = detectable_difference(diffs, alpha=0.05, power=0.9, comparisons=5)
    expected = reference.solve_power(nobs=76, alpha=0.01, power=0.9) * 0.12
    assert corrected == pytest.approx(expected, abs=1e-6)
    assert detectable_difference(diffs, comparisons=5, correction="none") == pytest.approx(
        detectable_difference(diffs)
    )


def test_power_sentence() -> None:
    assert (
        power_sentence(76, 0.03149, "nDCG@10", 0.8)
        == "with 76 queries a difference of 0.031 nDCG@10 is detectable at 80% power"
    )
    assert power_sentence(1, 0.5, "AP", 0.9) == (
        "with 1 query a difference of 0.500 AP is detectable at 90% power"
    )


def test_to_dict_is_plain_values() -> None:
    result = power(effect=0.03, sd=0.1, n=40, test="t")
    data = result.to_dict()
    assert data["test"] == "t" and data["n"] == 40 and data["queries_needed"] > 40
    assert all(isinstance(v, (int, float, str, type(None))) for v in data.values())


def _within(seconds: int) -> Any:
    """A context that fails the test (instead of hanging the suite) past ``seconds``."""
    import contextlib
    import signal

    @contextlib.contextmanager
    def guard() -> Any:
        def stop(signum: int, frame: Any) -> None:
            raise TimeoutError(f"still running after {seconds} s")

        previous = signal.signal(signal.SIGALRM, stop)
        signal.alarm(seconds)
        try:
            yield
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)

    return guard()


@pytest.mark.parametrize(("n", "comparisons"), [(3, 1), (5, 1), (6, 2)])
def test_simulated_power_with_too_few_queries_for_any_significance_ends(
    n: int, comparisons: int
) -> None:
    # With n queries the exact randomization test's smallest p-value is 2 / 2^n (3 queries:
    # 0.25): no difference, however large, is significant at alpha / comparisons. The search for
    # the detectable difference once grew it without end (to inf, then NaN) and never returned.
    diffs = np.linspace(-0.2, 0.6, n)
    with _within(60):
        result = power(
            diffs,
            test="randomization",
            simulations=100,
            resamples=1000,
            correction="bonferroni",
            comparisons=comparisons,
        )
    assert result.detectable_difference == math.inf
    assert result.detectable_effect_size == math.inf
    assert result.power_at_n == 0.0
    assert result.queries_needed is not None and result.queries_needed > n


def test_simulated_power_reaches_the_target_just_above_the_exact_tests_floor() -> None:
    # 6 queries: the smallest p-value is 2/64 = 0.031 < 0.05, so a large enough difference is
    # found (every simulated query then improves): the detectable difference is finite.
    diffs = np.linspace(-0.2, 0.6, 6)
    with _within(60):
        result = power(diffs, test="randomization", simulations=100, resamples=1000)
    assert math.isfinite(result.detectable_difference) and result.detectable_difference > 0


@pytest.mark.parametrize(
    ("target", "alpha", "correction", "comparisons"),
    [(0.05, 0.05, "none", 1), (0.5, 0.9, "none", 1), (0.02, 0.1, "holm", 4)],
)
def test_a_target_power_not_above_alpha_is_refused(
    target: float, alpha: float, correction: str, comparisons: int
) -> None:
    # A new user's trial (issue 13): --power 0.05 gave "queries needed 2, detectable 0.0000";
    # any test that rejects at random reaches a power of alpha with no queries at all.
    with pytest.raises(PolicyError, match=r"is not above the alpha each test runs at"):
        power(
            effect=0.03,
            sd=0.12,
            n=76,
            power=target,
            alpha=alpha,
            correction=correction,
            comparisons=comparisons,
        )
