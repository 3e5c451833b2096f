"""Statistics for comparing systems: paired tests, bootstrap intervals, corrections, effect sizes.

Everything works on matrices of shape (n, m): ``n`` queries (rows, paired across columns) and
``m`` comparisons (columns), vectorised over columns. A 1-D input is one column.

- :func:`paired_test`: everything a paired comparison reports, as a :class:`PairedTest`: the
  p-value, the interval of the mean difference, the effect size and win/tie/loss counts.
- :func:`paired_pvalues`: two-sided p-values of paired tests (:data:`TESTS`); the default
  randomization test is the one to use for IR metrics (Smucker, Allan & Carterette, 2007).
- :func:`bootstrap_intervals`: percentile or BCa confidence intervals of column means, as a
  :class:`ConfidenceInterval` (it unpacks as ``low, high``).
- :func:`effect_sizes`: Cohen's :math:`d_z` of paired differences.
- :func:`adjust`: Holm, Bonferroni and Benjamini-Hochberg adjusted p-values; :func:`correct`
  adds which are significant at ``alpha``, as a :class:`Correction`.
- :func:`win_tie_loss`: how many queries each comparison wins, ties and loses, as a
  :class:`WinTieLoss` (it unpacks as ``wins, ties, losses``).
- :func:`power`: the power of a paired t-test (analytic) or randomization test (simulated)
  at the current number of queries, the queries needed for a target power and the minimum
  detectable difference, as a :class:`PowerAnalysis`; :func:`detectable_difference` and
  :func:`power_sentence` give a report's one line about it (:data:`POWER_TESTS`).
- :func:`all_pairs`: every pair of several systems compared on one metric's query x system
  matrix with the family-wise error held (Tukey's HSD on the two-way system + query model, or
  Carterette's randomised Tukey HSD: :data:`ALL_PAIRS_METHODS`), with the two-way ANOVA
  (:func:`two_way_anova`) and a compact letter display (:func:`compact_letters`), as an
  :class:`AllPairs`; :func:`all_pairs_label` names the method.
- :func:`query_stability`: how often bootstrap resamples and random halves of the queries
  keep the systems' order (per pair, Kendall's tau, split-half), as a :class:`Stability`.
- :func:`means`: column means, finite wherever the values are (even where their sum is not).
- :func:`smallest_pvalue`, :func:`sample_cautions`, :func:`check_bootstrap_test`: whether a
  sample can carry its statistics (too few queries or resamples), with the thresholds
  :data:`MIN_RESAMPLES`, :data:`SMALL_SAMPLE` and :data:`BOOTSTRAP_TEST_MIN_QUERIES` and why
  they are what they are (``rankmeter.stats._adequacy``).
- Labels: :func:`paired_test_label`, :func:`correction_label`, :func:`correction_phrase`,
  :func:`interval_label`, :func:`interval_phrase`, :func:`not_recommended_note` and
  :func:`describe_settings` spell every test, correction and interval method, the same way in
  every output.

Values of any finite size are accepted: columns of huge values (beyond about 1e77) are scaled
by a power of two for the arithmetic, exactly, so that no sum of squares overflows.

Reproducibility: randomised results draw their random sign patterns and bootstrap resamples
from ``numpy.random.Generator(PCG64(seed))``, in chunks fixed by ``(seed, n, resamples)``
alone and shared by every column (common random numbers). The same seed therefore gives the
same results on every run and machine for the same numpy version, and a column's result is
the same whether it is passed alone or with other columns, in any order. Different seeds give
(slightly) different p-values and intervals. P-values count statistics with a small tolerance,
so they do not depend on how the sums were rounded; interval bounds are bootstrap means computed
by BLAS, and a machine whose BLAS kernels round differently may differ in their last bits.

At most :data:`MAX_RESAMPLES` (10,000,000) resamples are drawn: the intervals keep every
bootstrap mean (8 bytes per resample and column) and the time grows with resamples times
queries; a larger count is refused up front with a :class:`rankmeter.errors.PolicyError`
(:func:`check_resamples` is that check, for callers that take a count and resample later).

Bad arguments raise :class:`rankmeter.errors.PolicyError` naming the value and the choices.
"""

from __future__ import annotations

from rankmeter._validate import resamples as check_resamples
from rankmeter.stats._adequacy import (
    BOOTSTRAP_TEST_MIN_QUERIES,
    MIN_RESAMPLES,
    SMALL_SAMPLE,
    check_bootstrap_test,
    sample_cautions,
    smallest_pvalue,
)
from rankmeter.stats._allpairs import (
    ALL_PAIRS_METHODS,
    AllPairs,
    PairDifference,
    TwoWayAnova,
    all_pairs,
    all_pairs_label,
    compact_letters,
    two_way_anova,
)
from rankmeter.stats._checks import MAX_RESAMPLES, FloatArray, IntArray, means
from rankmeter.stats._corrections import adjust, correct
from rankmeter.stats._intervals import bootstrap_intervals
from rankmeter.stats._names import (
    CORRECTIONS,
    INTERVALS,
    NOT_RECOMMENDED,
    TESTS,
    correction_label,
    correction_phrase,
    describe_settings,
    interval_label,
    interval_phrase,
    not_recommended_note,
    paired_test_label,
)
from rankmeter.stats._paired import effect_sizes, paired_pvalues, paired_test, win_tie_loss
from rankmeter.stats._power import (
    POWER_TESTS,
    PowerAnalysis,
    detectable_difference,
    power,
    power_sentence,
)
from rankmeter.stats._resampling import exact_randomization
from rankmeter.stats._results import ConfidenceInterval, Correction, PairedTest, WinTieLoss
from rankmeter.stats._stability import (
    MIN_STABILITY_RESAMPLES,
    TAU_QUANTILES,
    PairStability,
    Stability,
    query_stability,
)

__all__ = [
    "ALL_PAIRS_METHODS",
    "BOOTSTRAP_TEST_MIN_QUERIES",
    "CORRECTIONS",
    "INTERVALS",
    "MAX_RESAMPLES",
    "MIN_RESAMPLES",
    "MIN_STABILITY_RESAMPLES",
    "NOT_RECOMMENDED",
    "POWER_TESTS",
    "SMALL_SAMPLE",
    "TAU_QUANTILES",
    "TESTS",
    "AllPairs",
    "ConfidenceInterval",
    "Correction",
    "FloatArray",
    "IntArray",
    "PairDifference",
    "PairStability",
    "PairedTest",
    "PowerAnalysis",
    "Stability",
    "TwoWayAnova",
    "WinTieLoss",
    "adjust",
    "all_pairs",
    "all_pairs_label",
    "bootstrap_intervals",
    "check_bootstrap_test",
    "check_resamples",
    "compact_letters",
    "correct",
    "correction_label",
    "correction_phrase",
    "describe_settings",
    "detectable_difference",
    "effect_sizes",
    "exact_randomization",
    "interval_label",
    "interval_phrase",
    "means",
    "not_recommended_note",
    "paired_pvalues",
    "paired_test",
    "paired_test_label",
    "power",
    "power_sentence",
    "query_stability",
    "sample_cautions",
    "smallest_pvalue",
    "two_way_anova",
    "win_tie_loss",
]
