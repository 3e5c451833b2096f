"""compare(qrels, runs, metrics) -> Comparison: did the change help, for whom, and can I trust it?

Every system is compared with a baseline on the same queries, per metric: the two means, the
difference with its confidence interval (paired bootstrap), the effect size, the p-value of a
paired test, that p-value corrected for every comparison made, and win/tie/loss counts. Around
it: the queries that lost most, the queries a system answered with nothing or with nothing
relevant near the top, segments of queries that got worse, and metric@k curves.

One module per concept:

- ``_records``: the frozen results (:class:`Comparison` and the records it holds, :class:`Settings`,
  the regression gate's :class:`Gate`)
- ``_compare``: :func:`compare`, the front: checks every argument once, then runs the steps below
- ``_queries``: which queries are compared, and each run joined with exactly those
- ``_summaries``: means, differences and their statistics, from :mod:`rankmeter.stats` results
- ``_failures``: the queries each system lost most on, answered with nothing, or missed
- ``_annotations``: segments and query texts: reading them, and how their ids meet the queries
- ``_segments``: segments of queries tested against the baseline
- ``_curves``: metric@k curves, through the metrics' own kernels
- ``_given``: runs compared by values computed elsewhere (:class:`GivenRun`, on Spark)
- ``_spark``: ``compare(..., engine="spark")``: the runs evaluated on Spark (:func:`spark_runs`)
- ``_files``: :func:`compare_files`, run files compared as ``rankmeter compare`` compares them
  (``NAME=PATH``, progress per run, the baseline by name or file, here or on Spark)
- ``_allpairs``: :func:`compare_all`, every pair of three or more systems (Tukey's HSD on the
  two-way model or the randomised Tukey HSD) on the same queries as :func:`compare`
- ``_stability``: :func:`stability`, how often resampled queries keep the systems' order
- ``_power``: :func:`compare_power`, power and sample size of one system against a baseline
- ``_diff``: :func:`diff_runs`, two runs side by side query by query (:class:`RunDiff`: both
  rankings, their grades, the documents that moved, the queries by the change)

The package is named comparison, not compare, so that importing it never rebinds the package
attribute ``rankmeter.compare`` (the function) to a module.
"""

from __future__ import annotations

from rankmeter.comparison._allpairs import AllPairsComparison, AllPairsSettings, compare_all
from rankmeter.comparison._compare import compare
from rankmeter.comparison._curves import CURVE_DEPTH, CURVE_FAMILIES
from rankmeter.comparison._diff import DIFF_SHAPE, DiffRow, QueryDiff, RunDiff, diff_runs
from rankmeter.comparison._files import ComparedFiles, compare_files
from rankmeter.comparison._given import GivenRun, given_metrics
from rankmeter.comparison._power import RunsPower, compare_power
from rankmeter.comparison._records import (
    Comparison,
    Difference,
    Failures,
    Gate,
    QueryLoss,
    Regression,
    SegmentMean,
    SegmentResult,
    Settings,
    SystemMean,
    check_min_effect,
)
from rankmeter.comparison._spark import spark_runs
from rankmeter.comparison._stability import QueryStability, stability

__all__ = [
    "CURVE_DEPTH",
    "CURVE_FAMILIES",
    "DIFF_SHAPE",
    "AllPairsComparison",
    "AllPairsSettings",
    "ComparedFiles",
    "Comparison",
    "DiffRow",
    "Difference",
    "Failures",
    "Gate",
    "GivenRun",
    "QueryDiff",
    "QueryLoss",
    "QueryStability",
    "Regression",
    "RunDiff",
    "RunsPower",
    "SegmentMean",
    "SegmentResult",
    "Settings",
    "SystemMean",
    "check_min_effect",
    "compare",
    "compare_all",
    "compare_files",
    "compare_power",
    "diff_runs",
    "given_metrics",
    "spark_runs",
    "stability",
]
