"""Bootstrap intervals: coverage by simulation, agreement with scipy.stats.bootstrap."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.stats

from rankmeter.stats import bootstrap_intervals

Sampler = Callable[[np.random.Generator, tuple[int, int]], np.ndarray]


def _normal(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    return rng.normal(0.05, 0.2, size=shape)


def _skewed(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    # Gamma(2) shifted to mean 0.05: skewness 1.4.
    return rng.gamma(2.0, 0.1, size=shape) - 0.15


def _metric_like(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    # Differences of two bounded, U-shaped per-query scores in steps of 0.01 (mean 0.5 - 5/12).
    return np.round(rng.beta(0.6, 0.6, size=shape) - rng.beta(0.5, 0.7, size=shape), 2)


# Bootstrap intervals of a mean under-cover slightly in small samples (an O(1/n) error:
# about 93.5-94% at n = 50 for skewed data), so the skewed case uses n = 100. 4,000 simulated
# samples in 8 batches with their own seeds keep the Monte Carlo error near 0.4 points.
@pytest.mark.parametrize(
    ("sampler", "n", "true_mean"),
    [(_normal, 50, 0.05), (_skewed, 100, 0.05), (_metric_like, 50, 0.5 - 5 / 12)],
    ids=["normal", "skewed", "metric-like"],
)
@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_95_percent_intervals_cover_the_true_mean_95_percent_of_the_time(
    sampler: Sampler, n: int, true_mean: float, method: str
) -> None:
    rng = np.random.default_rng(20240601)
    covered = 0
    simulations = 0
    for batch in range(8):
        samples = sampler(rng, (n, 500))  # 500 simulated paired samples, one per column
        low, high = bootstrap_intervals(samples, method=method, resamples=2000, seed=batch)
        covered += int(np.sum((low <= true_mean) & (true_mean <= high)))
        simulations += samples.shape[1]
    coverage = covered / simulations
    assert 0.93 <= coverage <= 0.97, coverage


def _scipy_interval(data: np.ndarray, method: str, level: float) -> tuple[float, float]:
    keyword = (
        "rng" if "rng" in inspect.signature(scipy.stats.bootstrap).parameters else "random_state"
    )
    options: dict[str, Any] = {keyword: np.random.default_rng(0)}
    result = scipy.stats.bootstrap(
        (data,),
        np.mean,
        n_resamples=50_000,
        confidence_level=level,
        method="BCa" if method == "bca" else "percentile",
        **options,
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_intervals_agree_with_scipy_bootstrap(method: str, level: float) -> None:
    rng = np.random.default_rng(3)
    columns = [rng.exponential(1.0, 50), rng.lognormal(0.0, 0.8, 40), rng.normal(0.0, 1.0, 30)]
    for data in columns:
        expected_low, expected_high = _scipy_interval(data, method, level)
        low, high = bootstrap_intervals(data, level=level, method=method, resamples=50_000, seed=1)
        width = expected_high - expected_low
        assert abs(low[0] - expected_low) < 0.03 * width, (low[0], expected_low)
        assert abs(high[0] - expected_high) < 0.03 * width, (high[0], expected_high)


def test_bca_corrects_for_skew() -> None:
    """For right-skewed data BCa moves both bounds up relative to the percentile interval."""
    data = np.random.default_rng(4).exponential(1.0, (60, 20))
    percentile = bootstrap_intervals(data, method="percentile", resamples=4000, seed=2)
    bca = bootstrap_intervals(data, method="bca", resamples=4000, seed=2)
    assert np.mean(bca[0] > percentile[0]) > 0.8
    assert np.mean(bca[1] > percentile[1]) > 0.8


def test_wider_level_gives_wider_intervals() -> None:
    data = np.random.default_rng(5).normal(0.0, 1.0, (40, 5))
    for method in ("percentile", "bca"):
        narrow = bootstrap_intervals(data, level=0.8, method=method, resamples=3000)
        wide = bootstrap_intervals(data, level=0.99, method=method, resamples=3000)
        assert (wide[0] < narrow[0]).all() and (wide[1] > narrow[1]).all()
        means = data.mean(axis=0)
        assert (narrow[0] < means).all() and (means < narrow[1]).all()


def test_one_query_apart_from_ties_stays_finite() -> None:
    """One query differs, 49 tie: BCa's acceleration is large; the bounds stay within the data."""
    diffs = np.zeros(50)
    diffs[7] = 0.5
    for method in ("percentile", "bca"):
        low, high = bootstrap_intervals(diffs, method=method, resamples=5000)
        assert np.isfinite(low).all() and np.isfinite(high).all()
        assert 0.0 <= low[0] <= 0.01 <= high[0] <= 0.5
