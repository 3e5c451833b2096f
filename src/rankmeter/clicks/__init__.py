"""Clicks into labels despite position bias (issue 12): click models (PBM, cascade, DBN, UBM)
fitted by vectorised EM, position-bias propensities, held-out log-likelihood and perplexity,
IPS/SNIPS-debiased relevance turned into graded :class:`~rankmeter.Qrels`, and a click
simulator that proves the estimators recover a known truth.

A log is a table (pyarrow, Ibis, pandas, polars) with the online log contract's columns;
files are read by ``rankmeter.online.read_log``. NumPy and the lowest layers are imported at
the top of these modules; pyarrow when a function runs.
"""

from __future__ import annotations

from rankmeter.clicks.counts import ClickCounts, click_counts
from rankmeter.clicks.harvest import harvest_propensities
from rankmeter.clicks.labeling import ESTIMATORS, GRADES, estimate_relevance, labels
from rankmeter.clicks.log import ClickLog, click_log, split_log
from rankmeter.clicks.models import MODELS, ClickModel, ModelEvaluation, evaluate_model, fit
from rankmeter.clicks.simulation import default_attractiveness, default_propensities, simulate

__all__ = [
    "ESTIMATORS",
    "GRADES",
    "MODELS",
    "ClickCounts",
    "ClickLog",
    "ClickModel",
    "ModelEvaluation",
    "click_counts",
    "click_log",
    "default_attractiveness",
    "default_propensities",
    "estimate_relevance",
    "evaluate_model",
    "fit",
    "harvest_propensities",
    "labels",
    "simulate",
    "split_log",
]
