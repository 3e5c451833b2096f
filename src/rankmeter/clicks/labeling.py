"""Clicks into graded qrels: relevance estimates corrected for position bias.

A result shown at rank r is examined with probability ``p_r`` (the click model's propensity,
normalised to rank 1), so its click-through rate understates its relevance by that factor.
Inverse propensity scoring weighs each click by ``1 / p_r`` (Joachims, Swaminathan and
Schnabel, WSDM 2017); propensities are clipped from below at ``clip`` so that a few clicks at
deep ranks cannot dominate (Strehl et al., NeurIPS 2010):

- ``ips``: ``rel_qd = (1 / n_qd) * sum_i c_i / max(p_i, clip)``: unbiased under the model,
  high variance.
- ``snips`` (self-normalised): ``rel_qd = sum_i c_i / sum_i max(p_i, clip)``: the IPS terms
  ``c_i / p_i`` averaged with weights ``p_i`` that sum to one (clicks over expected clicks);
  slightly biased, much lower variance, and never above the highest IPS term.

Either estimates the click probability of an examined result, on the scale of rank 1.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from rankmeter._validate import choice, integer, real
from rankmeter.clicks.counts import ClickCounts, click_counts
from rankmeter.clicks.log import click_log
from rankmeter.clicks.models import MODELS, ClickModel, fit
from rankmeter.data.arrays import FloatArray
from rankmeter.data.qrels import Qrels
from rankmeter.errors import FormatError, PolicyError

__all__ = ["ESTIMATORS", "GRADES", "estimate_relevance", "labels"]

ESTIMATORS = ("snips", "ips")
#: The default grade thresholds: an estimate >= 0.1 is grade 1, >= 0.3 grade 2, >= 0.6 grade 3.
GRADES = (0.1, 0.3, 0.6)


def _propensities(log: Any, counts: ClickCounts, model: Any) -> FloatArray:
    """Propensities per rank: a fitted model's, a model name's (fitted to the log: its
    ``counts`` but for DBN), or given."""
    if isinstance(model, ClickModel):
        return np.asarray(model.propensities, dtype=np.float64)
    if isinstance(model, str):
        name = choice("model", model, MODELS, what="the click model")
        fitted = fit(log if name == "dbn" else counts, name)
        return np.asarray(fitted.propensities, dtype=np.float64)
    if isinstance(model, (Sequence, np.ndarray)) and len(model) > 0:
        return np.array(
            [real(f"propensities[{r}]", p, low=0, open_low=True) for r, p in enumerate(model)],
            dtype=np.float64,
        )
    raise PolicyError(
        f"model={model!r} must be a model name ({', '.join(MODELS)}), a fitted ClickModel or "
        "propensities per rank"
    )


def estimate_relevance(
    log: Any, model: Any = "pbm", *, estimator: str = "snips", clip: float = 0.05
) -> Any:
    """Position-debiased relevance per (query, doc) pair of a log.

    Parameters
    ----------
    log : a click log, as :func:`rankmeter.clicks.fit` takes it
    model : str, ClickModel or sequence of float
        Whose propensities correct the clicks: a fitted :class:`~rankmeter.clicks.ClickModel`,
        a model name (fitted to ``log`` first), or propensities per rank (e.g. from
        :func:`~rankmeter.clicks.harvest_propensities`); ranks past the last take the last.
    estimator : {"snips", "ips"}
        See the module docstring.
    clip : float
        Propensities below this count as this (0 < clip <= 1).

    Returns
    -------
    pyarrow.Table
        query_id, doc_id, impressions, clicks, relevance; pairs in (query_id, doc_id) order.

    Examples
    --------
    >>> import pyarrow as pa
    >>> log = pa.table({"request_id": ["r1", "r1", "r2", "r2"], "query_id": ["q"] * 4,
    ...     "doc_id": ["a", "b", "b", "a"], "position": [1, 2, 1, 2],
    ...     "clicked": [False, True, False, True]})
    >>> estimate_relevance(log, "cascade").column("relevance").to_pylist()
    [0.5, 0.5]
    """
    estimator = choice("estimator", estimator, ESTIMATORS, what="how clicks are reweighted")
    clip = real("clip", clip, low=0, high=1, open_low=True, what="the smallest propensity used")
    if isinstance(model, str) and model == "dbn":
        # DBN fits the request by position matrix: build it once, count from it.
        log = click_log(log)
    data = click_counts(log)
    propensities = np.nan_to_num(_propensities(log, data, model), nan=1.0)
    ranks = np.minimum(data.rank, len(propensities) - 1)
    weight = np.maximum(propensities[ranks], clip)
    clicked = data.clicked.astype(np.float64)
    impressions = data.per_pair()
    clicks = data.per_pair(clicked)
    if estimator == "ips":
        relevance = data.per_pair(clicked / weight) / impressions
    else:
        relevance = clicks / data.per_pair(weight)
    import pyarrow as pa

    return pa.table(
        {
            "query_id": data.query_ids,
            "doc_id": data.doc_ids,
            "impressions": pa.array(impressions.astype(np.int64)),
            "clicks": pa.array(clicks.astype(np.int64)),
            "relevance": pa.array(relevance),
        }
    )


def _source(log: Any) -> str:
    """How the qrels name the log: its file, when it was read from one."""
    return str(getattr(log, "source", "<log>"))


def _thresholds(grades: Sequence[float] | str) -> list[float]:
    """The thresholds as given: a sequence of numbers or a comma list (``"0.1,0.3,0.6"``)."""
    from rankmeter import _items

    hint = "give increasing thresholds, e.g. 0.1,0.3,0.6"
    if isinstance(grades, str):
        items: list[Any] = _items.split(grades, "grades", hint)
    elif isinstance(grades, Sequence) and not isinstance(grades, bytes) and grades:
        items = list(grades)
    else:
        raise PolicyError(
            f"grades={grades!r} must be a list of increasing thresholds, e.g. {GRADES}"
        )
    checked = [_items.number(item, i + 1, "grades", hint) for i, item in enumerate(items)]
    for i, value in enumerate(checked):
        real(f"grades[{i}]", value, low=0, open_low=True, what="a threshold of the estimates")
    if any(b <= a for a, b in itertools.pairwise(checked)):
        raise PolicyError(
            f"grades={tuple(checked)!r} must increase: each threshold starts the next grade"
        )
    return checked


def _check_writable(query_ids: Any, doc_ids: Any, source: str) -> None:
    """Refuse, naming the log, a labelled id that TREC qrels cannot hold (empty, or holding
    whitespace, on which TREC splits fields): bad data in the log, found before any qrels are
    written (the words of ``rankmeter.io.trec_qrels_lines``)."""
    from rankmeter.io import TREC_ID_RULE, trec_id_writable

    queries, docs = query_ids.to_pylist(), doc_ids.to_pylist()
    for query, doc in zip(queries, docs, strict=True):
        for what, value in (("query", query), ("doc", doc)):
            if not trec_id_writable(value):
                raise FormatError(
                    source,
                    f"{what} id {value!r} (query {query!r}) cannot be written as TREC qrels: "
                    f"{TREC_ID_RULE}",
                )


def labels(
    log: Any,
    model: Any = "pbm",
    *,
    estimator: str = "snips",
    clip: float = 0.05,
    min_impressions: int = 20,
    grades: Sequence[float] | str = GRADES,
) -> Qrels:
    """Graded qrels from clicks: debiased relevance estimates cut at thresholds.

    A pair's grade is the number of thresholds its estimate (see :func:`estimate_relevance`)
    reaches: with the default ``grades=(0.1, 0.3, 0.6)``, an estimate below 0.1 is grade 0
    (judged not relevant), from 0.1 grade 1, from 0.3 grade 2, from 0.6 grade 3. Pairs shown
    fewer than ``min_impressions`` times are left out (unjudged): a few impressions say little.

    Clicks reward what was already ranked high, and say nothing about results no ranker
    showed: use click labels alongside judged sets, not instead of them.

    Parameters
    ----------
    log : a click log, as :func:`rankmeter.clicks.fit` takes it
    model : str, ClickModel or sequence of float
        Whose propensities correct the clicks (a name is fitted to ``log``; see
        :func:`estimate_relevance`).
    estimator : {"snips", "ips"}
    clip : float
        Propensities below this count as this.
    min_impressions : int
        Pairs shown fewer times are left out.
    grades : sequence of float, or str
        Increasing thresholds, one per grade above 0 (or a comma list: ``"0.1,0.3,0.6"``).

    Returns
    -------
    Qrels

    Raises
    ------
    PolicyError
        When no pair has ``min_impressions`` impressions.
    FormatError
        When a labelled query or doc id cannot be written as TREC qrels (empty, or holding
        whitespace), naming the log.

    Examples
    --------
    >>> import pyarrow as pa
    >>> log = pa.table({"request_id": ["r1", "r1", "r2", "r2"], "query_id": ["q"] * 4,
    ...     "doc_id": ["a", "b", "b", "a"], "position": [1, 2, 1, 2],
    ...     "clicked": [True, False, False, False]})
    >>> labels(log, "pbm", min_impressions=2, grades=[0.2]).to_dict()
    {'q': {'a': 1, 'b': 0}}
    """
    min_impressions = integer(
        "min_impressions", min_impressions, low=1, what="pairs shown fewer times are left out"
    )
    thresholds = _thresholds(grades)
    table = estimate_relevance(log, model, estimator=estimator, clip=clip)
    impressions = np.asarray(table.column("impressions"), dtype=np.int64)
    kept = np.flatnonzero(impressions >= min_impressions)
    if len(kept) == 0:
        raise PolicyError(
            f"min_impressions={min_impressions}: no (query, doc) pair was shown that often "
            f"(at most {int(impressions.max())} times); lower it or give a bigger log"
        )
    relevance = np.asarray(table.column("relevance"), dtype=np.float64)[kept]
    grade = np.searchsorted(np.asarray(thresholds), relevance, side="right")
    import pyarrow as pa

    rows = pa.array(kept)
    query_ids, doc_ids = table.column("query_id").take(rows), table.column("doc_id").take(rows)
    _check_writable(query_ids, doc_ids, _source(log))
    return Qrels.from_columns(
        query_ids,
        doc_ids,
        grade.astype(np.int64),
        origin=f"clicks of {_source(log)}",
    )
