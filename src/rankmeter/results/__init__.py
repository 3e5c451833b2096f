"""Evaluation results: frozen, always keyed by metric, exportable to dicts, pandas and Arrow.

One module per concept, every name importable from here:

- ``_result``: :class:`EvalResult` (one run), :class:`EvalResults` (several, keyed by run
  name), :class:`PerQuery` (per-query values), :func:`check_worst`;
- ``_by_metric``: :class:`ByMetric`, the mapping keyed by metric label, and
  :func:`metric_key`, the label any name of a metric looks up;
- ``_policies``: :class:`Policies`, how an evaluation was done;
- ``_facts``: what an evaluation saw of a run's data (:class:`RunFacts`: :class:`Overlap`
  counted by :class:`OverlapTally`, :class:`ScoreOrder`);
- ``_judged``: Judged@k (:func:`judged_cutoff`, :class:`JudgedWarning`,
  :func:`relevant_only`, :func:`no_relevant`);
- ``_depth``: runs cut at different depths (:func:`depth_of`, :func:`favours_deeper`,
  :class:`DepthGap`).
"""

from __future__ import annotations

from rankmeter.data.run import unique_names
from rankmeter.results._by_metric import ByMetric, metric_key
from rankmeter.results._depth import (
    DepthGap,
    depth_gap,
    depth_of,
    favours_deeper,
    reads_past,
)
from rankmeter.results._facts import (
    EXAMPLES,
    WRITTEN_DEPTH,
    Overlap,
    OverlapTally,
    RunFacts,
    ScoreOrder,
    overlap_of,
)
from rankmeter.results._judged import (
    JUDGED_BELOW,
    JUDGED_DEFAULT_K,
    JudgedWarning,
    check_judged_below,
    judged_cutoff,
    judged_mean,
    judged_warning,
    no_relevant,
    relevant_only,
)
from rankmeter.results._policies import Policies
from rankmeter.results._result import EvalResult, EvalResults, PerQuery, check_worst

__all__ = [
    "EXAMPLES",
    "JUDGED_BELOW",
    "JUDGED_DEFAULT_K",
    "WRITTEN_DEPTH",
    "ByMetric",
    "DepthGap",
    "EvalResult",
    "EvalResults",
    "JudgedWarning",
    "Overlap",
    "OverlapTally",
    "PerQuery",
    "Policies",
    "RunFacts",
    "ScoreOrder",
    "check_judged_below",
    "check_worst",
    "depth_gap",
    "depth_of",
    "favours_deeper",
    "judged_cutoff",
    "judged_mean",
    "judged_warning",
    "metric_key",
    "no_relevant",
    "overlap_of",
    "reads_past",
    "relevant_only",
    "unique_names",
]
