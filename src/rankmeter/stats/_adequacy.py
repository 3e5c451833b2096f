"""Whether a comparison's sample can carry its statistics: the smallest p-value a test can
give, the cautions a report shows, and the thresholds behind them.

The thresholds, and why:

- :data:`MIN_RESAMPLES` (20): with ``B`` randomizations or resamples the smallest p-value is
  ``1 / (B + 1)``; 20 is the fewest with which a single comparison can fall below 0.05
  (1/21 = 0.048). Fewer can never be significant and give intervals from a handful of points
  (``--resamples 1`` printed an interval of one point beside a different difference).
- :data:`SMALL_SAMPLE` (20 queries): below it the bootstrap intervals of a mean are too narrow
  (they resample only the spread the few queries show: in a simulation of IR-like, heavy-tailed
  differences a 95% BCa interval covered the true mean 67% of the time with 3 queries, 82% with
  8 to 10 and 85-87% with 15 to 20), and the t-test leans on normally distributed differences
  that so few queries cannot show. A caution, not a refusal: the numbers are shown.
- :data:`BOOTSTRAP_TEST_MIN_QUERIES` (20 queries): the paired bootstrap test rejected a true
  null hypothesis at alpha 0.05 in 30% of the simulated comparisons with 3 queries, 14% with 5,
  7-9% with 8 to 10, about 5-7% from 15 to 30: below 20 it finds differences that are not
  there, so :func:`rankmeter.compare` refuses it (the exact randomization test answers instead).
"""

from __future__ import annotations

import math

from rankmeter.errors import PolicyError
from rankmeter.stats._names import paired_test_label
from rankmeter.stats._resampling import exact_randomization

MIN_RESAMPLES = 20
SMALL_SAMPLE = 20
BOOTSTRAP_TEST_MIN_QUERIES = 20

# Tests whose p-values are counts over every sign pattern (exact, small n): the smallest is
# 2 / 2^n (all n differences of one sign). scipy's Wilcoxon is exact for these sizes too.
_EXACT_BY_N = ("wilcoxon", "sign")


def smallest_pvalue(test: str, n: int, resamples: int) -> float:
    """The smallest two-sided p-value ``test`` can give with ``n`` queries and ``resamples``
    randomizations or resamples (0.0 for the t-test, which has no floor).

    >>> smallest_pvalue("randomization", 3, 10_000), smallest_pvalue("randomization", 40, 99)
    (0.25, 0.01)
    """
    if test == "t":
        return 0.0
    if (test == "randomization" and exact_randomization(n, resamples)) or test in _EXACT_BY_N:
        return math.ldexp(2.0, -n)  # 2 / 2^n, exactly (0.0 past the smallest float)
    return 1.0 / (resamples + 1)


def _corrected(p: float, correction: str, family: int) -> float:
    """The smallest corrected p-value of a family whose p-values are all at least ``p``."""
    if correction in ("holm", "bonferroni"):
        return min(1.0, family * p)
    return p  # BH: k p / k for the smallest when all are equal; none: p itself


def check_bootstrap_test(test: str, n: int) -> None:
    """Refuse the paired bootstrap test below :data:`BOOTSTRAP_TEST_MIN_QUERIES` queries."""
    if test == "bootstrap" and n < BOOTSTRAP_TEST_MIN_QUERIES:
        raise PolicyError(
            f"test='bootstrap' needs at least {BOOTSTRAP_TEST_MIN_QUERIES} queries (got {n}): "
            "with fewer its p-values are too small (it finds differences that are not there); "
            "use test='randomization', exact with few queries"
        )


def sample_cautions(
    *,
    test: str,
    n: int,
    resamples: int,
    alpha: float,
    correction: str,
    family: int,
) -> list[str]:
    """Why a comparison's statistics cannot be trusted as they stand, one sentence each: too
    few queries for the intervals or the t-test, a smallest p-value that cannot reach
    ``alpha`` after the correction of ``family`` comparisons.

    >>> sample_cautions(test="randomization", n=100, resamples=50, alpha=0.05,
    ...                 correction="holm", family=4)  # doctest: +NORMALIZE_WHITESPACE
    ['with 50 resamples the smallest p-value the paired randomization test can give is 1/51 =
    0.0196, which the Holm correction over 4 comparisons makes 0.0784, not below alpha 0.05:
    no difference can be significant; use at least 80 resamples']
    """
    out: list[str] = []
    if n < 2:
        return out
    if n < SMALL_SAMPLE:
        out.append(
            f"only {n} queries: bootstrap intervals are too narrow with fewer than "
            f"{SMALL_SAMPLE} (a 95% interval covers the true mean less often than 95%); read "
            "them as rough"
        )
        if test == "t":
            out.append(
                f"only {n} queries: the paired t-test relies on normally distributed "
                "differences, which so few queries cannot show; the randomization test does not"
            )
    if family < 1:
        return out
    smallest = smallest_pvalue(test, n, resamples)
    corrected = _corrected(smallest, correction, family)
    if smallest == 0.0 or corrected < alpha:
        return out
    exact = test == "randomization" and exact_randomization(n, resamples)
    label = paired_test_label(test)
    if exact or test in _EXACT_BY_N:
        how = (
            f"with {n} queries the smallest p-value the {'exact ' if exact else ''}{label} can "
            f"give is 2/{2**n} = {smallest:.4g}"
        )
        needed = next(
            m for m in range(n, 1075) if _corrected(math.ldexp(2.0, -m), correction, family) < alpha
        )
        remedy = f"it takes at least {needed} queries"
    else:
        how = (
            f"with {resamples:,} resamples the smallest p-value the {label} can give is "
            f"1/{resamples + 1:,} = {smallest:.4f}"
        )
        more = math.floor(family / alpha if correction in ("holm", "bonferroni") else 1 / alpha)
        while _corrected(1.0 / (more + 1), correction, family) >= alpha:
            more += 1
        while more > 1 and _corrected(1.0 / more, correction, family) < alpha:
            more -= 1
        remedy = f"use at least {more:,} resamples"
    if correction in ("holm", "bonferroni") and family > 1:
        from rankmeter.stats._names import correction_label

        how += (
            f", which the {correction_label(correction)} correction over {family} comparisons "
            f"makes {corrected:.4f}"
        )
    out.append(f"{how}, not below alpha {alpha:g}: no difference can be significant; {remedy}")
    return out
