"""metric@k curves."""

from __future__ import annotations

import pytest

import rankmeter
from rankmeter import evaluate


def test_curves_equal_the_metrics_at_each_cutoff(
    data: tuple[dict, dict], result: rankmeter.Comparison
) -> None:
    qrels, runs = data
    for family in ("nDCG", "P", "R"):
        for k in (1, 5, 10, 30, 100):
            expected = evaluate(qrels, runs["better"], [f"{family}@{k}"]).metrics
            curve = result.curves[family]["better"]
            assert len(curve) == 100
            assert curve[k - 1] == pytest.approx(next(iter(expected.values())), abs=1e-12)
