"""How much of a run's top k is judged (Judged@k): the k results carry, the warning below a
threshold and what qrels holding only relevant (or no relevant) judgments mean for it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankmeter.data.arrays import FloatArray
from rankmeter.metrics import Metric

__all__ = [
    "JUDGED_BELOW",
    "JUDGED_DEFAULT_K",
    "JudgedWarning",
    "check_judged_below",
    "judged_cutoff",
    "judged_mean",
    "judged_warning",
    "no_relevant",
    "relevant_only",
]

#: Reports warn about a run whose Judged@k is below this (``--judged-below``; 0: never).
JUDGED_BELOW = 0.9
#: The k of Judged@k when no metric asked for has a cutoff (AP, RR, R-Prec look at the whole
#: ranking, whose depth says nothing about how far anyone judged).
JUDGED_DEFAULT_K = 10


def judged_cutoff(measures: Sequence[Metric]) -> int:
    """The k of the Judged@k that results carry: the largest cutoff among the metrics asked
    for (nDCG@10 and R@100 -> 100: every rank a metric looks at should be judged), or 10 when
    none has one.

    >>> from rankmeter.metrics import parse_metrics
    >>> judged_cutoff(parse_metrics(["nDCG@10", "R@100", "AP"])), judged_cutoff(parse_metrics(["AP"]))
    (100, 10)
    """
    cutoffs = [m.cutoff for m in measures if m.cutoff is not None]
    return max(cutoffs, default=JUDGED_DEFAULT_K)


def check_judged_below(value: Any) -> float:
    """The threshold of the Judged@k warning, checked: a number from 0 (never warn) to 1."""
    from rankmeter._validate import real

    return real(
        "judged_below",
        value,
        low=0,
        high=1,
        what="reports warn about a run whose Judged@k is below it; 0: never",
    )


@dataclass(frozen=True)
class JudgedWarning:
    """A run whose top k is judged less than a threshold: its numbers count the unjudged
    documents as not relevant.

    Attributes
    ----------
    run : str
        The run's name.
    k : int
        The k of Judged@k (see :func:`judged_cutoff`).
    judged : float
        The run's mean Judged@k.
    threshold : float
        The threshold it is below.
    relevant_only : bool
        The qrels hold only relevant documents (:func:`relevant_only`): an unjudged document
        is then assumed not relevant by design, and Judged@k is the run's precision at k, not
        how far it is judged. Reports then say so once instead of warning per run.
    """

    run: str
    k: int
    judged: float
    threshold: float
    relevant_only: bool = field(default=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "run": self.run,
            "k": self.k,
            "judged": self.judged,
            "threshold": self.threshold,
        }
        if self.relevant_only:
            out["relevant_only"] = True
        return out


def judged_warning(
    run: str, k: int, judged: float, threshold: float, relevant_only: bool = False
) -> JudgedWarning | None:
    """The warning for a run with mean Judged@k ``judged``, if it is below ``threshold``
    (checked; NaN, a run that answered no query, never warns)."""
    threshold = check_judged_below(threshold)
    if judged < threshold:
        return JudgedWarning(run, k, float(judged), threshold, relevant_only)
    return None


def relevant_only(grades: Any, rel: float) -> bool:
    """Whether qrels hold only relevant judgments: some judgment, and none judged not
    relevant (no grade from 0 up to ``rel``; a negative grade is judged-unjudged, as in
    trec_eval). CISI, many legacy collections and click-derived qrels are so: every document
    not listed is assumed not relevant, and Judged@k is the share of the top k that is
    relevant.

    Qrels with no relevant judgment at all (only negative grades, say) are not relevant-only:
    they judge nothing, and every metric is 0 (:func:`no_relevant`).

    >>> relevant_only([1, 2, 1], 1), relevant_only([0, 1], 1), relevant_only([1, 2], 2)
    (True, False, False)
    >>> relevant_only([-1, -1], 1)
    False
    """
    values = np.asarray(grades, dtype=np.float64)
    return not no_relevant(values, rel) and not bool(np.any((values >= 0) & (values < rel)))


def no_relevant(grades: Any, rel: float) -> bool:
    """Whether qrels judge no document relevant (no grade of ``rel`` or more): every metric of
    every run is then 0, or undefined, and nothing can be learned from them. Qrels holding only
    negative grades (trec_eval's "pooled but not judged") are so.

    >>> no_relevant([-1, -1], 1), no_relevant([0, 2], 1), no_relevant([1, 1], 2)
    (True, False, True)
    """
    values = np.asarray(grades, dtype=np.float64)
    return not bool(np.any(values >= rel))


def judged_mean(judged: FloatArray, num_ret: Any) -> float:
    """The mean Judged@k over the queries a run answered: a query it returned nothing for has
    no top k to judge (under trec_eval -c, or in a comparison, it scores 0 on every metric)."""
    answered = np.asarray(num_ret) > 0
    return float(np.mean(judged[answered])) if answered.any() else math.nan
