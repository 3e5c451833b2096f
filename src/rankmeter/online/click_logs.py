"""Click models over a search log file, as ``rankmeter clicks fit|labels`` run them: the log
read and checked by :func:`rankmeter.online.read_log` (the log contract), the columns the
click models read taken from it in the engine, then :mod:`rankmeter.clicks` fits, measures
and labels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["CLICK_COLUMNS", "ClickLabels", "click_labels", "fit_click_model", "read_click_log"]

#: The log columns the click models read.
CLICK_COLUMNS = ("request_id", "query_id", "query_text", "doc_id", "position", "clicked")


def read_click_log(
    path: str,
    *,
    engine: str = "duckdb",
    ts_unit: str = "s",
    ordered: bool = True,
    counted: bool = False,
) -> Any:
    """The log at ``path`` as the click models read it: read and checked by
    :func:`rankmeter.online.read_log` in ``engine`` (``ts_unit`` and ``ordered`` are how it
    reads); ``counted``: its impressions counted per (pair, rank, previous click, clicked) in
    the engine (:class:`rankmeter.clicks.ClickCounts`: PBM, UBM, cascade and the labels need
    no more), else the columns the models need pulled out as Arrow
    (:class:`rankmeter.clicks.ClickLog`)."""
    from rankmeter.clicks import click_counts, click_log
    from rankmeter.online.logs import read_log

    log = read_log(path, engine=engine, ts_unit=ts_unit, ordered=ordered)
    columns = [c for c in CLICK_COLUMNS if c in log.columns]
    if counted:
        return click_counts(log.select(columns), source=path)
    return click_log(log.select(columns).to_pyarrow(), source=path)


def fit_click_model(
    path: str,
    model: str = "pbm",
    *,
    held_out: float = 0.2,
    max_iter: int = 200,
    tol: float = 1e-7,
    gamma: float | None = None,
    seed: int = 0,
    engine: str = "duckdb",
    ts_unit: str = "s",
    ordered: bool = True,
) -> tuple[Any, Any]:
    """Fit a click model (:func:`rankmeter.clicks.fit`) to the log at ``path``; with
    ``held_out`` (a share of requests, split by :func:`rankmeter.clicks.split_log` with
    ``seed``) the held-out requests measure the fit. Returns the fitted
    :class:`~rankmeter.clicks.ClickModel` and its
    :class:`~rankmeter.clicks.ModelEvaluation` (None when ``held_out`` is 0)."""
    from rankmeter.clicks import evaluate_model, fit, split_log

    # Without a held-out split, the models fitted on counts read only those (DBN and the
    # held-out measures need each request's clicks in order).
    counted = held_out == 0 and model != "dbn"
    data = read_click_log(path, engine=engine, ts_unit=ts_unit, ordered=ordered, counted=counted)
    if held_out == 0:
        train, test = data, None
    else:
        train, test = split_log(data, held_out, seed=seed)
    fitted = fit(train, model, max_iter=max_iter, tol=tol, seed=seed, gamma=gamma)
    return fitted, None if test is None else evaluate_model(fitted, test)


@dataclass(frozen=True)
class ClickLabels:
    """Graded qrels from a log's clicks, with how many (query, doc) pairs and sessions the
    log held."""

    qrels: Any
    n_pairs: int
    n_sessions: int


def click_labels(
    path: str,
    model: str = "pbm",
    *,
    estimator: str = "snips",
    clip: float = 0.05,
    min_impressions: int = 20,
    grades: Any = "0.1,0.3,0.6",
    seed: int = 0,
    engine: str = "duckdb",
    ts_unit: str = "s",
    ordered: bool = True,
) -> ClickLabels:
    """The log at ``path``'s clicks into graded qrels (:func:`rankmeter.clicks.labels`),
    corrected for position bias by ``model`` fitted to the same log."""
    from rankmeter.clicks import fit, labels

    data = read_click_log(
        path, engine=engine, ts_unit=ts_unit, ordered=ordered, counted=model != "dbn"
    )
    fitted = fit(data, model, seed=seed)
    qrels = labels(
        data,
        fitted,
        estimator=estimator,
        clip=clip,
        min_impressions=min_impressions,
        grades=grades,
    )
    return ClickLabels(qrels, data.n_pairs, data.n_sessions)
