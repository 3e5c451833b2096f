"""Stability of the conclusion (issue 13, item 3): on hand-made per-query matrices whose answer
is known, the bootstrap keeps a dominant system's order always and gives a pair tied on the
full set each order about half the time; random halves of two systems that differ by chance
alone agree about half the time; Kendall's tau equals scipy's; seeds reproduce; bad input is
one clear line."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from rankmeter.errors import PolicyError
from rankmeter.stats import query_stability
from rankmeter.stats._resampling import bootstrap_weights
from rankmeter.stats._stability import _tau_b


def _dominant(n: int = 50, seed: int = 1) -> np.ndarray:
    """Three systems, each better than the next on every query."""
    base = np.random.default_rng(seed).uniform(0.0, 0.3, n)
    return np.column_stack([base + 0.6, base + 0.3, base])


def test_a_dominant_system_keeps_its_order_always() -> None:
    result = query_stability(_dominant(), ["best", "mid", "worst"], resamples=500, splits=300)
    assert result.order == ("best", "mid", "worst")
    for pair in result.pairs:
        assert (pair.ahead, pair.tied, pair.behind, pair.kept) == (1.0, 0.0, 0.0, 1.0)
        assert pair.split_agreement == 1.0
    assert result.same_order == 1.0 and result.split_same_order == 1.0
    assert result.tau_mean == 1.0 and result.split_tau_mean == 1.0
    assert all(tau == 1.0 for _, tau in result.tau_quantiles)
    assert result.tau_undefined == 0 and result.half == 25


def test_the_order_is_best_first_whatever_the_columns_order() -> None:
    scores = _dominant()[:, [2, 0, 1]]
    result = query_stability(scores, ["worst", "best", "mid"], resamples=100, splits=100)
    assert result.order == ("best", "mid", "worst")
    assert result.systems == ("worst", "best", "mid")
    assert [(p.first, p.second) for p in result.pairs] == [
        ("best", "mid"),
        ("best", "worst"),
        ("mid", "worst"),
    ]
    assert result.pair("worst", "best").difference == pytest.approx(0.6)


def test_a_pair_tied_on_the_full_set_goes_either_way_about_half_the_time() -> None:
    # The same scores, swapped on half the queries: equal means, symmetric differences.
    rng = np.random.default_rng(7)
    a = rng.uniform(0, 1, 200)
    b = rng.uniform(0, 1, 200)
    scores = np.column_stack([np.concatenate([a, b]), np.concatenate([b, a])])
    result = query_stability(scores, ["x", "y"], resamples=4_000, splits=2_000, seed=3)
    pair = result.pairs[0]
    assert pair.full_tie and pair.difference == 0.0
    assert (pair.first, pair.second) == ("x", "y")  # on a tie, the one given first
    assert pair.ahead == pytest.approx(0.5, abs=0.03)
    assert pair.behind == pytest.approx(0.5, abs=0.03)
    assert pair.kept == pair.tied < 0.01  # a tie is rarely kept exactly
    assert np.isnan(result.tau_mean) and result.tau_undefined == 4_000  # the full order ties


def test_random_halves_of_systems_equal_in_distribution_agree_half_the_time() -> None:
    # Independent draws from one distribution: any order is chance, and over many such query
    # sets two disjoint halves agree on it no more often than a coin (on one query set, more
    # often the larger its chance difference: the halves' differences average to it).
    rng = np.random.default_rng(11)
    results = [
        query_stability(rng.uniform(0, 1, (60, 2)), resamples=100, splits=400, seed=i)
        for i in range(150)
    ]
    assert np.mean([r.split_same_order for r in results]) == pytest.approx(0.5, abs=0.04)
    assert all(r.pairs[0].split_agreement == r.split_same_order for r in results)
    assert np.mean([r.split_tau_mean for r in results]) == pytest.approx(0.0, abs=0.08)


def test_halves_of_a_pair_tied_on_the_full_set_always_disagree() -> None:
    # With equal means on all queries the two halves' differences are opposite: never agree.
    scores = np.array([[0.5, 0.1], [0.1, 0.5], [0.4, 0.2], [0.2, 0.4], [0.9, 0.3], [0.3, 0.9]])
    result = query_stability(scores, resamples=100, splits=200)
    # They agree only by both tying: 2 of the 20 halves ({+0.4, +0.2, -0.6} and its
    # complement) sum to 0, within the rounding tolerance.
    assert result.pairs[0].full_tie
    assert result.pairs[0].split_agreement == pytest.approx(0.1, abs=0.05)


def test_bootstrap_kept_share_of_chance_differences_averages_three_quarters() -> None:
    # Centred on the observed queries, the bootstrap keeps a chance order in 50-100% of the
    # resamples, uniformly: over many such query sets the mean share is about 0.75.
    rng = np.random.default_rng(2)
    kept = [
        query_stability(rng.normal(0, 1, (60, 2)), resamples=400, splits=100, seed=i).pairs[0].kept
        for i in range(150)
    ]
    assert min(kept) >= 0.45
    assert np.mean(kept) == pytest.approx(0.75, abs=0.04)


def test_shares_count_the_very_bootstrap_resamples() -> None:
    scores = np.random.default_rng(4).normal(0, 1, (30, 3)) + np.array([0.3, 0.0, 0.1])
    result = query_stability(scores, ["a", "b", "c"], resamples=300, splits=100, seed=9)
    # The same resamples, counted one by one.
    boot_seed = int(np.random.SeedSequence(9).generate_state(2, dtype=np.uint64)[0]) % 2**63
    weights = np.concatenate(list(bootstrap_weights(30, 300, boot_seed)))
    means = weights @ scores / 30
    full = scores.mean(axis=0)
    for pair in result.pairs:
        i, j = "abc".index(pair.first), "abc".index(pair.second)
        assert full[i] >= full[j]
        assert pair.ahead == np.mean(means[:, i] > means[:, j])
        assert pair.behind == np.mean(means[:, i] < means[:, j])
    taus = [scipy.stats.kendalltau(full, row).statistic for row in means]
    assert result.tau_mean == pytest.approx(np.mean(taus), abs=1e-12)
    assert result.same_order == np.mean(
        [list(np.argsort(-r)) == list(np.argsort(-full)) for r in means]
    )
    assert dict(result.tau_quantiles)[0.5] == pytest.approx(np.quantile(taus, 0.5))


@pytest.mark.parametrize("seed", range(20))
def test_tau_b_from_pair_signs_is_scipys_kendalltau(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 7))
    # Few distinct values, so that ties in either order are common.
    x = rng.integers(0, 3, m).astype(float)
    y = rng.integers(0, 3, m).astype(float)
    first, second = np.triu_indices(m, k=1)
    signs_x = np.sign(x[first] - x[second]).astype(np.int8)
    signs_y = np.sign(y[first] - y[second]).astype(np.int8)
    ours = float(_tau_b(signs_x[None, :], signs_y[None, :])[0])
    theirs = scipy.stats.kendalltau(x, y).statistic
    if np.isnan(theirs):
        assert np.isnan(ours)
    else:
        assert ours == pytest.approx(theirs, abs=1e-12)


def test_the_same_seed_gives_the_same_numbers_and_another_seed_others() -> None:
    scores = np.random.default_rng(8).normal(0, 1, (40, 4))
    one = query_stability(scores, resamples=300, splits=300, seed=12)
    again = query_stability(scores, resamples=300, splits=300, seed=12)
    other = query_stability(scores, resamples=300, splits=300, seed=13)
    assert one == again and one.to_dict() == again.to_dict()
    assert one.to_dict() != other.to_dict()


def test_inputs_are_not_written_and_the_result_is_plain_data() -> None:
    scores = _dominant(10)
    kept = scores.copy()
    result = query_stability(scores, ["a", "b", "c"], resamples=100, splits=100)
    assert np.array_equal(scores, kept)
    data = result.to_dict()
    assert data["order"] == ["a", "b", "c"] and data["pairs"][0]["kept"] == 1.0
    assert set(data["tau_quantiles"]) == {"0.05", "0.25", "0.5", "0.75", "0.95"}


@pytest.mark.parametrize(
    ("scores", "kwargs", "message"),
    [
        ([[0.1], [0.2]], {}, r"scores has 1 column; stability needs two systems or more"),
        ([[0.1, 0.2]], {}, r"scores has 1 query; stability needs at least 2"),
        ([[0.1, float("nan")], [0.2, 0.3]], {}, r"scores contains nan at row 0, column 1"),
        (
            [[0.1, 0.2], [0.3, 0.4]],
            {"resamples": 10},
            r"resamples=10 must be an integer from 100 to 10,000,000 \(bootstrap resamples",
        ),
        (
            [[0.1, 0.2], [0.3, 0.4]],
            {"splits": 0},
            r"splits=0 must be an integer from 100 to 10,000,000 \(random splits",
        ),
        ([[0.1, 0.2], [0.3, 0.4]], {"seed": -1}, r"seed=-1 must be an integer >= 0"),
        (
            [[0.1, 0.2], [0.3, 0.4]],
            {"resamples": 10**8},
            r"resamples=100000000 must be an integer from 100 to 10,000,000",
        ),
        ([[0.1, 0.2], [0.3, 0.4]], {"systems": ["a"]}, r"systems has 1 names for 2 columns"),
        ([[0.1, 0.2], [0.3, 0.4]], {"systems": ["a", "a"]}, r"systems names 'a' twice"),
    ],
)
def test_bad_input_is_one_clear_line(scores: object, kwargs: dict, message: str) -> None:
    with pytest.raises(PolicyError, match=message) as caught:
        query_stability(scores, **kwargs)
    assert "\n" not in str(caught.value)


def test_an_unknown_pair_is_named() -> None:
    result = query_stability(_dominant(10), ["a", "b", "c"], resamples=100, splits=100)
    with pytest.raises(PolicyError, match=r"no pair 'a', 'z'; the systems are a, b, c"):
        result.pair("a", "z")


@pytest.mark.parametrize("seed", range(4))
def test_twice_the_turned_share_is_about_the_bootstrap_tests_p_value(seed: int) -> None:
    # What the report's legend says: a pair's kept share reads as one minus a one-sided
    # bootstrap p-value, so 2 * (1 - kept) is about the two-sided p of compare's bootstrap test.
    from rankmeter.stats import paired_pvalues

    rng = np.random.default_rng(seed)
    scores = rng.normal(0, 1, (80, 2))
    scores[:, 0] += rng.uniform(0, 0.4)
    kept = query_stability(scores, resamples=20_000, splits=100, seed=seed).pairs[0].kept
    p = float(
        np.ravel(paired_pvalues(scores[:, 0] - scores[:, 1], test="bootstrap", resamples=20_000))[0]
    )
    assert 2 * (1 - kept) == pytest.approx(p, abs=0.02)
