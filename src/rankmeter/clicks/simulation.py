"""A click simulator: known relevance (qrels) and a known click model make a click log, so that
the click models and the label estimators can be checked against the truth they should recover.
The clicks themselves are drawn by :func:`rankmeter.clicks.browsing.draw_clicks`, which the log
simulator of :mod:`rankmeter.online` uses too."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rankmeter import _validate
from rankmeter._validate import choice, integer, real
from rankmeter.clicks.browsing import by_grade, draw_clicks
from rankmeter.clicks.models import MODELS
from rankmeter.data.arrays import FloatArray
from rankmeter.errors import PolicyError

__all__ = ["default_attractiveness", "default_propensities", "simulate"]


def default_propensities(depth: int) -> FloatArray:
    """``1 / r`` for r = 1 .. depth: the examination probability at each rank that
    :func:`simulate` uses unless told otherwise (Joachims, Swaminathan and Schnabel, WSDM 2017,
    with eta = 1).

    >>> default_propensities(4).tolist()
    [1.0, 0.5, 0.3333333333333333, 0.25]
    """
    return 1.0 / np.arange(1, depth + 1, dtype=np.float64)


def default_attractiveness(max_grade: int) -> FloatArray:
    """The click probability of an examined result of each grade 0 .. max_grade:
    ``0.05 + 0.9 * (2**g - 1) / (2**max_grade - 1)`` (a grade-0 result is clicked now and
    then, the top grade almost always).

    >>> default_attractiveness(2).round(3).tolist()
    [0.05, 0.35, 0.95]
    """
    grades = np.arange(max_grade + 1, dtype=np.float64)
    return 0.05 + 0.9 * (2.0**grades - 1) / max(2.0**max_grade - 1, 1.0)


def _per_grade(name: str, values: Sequence[float] | None, max_grade: int) -> FloatArray:
    if values is None:
        return default_attractiveness(max_grade)
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise PolicyError(f"{name}={values!r} must be a list of probabilities, one per grade")
    checked = np.array(
        [real(f"{name}[{g}]", v, low=0, high=1) for g, v in enumerate(values)], dtype=np.float64
    )
    if len(checked) < max_grade + 1:
        raise PolicyError(
            f"{name} gives {len(checked)} probabilities but the qrels grade up to {max_grade}: "
            f"give one per grade 0 .. {max_grade}"
        )
    return checked


def simulate(
    qrels: Any,
    run: Any,
    *,
    sessions: int = 10_000,
    model: str = "pbm",
    propensities: Sequence[float] | None = None,
    depth: int = 10,
    shuffle: float = 0.5,
    attractiveness: Sequence[float] | None = None,
    satisfaction: Sequence[float] | None = None,
    gamma: float = 0.9,
    users: int | None = None,
    seed: int = 0,
) -> Any:
    """Simulate a click log from known relevance and a known click model.

    Each session is one request: a query drawn uniformly from the run's queries is shown the
    run's top ``depth`` results (in a share ``shuffle`` of the requests, a random permutation
    of them instead: without such randomisation a document is only ever seen at one rank, and
    position bias cannot be told apart from relevance). A result's attractiveness comes from
    its grade in the qrels (unjudged and negative grades count as 0); clicks follow ``model``:

    - ``pbm``: examined at rank r with probability ``propensities[r]``, clicked if attractive.
    - ``cascade``: read down the page, the first attractive result clicked, then stop.
    - ``dbn``: read down the page; an attractive result is clicked; after a click, satisfied
      (and stop) with the result's ``satisfaction``; otherwise go on with probability
      ``gamma``.
    - ``ubm``: examined with probability ``propensities[d - 1]``, d the distance from the
      previous click (from the top when none), clicked if attractive.

    Parameters
    ----------
    qrels, run : anything :func:`rankmeter.io.as_qrels` / :func:`~rankmeter.io.as_run` read
    sessions : int
        Requests to simulate (one session each).
    model : {"pbm", "cascade", "dbn", "ubm"}
    propensities : sequence of float, optional
        Examination probability per rank 1 .. depth (PBM) or per distance (UBM); default
        :func:`default_propensities`.
    depth : int
        Results shown per request (fewer where the run has fewer).
    shuffle : float
        Share of requests shown a random permutation of the top ``depth`` (0 to 1).
    attractiveness, satisfaction : sequence of float, optional
        Per grade 0 .. max grade; default :func:`default_attractiveness` (both).
    gamma : float
        DBN's probability of going on after a result that did not satisfy.
    users : int, optional
        Users the sessions are spread over (default: one per five sessions).
    seed : int
        Same seed, same log.

    Returns
    -------
    pyarrow.Table
        One row per impression with the log contract's columns: event_ts, user_id,
        session_id, request_id, query_id, result_count, latency_ms, variant ("control"),
        doc_id, position, clicked, dwell_ms (null unless clicked).

    Examples
    --------
    >>> log = simulate({"q1": {"a": 2, "b": 0}}, {"q1": {"a": 2.0, "b": 1.0}}, sessions=3)
    >>> log.num_rows, log.column_names[:4]
    (6, ['event_ts', 'user_id', 'session_id', 'request_id'])
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from rankmeter.io import as_qrels, as_run

    sessions = integer("sessions", sessions, low=1, high=100_000_000, what="requests simulated")
    model = choice("model", model, MODELS, what="the click model")
    depth = integer("depth", depth, low=1, high=1000, what="results shown per request")
    shuffle = real("shuffle", shuffle, low=0, high=1, what="share of requests shuffled")
    gamma = real("gamma", gamma, low=0, high=1, what="DBN's go-on probability")
    seed = _validate.seed(seed)
    n_users = max(sessions // 5, 1) if users is None else integer("users", users, low=1)
    if propensities is None:
        theta = default_propensities(depth)
    else:
        if isinstance(propensities, (str, bytes)) or not isinstance(propensities, Sequence):
            raise PolicyError(
                f"propensities={propensities!r} must be a list of probabilities, one per rank"
            )
        theta = np.array(
            [real(f"propensities[{r}]", p, low=0, high=1) for r, p in enumerate(propensities)],
            dtype=np.float64,
        )
        if len(theta) < depth:
            raise PolicyError(
                f"propensities gives {len(theta)} ranks but depth={depth}: give one per rank"
            )
    judged = as_qrels(qrels)
    ranked = as_run(run).head(depth).to_arrow()
    grades_table = judged.to_arrow()
    max_grade = max(int(np.floor(np.max(np.asarray(grades_table.column(2)), initial=0))), 1)
    attract_by_grade = _per_grade("attractiveness", attractiveness, max_grade)
    satisfy_by_grade = _per_grade("satisfaction", satisfaction, max_grade)

    # The grade of every (query, doc) of the run: a join on the qrels.
    keyed = ranked.append_column("row", pa.array(np.arange(ranked.num_rows)))
    grades = pa.table(
        {
            "query_id": grades_table.column(0),
            "doc_id": grades_table.column(1),
            "grade": grades_table.column(2),
        }
    )
    joined = keyed.join(grades, keys=["query_id", "doc_id"], join_type="inner")
    grade = np.zeros(ranked.num_rows)
    grade[np.asarray(joined.column("row"), dtype=np.int64)] = np.asarray(joined.column("grade"))
    row_attract = by_grade(attract_by_grade, grade)
    row_satisfy = by_grade(satisfy_by_grade, grade)

    # Queries are contiguous in the run's table: a padded (query, rank) -> row matrix.
    query_codes = np.asarray(
        pc.dictionary_encode(ranked.column("query_id").combine_chunks()).indices,
        dtype=np.int64,
    )
    n_queries = int(query_codes.max()) + 1
    counts = np.bincount(query_codes, minlength=n_queries)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    width = int(counts.max())
    ranks = np.arange(width)
    table_rows = np.where(ranks[None, :] < counts[:, None], starts[:, None] + ranks[None, :], -1)

    rng = np.random.default_rng(seed)
    asked = rng.integers(0, n_queries, sessions)
    rows = table_rows[asked]
    shown = rows >= 0
    mixed = rng.random(sessions) < shuffle
    keys = np.where(shown, rng.random(rows.shape), 2.0)
    keys[~mixed] = np.where(shown[~mixed], ranks[None, :], width + 1.0)
    rows = np.take_along_axis(rows, np.argsort(keys, axis=1, kind="stable"), axis=1)
    shown = rows >= 0
    attract = np.where(shown, row_attract[np.maximum(rows, 0)], 0.0)
    satisfy = np.where(shown, row_satisfy[np.maximum(rows, 0)], 0.0)
    clicks = draw_clicks(
        model, rng, shown, attract, examination=theta, satisfaction=satisfy, gamma=gamma
    )

    session_of, position = np.nonzero(shown)
    shown_rows = rows[shown]
    clicked = clicks[shown]
    result_count = shown.sum(axis=1)
    ids = pa.array(np.arange(sessions).astype(str))
    session_ids = pc.binary_join_element_wise("s", ids, "")
    request_ids = pc.binary_join_element_wise("r", ids, "")
    user_of_session = rng.integers(0, n_users, sessions)
    user_ids = pc.binary_join_element_wise("u", pa.array(user_of_session.astype(str)), "")
    start = np.datetime64("2026-01-01T00:00:00", "us")
    event_ts = start + (np.arange(sessions) * 7_000_000 + rng.integers(0, 1_000_000, sessions))
    latency = np.round(rng.lognormal(np.log(60.0), 0.4, sessions), 2)
    dwell = np.round(rng.lognormal(np.log(20_000.0), 1.0, len(clicked)), 1)
    take = pa.array(session_of)
    return pa.table(
        {
            "event_ts": pa.array(event_ts[session_of], type=pa.timestamp("us")),
            "user_id": user_ids.take(take),
            "session_id": session_ids.take(take),
            "request_id": request_ids.take(take),
            "query_id": ranked.column("query_id").take(pa.array(shown_rows)),
            "result_count": pa.array(result_count[session_of].astype(np.int64)),
            "latency_ms": pa.array(latency[session_of]),
            "variant": pa.array(np.full(len(session_of), "control")),
            "doc_id": ranked.column("doc_id").take(pa.array(shown_rows)),
            "position": pa.array((position + 1).astype(np.int64)),
            "clicked": pa.array(clicked),
            "dwell_ms": pa.array(dwell, mask=~clicked),
        }
    )
