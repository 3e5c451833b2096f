"""The names of the tests, corrections and interval methods (the valid values of each option)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

#: Paired significance tests, the recommended one first.
TESTS: tuple[str, ...] = ("randomization", "t", "bootstrap", "wilcoxon", "sign")

#: Tests that answer a different question than the one an IR comparison asks, and why.
NOT_RECOMMENDED: Mapping[str, str] = MappingProxyType(
    {
        "wilcoxon": (
            "tests whether differences are symmetric about zero (a median-like location), "
            "not whether the mean metric differs"
        ),
        "sign": (
            "counts only which system won each query, ignoring by how much, so it does not "
            "test the difference of means"
        ),
    }
)

#: Multiple-comparison corrections, the default first.
CORRECTIONS: tuple[str, ...] = ("holm", "bonferroni", "bh", "none")

#: Bootstrap confidence-interval methods, the default first.
INTERVALS: tuple[str, ...] = ("bca", "percentile")
