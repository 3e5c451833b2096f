"""The interleaving simulation's core (benchmarks/interleaving_sim.py) on a tiny made-up
collection: fast, no BM25, no Cranfield."""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from rankmeter import Qrels, Run

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def sim() -> Iterator[ModuleType]:
    sys.path.insert(0, str(BENCH))
    try:
        import interleaving_sim

        yield interleaving_sim
    finally:
        sys.path.remove(str(BENCH))


def _collection() -> tuple[Qrels, Run, Run]:
    """Ten queries with two relevant documents each (grades 4 and 3); B ranks them first, A
    ranks them third and fourth."""
    qrels = {f"q{i}": {f"q{i}-rel1": 4, f"q{i}-rel2": 3} for i in range(10)}
    others = [f"other{j}" for j in range(8)]
    good = {f"q{i}": [f"q{i}-rel1", f"q{i}-rel2", *others] for i in range(10)}
    worse = {f"q{i}": [*others[:2], f"q{i}-rel1", f"q{i}-rel2", *others[2:]] for i in range(10)}

    def run(rankings: dict[str, list[str]], name: str) -> Run:
        return Run.from_dict(
            {q: {d: 10.0 - r for r, d in enumerate(docs)} for q, docs in rankings.items()},
            name=name,
        )

    return Qrels.from_dict(qrels), run(worse, "a"), run(good, "b")


def test_the_click_model(sim: ModuleType) -> None:
    p = sim.click_probability(np.array([4, 0, -1, 3]), np.array([1, 2, 4, 5]))
    assert p == pytest.approx([0.8, 0.05 / 2, 0.05 / 4, 0.6 / 5])


def test_pools_and_power_find_the_better_ranker(sim: ModuleType) -> None:
    qrels, run_a, run_b = _collection()
    pools = sim.simulate_pools(qrels, run_a, run_b, impressions=300, seed=1)
    # Expected CTR from the model: B shows grades 4, 3 at ranks 1, 2; A at ranks 3, 4; the
    # other eight results are grade 0 (P(click | examined) 0.05).
    harmonic = [1 / r for r in range(1, 11)]
    ctr_b = (0.8 * harmonic[0] + 0.6 * harmonic[1] + 0.05 * sum(harmonic[2:])) / 10
    ctr_a = (
        0.8 * harmonic[2] + 0.6 * harmonic[3] + 0.05 * (sum(harmonic) - harmonic[2] - harmonic[3])
    ) / 10
    assert (pools.ctr_a, pools.ctr_b) == pytest.approx((ctr_a, ctr_b))
    assert len(pools.interleaved) == len(pools.clicks_a) == len(pools.clicks_b) == 3000
    assert pools.clicks_b.mean() == pytest.approx(10 * ctr_b, rel=0.1)
    decided = pools.interleaved[~np.isnan(pools.interleaved)]
    assert np.mean(decided > 0) > 0.6  # B wins most interleaved requests with a click

    power = sim.power_curves(pools, (10, 40, 160), replicates=60, seed=2)
    assert power.interleaving[-1] >= 0.8 and power.interleaving[-1] >= power.ab[-1]
    assert power.interleaving[0] <= power.interleaving[-1]


def test_needed_interpolates_on_a_log_scale(sim: ModuleType) -> None:
    assert sim.needed((100, 400), (0.6, 1.0)) == pytest.approx(200)
    assert sim.needed((100, 400), (0.9, 1.0)) == 100
    assert math.isinf(sim.needed((100, 400), (0.1, 0.5)))
