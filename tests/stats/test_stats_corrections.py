"""adjust(): Holm, Bonferroni and Benjamini-Hochberg against tables computed by hand.

The expected values follow the definitions (and are what statsmodels' multipletests returns
for "holm", "bonferroni" and "fdr_bh"); the working is in the comments.
"""

from __future__ import annotations

import numpy as np
import pytest

from rankmeter.stats import CORRECTIONS, adjust

NAN = float("nan")

# p = [0.01, 0.04, 0.03, 0.005], k = 4; sorted: 0.005, 0.01, 0.03, 0.04
#   Holm: 4*0.005=0.02, 3*0.01=0.03, 2*0.03=0.06, 1*0.04=0.04 -> running max 0.02, 0.03, 0.06, 0.06
#   BH:   4/1*0.005=0.02, 4/2*0.01=0.02, 4/3*0.03=0.04, 4/4*0.04=0.04 -> running min from the top
FOUR = [0.01, 0.04, 0.03, 0.005]
# p = [0.2, 0.5, 0.01, 0.9, 0.04], k = 5; sorted: 0.01, 0.04, 0.2, 0.5, 0.9
#   Holm: 0.05, 0.16, 0.6, 1.0, 0.9 -> running max 0.05, 0.16, 0.6, 1.0, 1.0
#   BH:   0.05, 0.1, 1/3, 0.625, 0.9 (already increasing)
FIVE = [0.2, 0.5, 0.01, 0.9, 0.04]
# Ties and a value that BH must pull down: p = [0.03, 0.03, 0.04, 0.5], k = 4
#   Holm: 4*0.03=0.12, 3*0.03=0.09, 2*0.04=0.08, 1*0.5=0.5 -> running max 0.12, 0.12, 0.12, 0.5
#   BH:   4*0.03=0.12, 2*0.03=0.06, 4/3*0.04=0.0533.., 0.5 -> running min from the top:
#         0.0533.., 0.0533.., 0.0533.., 0.5
TIES = [0.03, 0.03, 0.04, 0.5]
# NaN means "not tested": not in the family, k = 2 here; sorted 0.01, 0.04
#   Holm: 0.02, 0.04; Bonferroni: 0.02, 0.08; BH: 2*0.01=0.02, 2/2*0.04=0.04
WITH_NAN = [0.01, NAN, 0.04]


@pytest.mark.parametrize(
    ("pvalues", "method", "expected"),
    [
        (FOUR, "holm", [0.03, 0.06, 0.06, 0.02]),
        (FOUR, "bonferroni", [0.04, 0.16, 0.12, 0.02]),
        (FOUR, "bh", [0.02, 0.04, 0.04, 0.02]),
        (FOUR, "none", FOUR),
        (FIVE, "holm", [0.6, 1.0, 0.05, 1.0, 0.16]),
        (FIVE, "bonferroni", [1.0, 1.0, 0.05, 1.0, 0.2]),
        (FIVE, "bh", [1 / 3, 0.625, 0.05, 0.9, 0.1]),
        (TIES, "holm", [0.12, 0.12, 0.12, 0.5]),
        (TIES, "bonferroni", [0.12, 0.12, 0.16, 1.0]),
        (TIES, "bh", [0.16 / 3, 0.16 / 3, 0.16 / 3, 0.5]),
        (WITH_NAN, "holm", [0.02, NAN, 0.04]),
        (WITH_NAN, "bonferroni", [0.02, NAN, 0.08]),
        (WITH_NAN, "bh", [0.02, NAN, 0.04]),
        (WITH_NAN, "none", WITH_NAN),
        ([0.3], "holm", [0.3]),
        ([0.3], "bh", [0.3]),
        ([], "holm", []),
        ([NAN, NAN], "bh", [NAN, NAN]),
        ([0.0, 1.0], "holm", [0.0, 1.0]),
        ([0.0, 1.0], "bh", [0.0, 1.0]),
    ],
)
def test_hand_computed_tables(pvalues: list[float], method: str, expected: list[float]) -> None:
    result = adjust(pvalues, method)
    assert result.dtype == np.float64
    np.testing.assert_allclose(result, expected, rtol=1e-12, atol=0)


@pytest.mark.parametrize("method", CORRECTIONS)
def test_properties_on_random_families(method: str) -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        pvalues = rng.random(rng.integers(1, 30)) ** 3
        adjusted = adjust(pvalues, method)
        assert (adjusted >= pvalues - 1e-15).all() and (adjusted <= 1.0).all()
        order = np.argsort(pvalues, kind="stable")
        assert (np.diff(adjusted[order]) >= 0).all()  # monotone in the raw p-values
        permutation = rng.permutation(pvalues.size)
        np.testing.assert_array_equal(adjust(pvalues[permutation], method), adjusted[permutation])


def test_order_between_methods() -> None:
    pvalues = np.random.default_rng(1).random(12) ** 2
    holm, bonferroni, bh = (adjust(pvalues, m) for m in ("holm", "bonferroni", "bh"))
    assert (bh <= holm + 1e-15).all() and (holm <= bonferroni + 1e-15).all()


def test_input_is_not_written() -> None:
    pvalues = np.array([0.01, 0.04, 0.03])
    pvalues.flags.writeable = False
    adjust(pvalues, "bh")
    np.testing.assert_array_equal(pvalues, [0.01, 0.04, 0.03])
