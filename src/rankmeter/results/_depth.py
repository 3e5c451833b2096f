"""How deep runs are: a run's depth, the metrics that favour a deeper run over one cut
shallower, and the :class:`DepthGap` of runs cut at different depths."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankmeter.metrics import Metric

__all__ = ["DepthGap", "depth_gap", "depth_of", "favours_deeper", "reads_past"]


def depth_of(offsets: Any) -> int:
    """A run's *depth*: the most results any one of its queries has (0 for no query), from its
    per-query ``offsets``. The largest count rather than the typical one: a run made with
    ``-k 100`` is 100 deep even when a few queries match fewer documents."""
    counts = np.diff(np.asarray(offsets))
    return int(counts.max()) if len(counts) else 0


def reads_past(metric: Metric, depth: int) -> bool:
    """Whether ``metric`` can read past rank ``depth``: any metric without a cutoff (AP,
    R-Prec, Bpref, R, nDCG, RR, ... read the whole ranking), or one whose cutoff is beyond it
    (R@1000, and P@k/nDCG@k too: a run cut shallower has nothing there, counted as not
    relevant, where a deeper run can still find relevant documents). NumRel counts the qrels
    only."""
    if metric.spec.name == "NumRel":
        return False
    return metric.cutoff is None or metric.cutoff > depth


#: Metrics a deeper run is not favoured on: P without a cutoff (relevant retrieved over
#: retrieved) favours the shallower run, NumRet counts results and Judged how much is
#: judged, not how much is relevant, and NumRel counts the qrels only. RBP_resid is what
#: unjudged ranks and the ranks past the list could add: larger for the shallower run, and
#: no measure of quality.
_NOT_FAVOURING_DEEPER = frozenset({"NumRet", "Judged", "NumRel", "RBP_resid"})


def favours_deeper(metric: Metric, depth: int) -> bool:
    """Whether ``metric`` favours a run deeper than ``depth`` over one cut there: it reads
    past rank ``depth`` (:func:`reads_past`), where the shallower run's missing results count
    as not relevant and the deeper run's relevant documents still count (AP, R, R-Prec,
    Bpref, nDCG, DCG, RR, Success, NumRelRet, and P@k, R@k, nDCG@k with k beyond ``depth``).
    Not P without a cutoff (relevant retrieved over retrieved: it favours the shallower run),
    nor NumRet, Judged and NumRel, which count results, judgments or the qrels, not relevance.

    >>> from rankmeter.metrics import parse_metric
    >>> [favours_deeper(parse_metric(m), 100) for m in ["AP", "P", "P@1000", "NumRet", "RR"]]
    [True, False, True, False, True]
    """
    if metric.spec.name in _NOT_FAVOURING_DEEPER:
        return False
    if metric.spec.name == "P" and metric.cutoff is None:
        return False
    return reads_past(metric, depth)


@dataclass(frozen=True)
class DepthGap:
    """Runs cut at different depths (each run's depth: :func:`depth_of`), and the metrics
    asked for that favour the deeper runs (:func:`favours_deeper`): they read past the
    shallowest depth, where the deeper runs' relevant documents count and the shallower runs
    have none.

    Attributes
    ----------
    depths : ``(run, depth)`` of every run, in the runs' order
    metrics : the labels of the metrics asked for that favour the deeper runs
        (:func:`favours_deeper` than :attr:`shallow`; may be empty: then no number asked for
        is affected)
    """

    depths: tuple[tuple[str, int], ...]
    metrics: tuple[str, ...]

    @property
    def shallow(self) -> int:
        return min(d for _, d in self.depths)

    @property
    def deep(self) -> int:
        return max(d for _, d in self.depths)

    def to_dict(self) -> dict[str, Any]:
        return {
            "depths": dict(self.depths),
            "shallow": self.shallow,
            "deep": self.deep,
            "metrics": list(self.metrics),
        }


def depth_gap(
    depths: Mapping[str, int | None] | Iterable[tuple[str, int | None]],
    measures: Iterable[Metric] = (),
) -> DepthGap | None:
    """The :class:`DepthGap` of runs whose depths differ (None when they are equal, or fewer
    than two runs have a known depth above 0).

    >>> from rankmeter.metrics import parse_metrics
    >>> gap = depth_gap({"minilm": 100, "bm25": 1000}, parse_metrics(["nDCG@10", "R@1000", "AP"]))
    >>> gap.shallow, gap.deep, gap.metrics
    (100, 1000, ('R@1000', 'AP'))
    >>> depth_gap({"a": 100, "b": 100}) is None
    True
    """
    pairs = depths.items() if isinstance(depths, Mapping) else depths
    known = tuple((str(run), int(d)) for run, d in pairs if d is not None and d > 0)
    if len(known) < 2 or len({d for _, d in known}) == 1:
        return None
    shallow = min(d for _, d in known)
    return DepthGap(known, tuple(m.label for m in measures if favours_deeper(m, shallow)))
