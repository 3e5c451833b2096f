"""All pairs of several systems (issue 13, "All systems at once"): the two-way ANOVA and Tukey's
HSD against statsmodels and a hand computation, the randomised Tukey HSD's family-wise error
under a simulated null, and the compact letter display on hand-made cases."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats as scipy_stats

from rankmeter.errors import PolicyError
from rankmeter.stats import (
    ALL_PAIRS_METHODS,
    all_pairs,
    compact_letters,
    paired_pvalues,
    two_way_anova,
)


def _statsmodels_fit(values: np.ndarray):  # type: ignore[no-untyped-def]
    pd = pytest.importorskip("pandas")
    smf = pytest.importorskip("statsmodels.formula.api")
    n, k = values.shape
    frame = pd.DataFrame(
        {
            "score": values.ravel(),
            "system": np.tile([f"s{j}" for j in range(k)], n),
            "query": np.repeat([f"q{i}" for i in range(n)], k),
        }
    )
    return smf.ols("score ~ C(system) + C(query)", frame).fit()


def _random_scores(n: int, k: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    difficulty = rng.uniform(0, 0.7, size=(n, 1))
    return np.clip(difficulty + rng.normal(0, 0.15, size=(n, k)) + np.linspace(0, 0.1, k), 0, 1)


@pytest.mark.parametrize(("n", "k", "seed"), [(5, 3, 0), (30, 4, 1), (12, 6, 2), (50, 2, 3)])
def test_two_way_anova_is_statsmodels_anova_lm(n: int, k: int, seed: int) -> None:
    from statsmodels.stats.anova import anova_lm

    values = _random_scores(n, k, seed)
    expected = anova_lm(_statsmodels_fit(values))
    table = two_way_anova(values)
    systems, queries, residual = (expected.loc[row] for row in expected.index)
    assert (table.df_systems, table.df_queries, table.df_residual) == (
        systems["df"],
        queries["df"],
        residual["df"],
    )
    assert table.ss_systems == pytest.approx(systems["sum_sq"], rel=1e-9)
    assert table.ss_queries == pytest.approx(queries["sum_sq"], rel=1e-9)
    assert table.ss_residual == pytest.approx(residual["sum_sq"], rel=1e-9)
    assert table.ms_residual == pytest.approx(residual["mean_sq"], rel=1e-9)
    assert table.f_systems == pytest.approx(systems["F"], rel=1e-9)
    assert table.p_systems == pytest.approx(systems["PR(>F)"], rel=1e-7, abs=1e-300)
    assert table.f_queries == pytest.approx(queries["F"], rel=1e-9)
    assert table.p_queries == pytest.approx(queries["PR(>F)"], rel=1e-7, abs=1e-300)


@pytest.mark.parametrize(("n", "k", "seed"), [(8, 3, 4), (40, 5, 5)])
def test_tukey_hsd_is_the_studentized_range_of_the_statsmodels_two_way_model(
    n: int, k: int, seed: int
) -> None:
    """Each pair's contrast from statsmodels' fitted two-way model (t of the difference of two
    system coefficients), times sqrt(2), is Tukey's q on the model's residual df."""
    values = _random_scores(n, k, seed)
    fit = _statsmodels_fit(values)
    result = all_pairs(values, [f"s{j}" for j in range(k)])
    assert result.anova.df_residual == fit.df_resid
    for pair in result.pairs:
        a, b = int(pair.first[1:]), int(pair.second[1:])
        contrast = np.zeros(len(fit.params))
        for j, sign in ((a, 1.0), (b, -1.0)):
            if j:  # s0 is the reference level
                contrast[list(fit.params.index).index(f"C(system)[T.s{j}]")] = sign
        t = fit.t_test(contrast)
        assert pair.difference == pytest.approx(float(t.effect[0]), rel=1e-9, abs=1e-12)
        q = abs(float(t.tvalue[0][0])) * math.sqrt(2)
        assert pair.statistic == pytest.approx(q, rel=1e-9)
        p = scipy_stats.studentized_range.sf(q, k, fit.df_resid)
        assert pair.p_value == pytest.approx(p, rel=1e-7, abs=1e-12)
        half = scipy_stats.studentized_range.ppf(0.95, k, fit.df_resid) * float(t.sd[0][0])
        assert (pair.low, pair.high) == pytest.approx(
            (pair.difference - half / math.sqrt(2), pair.difference + half / math.sqrt(2))
        )


def test_two_way_anova_and_tukey_by_hand() -> None:
    """A 3 x 3 matrix worked by hand, in exact fractions.

    x = [[1, 2, 6], [3, 4, 8], [2, 3, 4]]: grand mean 33/9 = 11/3; row means 3, 5, 3; column
    means 2, 3, 6. SS_sys = 3 * (25/9 + 4/9 + 49/9) = 26; SS_query = 3 * (4/9 + 16/9 + 4/9)
    = 8; SS_total = 159 - 9 * (11/3)^2 = 38, so SS_res = 38 - 26 - 8 = 4 on (3-1)(3-1) = 4 df:
    MS_res = 1, F_sys = (26/2) / 1 = 13. Tukey: sqrt(MS_res / n) = sqrt(1/3), so q = |diff| *
    sqrt(3): 1.73 (a-b), 6.93 (a-c), 5.20 (b-c); q(0.95; 3, 4) = 5.04, HSD = 5.04 / sqrt(3) =
    2.91: c differs from a and from b, a and b do not differ.
    """
    x = [[1, 2, 6], [3, 4, 8], [2, 3, 4]]
    cells = [Fraction(v) for row in x for v in row]
    grand = sum(cells) / 9
    assert grand == Fraction(11, 3) and sum((c - grand) ** 2 for c in cells) == 38
    table = two_way_anova(x)
    assert table.ss_systems == pytest.approx(26)
    assert table.ss_queries == pytest.approx(8)
    assert table.ss_residual == pytest.approx(4)
    assert (table.df_systems, table.df_queries, table.df_residual) == (2, 2, 4)
    assert table.ms_residual == pytest.approx(1)
    assert table.f_systems == pytest.approx(13)
    assert table.f_queries == pytest.approx(4)
    # P(F(2, 4) > f) = (1 + 2 f / 4)^(-2), in closed form for 2 numerator df.
    assert table.p_systems == pytest.approx((1 + 13 / 2) ** -2)
    assert table.p_queries == pytest.approx((1 + 4 / 2) ** -2)
    result = all_pairs(x, ["a", "b", "c"])
    assert result.means == pytest.approx((2, 3, 6))
    expected_q = {
        ("a", "b"): math.sqrt(3),
        ("a", "c"): 4 * math.sqrt(3),
        ("b", "c"): 3 * math.sqrt(3),
    }
    for pair in result.pairs:
        q = expected_q[(pair.first, pair.second)]
        assert pair.statistic == pytest.approx(q)
        assert pair.p_value == pytest.approx(scipy_stats.studentized_range.sf(q, 3, 4))
    critical = scipy_stats.studentized_range.ppf(0.95, 3, 4)
    assert critical == pytest.approx(5.04, abs=0.005)
    assert result.hsd == pytest.approx(critical / math.sqrt(3))
    ac = result.pair("a", "c")
    assert (ac.low, ac.high) == pytest.approx((-4 - result.hsd, -4 + result.hsd))
    assert [p.significant for p in result.pairs] == [False, True, True]
    assert result.letters == ("b", "b", "a")


def test_two_systems_the_anova_is_the_paired_t_test() -> None:
    """With two systems F is the square of the paired t statistic, and Tukey's p the t-test's."""
    values = _random_scores(25, 2, 7)
    diffs = values[:, 1] - values[:, 0]
    t = scipy_stats.ttest_rel(values[:, 1], values[:, 0])
    table = two_way_anova(values)
    assert table.f_systems == pytest.approx(t.statistic**2, rel=1e-9)
    assert table.p_systems == pytest.approx(t.pvalue, rel=1e-9)
    assert all_pairs(values).pairs[0].p_value == pytest.approx(t.pvalue, rel=1e-6)
    assert float(paired_pvalues(diffs, "t")[0]) == pytest.approx(t.pvalue, rel=1e-9)


def test_the_randomised_tukey_hsd_counts_permutations_as_the_randomization_test_does() -> None:
    """p = (count + 1) / (B + 1): a difference no permutation reaches has p = 1 / (B + 1); a
    difference of 0 is reached by every permutation (p = 1); the same seed gives the same
    p-values, another seed others."""
    values = np.array([[0.1 * i, 0.1 * i, 0.1 * i + 5.0] for i in range(12)])
    result = all_pairs(values, ["a", "b", "c"], method="randomised-tukey", resamples=999, seed=3)
    ab, ac, bc = result.pairs
    assert ab.p_value == 1.0 and not ab.significant
    # A permutation reaches a range of 5 only when c's value stays in c on every query.
    assert ac.p_value == bc.p_value == pytest.approx(1 / 1000)
    assert (result.resamples, result.seed) == (999, 3)
    noisy = _random_scores(15, 4, 8)
    one = all_pairs(noisy, method="randomised-tukey", resamples=500, seed=1)
    again = all_pairs(noisy, method="randomised-tukey", resamples=500, seed=1)
    assert [p.p_value for p in one.pairs] == [p.p_value for p in again.pairs]
    other = all_pairs(noisy, method="randomised-tukey", resamples=500, seed=2)
    assert [p.p_value for p in one.pairs] != [p.p_value for p in other.pairs]
    for p in one.pairs:
        assert p.significant == (p.p_value < 0.05)
        assert (1 / 501) <= p.p_value <= 1.0 and math.isnan(p.low) and math.isnan(p.high)
        assert p.significant == (abs(p.difference) >= one.hsd - 1e-12)


def _family_wise_errors(simulations: int, seed: int) -> tuple[float, float, float]:
    """Shares of simulated null experiments (4 systems, 15 queries: query difficulty plus
    skewed noise, the systems interchangeable) in which any of the 6 pairs is called
    significant: by the randomised Tukey HSD, and by 6 uncorrected paired t-tests; and the
    binomial standard error of a rate of 0.05."""
    rng = np.random.default_rng(seed)
    tukey = uncorrected = 0
    pairs = [(a, b) for a in range(4) for b in range(a + 1, 4)]
    for s in range(simulations):
        values = rng.uniform(0, 0.6, size=(15, 1)) + rng.exponential(0.1, size=(15, 4))
        result = all_pairs(values, method="randomised-tukey", resamples=199, seed=s)
        tukey += any(p.significant for p in result.pairs)
        diffs = np.column_stack([values[:, b] - values[:, a] for a, b in pairs])
        uncorrected += bool((paired_pvalues(diffs, "t") < 0.05).any())
    return tukey / simulations, uncorrected / simulations, math.sqrt(0.05 * 0.95 / simulations)


def test_the_randomised_tukey_hsd_holds_the_family_wise_error_under_the_null() -> None:
    """Under the null hypothesis the chance of any false difference among the 6 pairs is about
    alpha: with 199 permutations a pair is significant when at most 8 of them reach it, which
    happens with probability 9/200 = 0.045 under exchangeability. The tolerance is 3.5 binomial
    standard errors (600 experiments: +- 0.031)."""
    rate, uncorrected, error = _family_wise_errors(600, 11)
    assert abs(rate - 0.045) <= 3.5 * error, rate
    # The same experiments tested pair by pair without a correction find a false difference
    # far more often than alpha: the simulation tells a family-wise test from one that is not.
    assert uncorrected > 0.05 + 3.5 * error, uncorrected


def test_letters_on_hand_made_cases() -> None:
    # Nothing significant: one letter for all.
    assert compact_letters(["x", "y", "z"], [0.1, 0.3, 0.2], []) == {"x": "a", "y": "a", "z": "a"}
    # Everything significant: one letter each, a for the best mean.
    every = [("x", "y"), ("x", "z"), ("y", "z")]
    assert compact_letters(["x", "y", "z"], [0.1, 0.3, 0.2], every) == {
        "x": "c",
        "y": "a",
        "z": "b",
    }
    # A chain: A > B > C > D; A differs from C and D, B from D.
    assert compact_letters(
        ["A", "B", "C", "D"], [0.4, 0.3, 0.2, 0.1], [("A", "C"), ("A", "D"), ("B", "D")]
    ) == {"A": "a", "B": "ab", "C": "bc", "D": "c"}
    # Not contiguous: B and C differ, D shares with both, A (best) differs from D only.
    letters = compact_letters(["A", "B", "C", "D"], [0.4, 0.3, 0.2, 0.1], [("B", "C"), ("A", "D")])
    assert letters == {"A": "ab", "B": "a", "C": "b", "D": "c"} or _check_display(
        letters, {("B", "C"), ("A", "D")}
    )


def _check_display(letters: dict[str, str], significant: set[tuple[str, str]]) -> bool:
    """Two systems share a letter exactly when they are not significantly different."""
    names = sorted(letters)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            share = bool(set(letters[a]) & set(letters[b]))
            differ = (a, b) in significant or (b, a) in significant
            assert share != differ, (a, b, letters)
    return True


@pytest.mark.parametrize("seed", range(30))
def test_letters_share_exactly_when_not_significant(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 8))
    names = [f"s{j}" for j in range(k)]
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :] if rng.random() < 0.4]
    letters = compact_letters(names, list(rng.random(k)), pairs)
    assert _check_display(letters, set(pairs))
    assert all(letters[s] for s in names)


def test_the_letters_of_an_analysis_follow_its_significant_pairs() -> None:
    values = _random_scores(40, 5, 12)
    values[:, 4] += 0.2
    for method in ALL_PAIRS_METHODS:
        result = all_pairs(values, list("abcde"), method=method, resamples=999)
        significant = {(p.first, p.second) for p in result.pairs if p.significant}
        assert significant, method
        assert _check_display(dict(zip(result.systems, result.letters, strict=True)), significant)
        assert "a" in result.letters[4]  # the best system has the first letter
        data = result.to_dict()
        assert data["letters"]["e"] == result.letters[4] and len(data["pairs"]) == 10


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        ([("x", "w")], r"significant pair names 'w', which is not a system"),
        ([("x", "x")], r"significant pair \('x', 'x'\) names one system twice"),
    ],
)
def test_letters_refuse_pairs_that_are_not_pairs_of_systems(
    pairs: list[tuple[str, str]], message: str
) -> None:
    with pytest.raises(PolicyError, match=message):
        compact_letters(["x", "y"], [0.1, 0.2], pairs)
    with pytest.raises(PolicyError, match=r"means has 1 values for 2 systems"):
        compact_letters(["x", "y"], [0.1], [])


def test_a_pair_reads_in_either_order() -> None:
    result = all_pairs(_random_scores(10, 3, 13), ["a", "b", "c"])
    ab, ba = result.pair("a", "b"), result.pair("b", "a")
    assert ba.difference == -ab.difference and (ba.low, ba.high) == (-ab.high, -ab.low)
    assert ba.p_value == ab.p_value
    with pytest.raises(PolicyError, match=r"no pair 'a', 'z': the systems are 'a', 'b', 'c'"):
        result.pair("a", "z")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"scores": [[0.1, 0.2, 0.3]]}, r"scores has shape \(1, 3\); an analysis of all pairs"),
        ({"scores": [0.1, 0.2]}, r"scores has shape \(2, 1\); an analysis of all pairs needs"),
        ({"systems": ["a", "b"]}, r"systems names 2 systems; scores has 3 columns"),
        ({"systems": ["a", "b", "a"]}, r"systems names 'a' twice"),
        ({"method": "anova"}, r"method='anova' must be one of 'tukey', 'randomised-tukey'"),
        (
            {"method": "randomised-tukey", "resamples": 19},
            r"resamples=19 must be an integer from 20 to 10,000,000 \(random permutations; fewer cannot",
        ),
        ({"alpha": 1.5}, r"alpha=1.5 must be"),
        ({"scores": [[0.1, float("nan")], [0.2, 0.3]]}, r"scores contains nan at row 0"),
    ],
)
def test_bad_arguments_are_one_clear_error(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"scores": [[0.1, 0.2, 0.3], [0.2, 0.3, 0.5]], **kwargs}
    with pytest.raises(PolicyError, match=message):
        all_pairs(**arguments)  # type: ignore[arg-type]


def test_no_residual_variance() -> None:
    """Systems that differ by a constant on every query: the differences are certain (p 0);
    identical systems are not different (p 1)."""
    base = np.array([0.1, 0.5, 0.3, 0.9])
    values = np.column_stack([base, base, base + 0.25])
    result = all_pairs(values, ["a", "b", "c"])
    assert result.anova.ms_residual == pytest.approx(0, abs=1e-30)
    ab, ac, _ = result.pairs
    assert ab.p_value == pytest.approx(1.0) and not ab.significant
    assert ac.p_value == pytest.approx(0.0, abs=1e-12) and ac.significant


@pytest.mark.parametrize("method", ALL_PAIRS_METHODS)
def test_query_difficulty_and_order_change_nothing(method: str) -> None:
    """The two-way model takes each query's level out: adding a constant per query (an easier
    or harder query for every system), or listing the queries or the systems in another order,
    leaves every pair's difference, p-value and letter as it was."""
    values = _random_scores(20, 4, 14)
    names = ["a", "b", "c", "d"]
    base = all_pairs(values, names, method=method, resamples=300)
    shifted = values + np.random.default_rng(1).uniform(-0.5, 0.5, size=(20, 1))
    rows = np.random.default_rng(2).permutation(20)
    columns = [2, 0, 3, 1]
    same_draws = all_pairs(shifted, names, method=method, resamples=300)
    assert [p.p_value for p in same_draws.pairs] == pytest.approx([p.p_value for p in base.pairs])
    for other in (
        same_draws,
        all_pairs(values[rows], names, method=method, resamples=300),
        all_pairs(values[:, columns], [names[j] for j in columns], method=method, resamples=300),
    ):
        letters = dict(zip(other.systems, other.letters, strict=True))
        assert letters == dict(zip(base.systems, base.letters, strict=True))
        for p in base.pairs:
            q = other.pair(p.first, p.second)
            assert q.difference == pytest.approx(p.difference, abs=1e-12)
            if method == "tukey":
                assert q.p_value == pytest.approx(p.p_value, rel=1e-9)
    assert same_draws.anova.ss_residual == pytest.approx(base.anova.ss_residual)
    assert same_draws.anova.ss_queries != pytest.approx(base.anova.ss_queries)
