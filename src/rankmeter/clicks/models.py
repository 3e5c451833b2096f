"""Click models fitted by EM: PBM, cascade, DBN and UBM.

Each model explains a click as *examination* (did the user look at the result?) times
*attractiveness* (would a look make them click?), and differs in what examination depends on
(Chuklin, Markov and de Rijke, *Click Models for Web Search*, Morgan & Claypool 2015, chapters
3 and 4, the reference for every formula here):

- **PBM** (position-based model): ``P(C_r = 1) = theta_r * alpha_qd``; examination depends on
  the rank alone.
- **cascade**: the user reads down the page and clicks the first attractive result, then stops:
  ``P(C_r = 1) = alpha_r * prod_{j<r} (1 - alpha_j)``. Fitted in closed form (clicks over
  examinations, a result counting as examined when it is at or above the first click).
- **DBN** (dynamic Bayesian network, Chapelle and Zhang, WWW 2009): after a click the user is
  satisfied with probability ``sigma_qd`` and stops; otherwise (and after a result not clicked)
  goes on to the next result with probability ``gamma``. The relevance of a pair is
  ``alpha * sigma``.
- **UBM** (user browsing model, Dupret and Piwowarski, SIGIR 2008):
  ``P(C_r = 1) = gamma_{r, r'} * alpha_qd``, ``r'`` the rank of the previous click (0: none).

EM here is vectorised NumPy: the expected examinations and attractions of every impression
are computed at once on the log's request-by-position matrices (a loop over positions for
DBN, none over sessions), and summed per (query, doc) pair and per rank with ``np.bincount``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter import _validate
from rankmeter._validate import choice, integer, real
from rankmeter.clicks.counts import ClickCounts, _previous_click, click_counts
from rankmeter.clicks.log import ClickLog, click_log, readonly
from rankmeter.data.arrays import FloatArray, IntArray
from rankmeter.errors import PolicyError

__all__ = ["MODELS", "ClickModel", "ModelEvaluation", "evaluate_model", "fit"]

MODELS = ("pbm", "cascade", "dbn", "ubm")
#: Probabilities are kept within [EPS, 1 - EPS]: a log-likelihood stays finite when a model
#: rules out what happened (a second click under the cascade model), as in PyClick.
EPS = 1e-6
_PRIOR = 0.5  # the starting value of every probability EM fits (before the seeded jitter)

Matrix = npt.NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class ClickModel:
    """A click model fitted to a log by :func:`fit`.

    Attributes
    ----------
    model : str
        ``"pbm"``, ``"cascade"``, ``"dbn"`` or ``"ubm"``.
    query_ids, doc_ids : pyarrow string arrays
        The (query, doc) pairs of the training log, one per entry of the arrays below.
    attractiveness : ndarray of float
        ``alpha_qd`` per pair: the probability of a click once the result is examined.
    impressions, clicks : ndarray of int
        How often each pair was shown and clicked in the training log.
    satisfaction : ndarray of float or None
        DBN's ``sigma_qd`` per pair (pairs never clicked keep the prior 0.5); None otherwise.
    gamma : float or None
        DBN's probability of going on to the next result when not satisfied.
    examination : ndarray of float or None
        PBM's ``theta_r`` (one per rank); UBM's ``gamma[r, r']`` (rank by rank of the previous
        click, 0 for none); None for cascade and DBN, whose examination follows from the
        results above.
    propensities : ndarray of float
        Position bias per rank, normalised to rank 1: PBM's ``theta_r / theta_1``; for the
        other models the mean posterior probability that a result shown at rank r was
        examined (given the clicks of its request), over the training log, over that of rank 1.
    default_attractiveness, default_satisfaction : float
        What a pair the model never saw is given: the mean over the training impressions
        (clicks for satisfaction).
    iterations : int
        EM iterations run (1 for the closed-form cascade fit).
    converged : bool
        Whether the training log-likelihood per session changed by less than ``tol``.
    log_likelihood : float
        Mean log-likelihood per training request (natural log).
    sessions, depth : int
        Training requests and the deepest position.
    """

    model: str
    query_ids: Any
    doc_ids: Any
    attractiveness: FloatArray
    impressions: IntArray
    clicks: IntArray
    satisfaction: FloatArray | None
    gamma: float | None
    examination: FloatArray | None
    propensities: FloatArray
    default_attractiveness: float
    default_satisfaction: float
    iterations: int
    converged: bool
    log_likelihood: float
    sessions: int
    depth: int

    def __repr__(self) -> str:
        return (
            f"ClickModel({self.model}, {self.sessions:,} sessions, {len(self.impressions):,} "
            f"pairs, log-likelihood {self.log_likelihood:.4f})"
        )

    def pairs(self) -> Any:
        """The per-pair parameters as a pyarrow Table: query_id, doc_id, impressions, clicks,
        attractiveness (and satisfaction, relevance = attractiveness x satisfaction, for DBN)."""
        import pyarrow as pa

        columns: dict[str, Any] = {
            "query_id": self.query_ids,
            "doc_id": self.doc_ids,
            "impressions": pa.array(self.impressions),
            "clicks": pa.array(self.clicks),
            "attractiveness": pa.array(self.attractiveness),
        }
        if self.satisfaction is not None:
            columns["satisfaction"] = pa.array(self.satisfaction)
            columns["relevance"] = pa.array(self.attractiveness * self.satisfaction)
        return pa.table(columns)

    def to_dict(self) -> dict[str, Any]:
        """The fit's figures and the propensities per rank (not the per-pair parameters: see
        :meth:`pairs`)."""
        return {
            "model": self.model,
            "sessions": self.sessions,
            "pairs": len(self.impressions),
            "impressions": int(self.impressions.sum()),
            "clicks": int(self.clicks.sum()),
            "iterations": self.iterations,
            "converged": self.converged,
            "log_likelihood": self.log_likelihood,
            "gamma": self.gamma,
            "propensities": {str(r + 1): float(p) for r, p in enumerate(self.propensities)},
        }


@dataclass(frozen=True, eq=False)
class ModelEvaluation:
    """How well a fitted click model predicts the clicks of held-out requests
    (:func:`evaluate_model`).

    Attributes
    ----------
    model : str
    sessions, impressions : int
        Held-out requests and impressions.
    unseen : int
        Held-out impressions of pairs the model never saw (given its default attractiveness).
    log_likelihood : float
        Mean log-likelihood per request (natural log): higher is better.
    perplexity : float
        The mean of the perplexities per rank: 1 is perfect, 2 is a coin flip.
    perplexity_by_rank : ndarray of float
        Perplexity at each rank 1, 2, ... (NaN at a rank no held-out request reaches).
    """

    model: str
    sessions: int
    impressions: int
    unseen: int
    log_likelihood: float
    perplexity: float
    perplexity_by_rank: FloatArray

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "sessions": self.sessions,
            "impressions": self.impressions,
            "unseen_impressions": self.unseen,
            "log_likelihood": self.log_likelihood,
            "perplexity": self.perplexity,
            "perplexity_by_rank": {
                str(r + 1): float(p) for r, p in enumerate(self.perplexity_by_rank)
            },
        }


# -- the probabilities each model gives every impression -------------------------------------


@dataclass(frozen=True)
class _Params:
    """A model's parameters laid out for one log: per pair of that log, per rank."""

    model: str
    alpha: FloatArray  # per pair of the log
    sigma: FloatArray | None
    gamma: float | None
    examination: FloatArray | None  # PBM: (depth,), UBM: (depth, depth + 1); log's depth


def _cells(log: ClickLog, alpha: FloatArray, fill: float = 0.0) -> Matrix:
    """A per-pair value spread over the log's matrix; ``fill`` where nothing was shown."""
    values = np.full(log.pairs.shape, fill)
    shown = log.shown
    values[shown] = alpha[log.pairs[shown]]
    return values


def _forward(
    log: ClickLog, attract: Matrix, satisfy: Matrix, go_on: Matrix
) -> tuple[Matrix, Matrix]:
    """DBN's (and cascade's: ``satisfy = 1``, ``go_on = 1``) click probabilities per cell:
    conditional on the clicks above (for the log-likelihood) and unconditional (for the
    perplexity). An empty cell passes the user through unchanged."""
    clicks = log.clicks
    conditional = np.zeros(log.pairs.shape)
    marginal = np.zeros(log.pairs.shape)
    examined_given_clicks = np.ones(log.n_sessions)
    examined = np.ones(log.n_sessions)
    for r in range(log.depth):
        a, s, g = attract[:, r], satisfy[:, r], go_on[:, r]
        p = examined_given_clicks * a
        conditional[:, r] = p
        marginal[:, r] = examined * a
        not_clicked = examined_given_clicks * (1 - a) / np.maximum(1 - p, EPS)
        examined_given_clicks = g * np.where(clicks[:, r], 1 - s, not_clicked)
        examined = examined * g * (1 - a * s)
    return conditional, marginal


def _probabilities(params: _Params, log: ClickLog) -> tuple[Matrix, Matrix]:
    """(conditional, marginal) click probability of every cell of ``log``."""
    attract = _cells(log, params.alpha)
    if params.model == "pbm":
        assert params.examination is not None
        both = attract * params.examination[None, : log.depth]
        return both, both
    if params.model == "ubm":
        assert params.examination is not None
        gammas = params.examination
        previous = _previous_click(log.clicks)
        ranks = np.arange(log.depth)[None, :]
        conditional = gammas[ranks, previous] * attract
        # The marginal sums over where the previous click may have been: a distribution over
        # the position of the last click so far, carried down the page.
        state = np.zeros((log.n_sessions, log.depth + 1))
        state[:, 0] = 1.0
        marginal = np.zeros(log.pairs.shape)
        for r in range(log.depth):
            click_by_state = state * gammas[r][None, :] * attract[:, r : r + 1]
            marginal[:, r] = click_by_state.sum(axis=1)
            state = state - click_by_state
            state[:, r + 1] += marginal[:, r]
        return conditional, marginal
    shown = log.shown
    if params.model == "cascade":
        satisfy = np.ones(log.pairs.shape)
        go_on = np.ones(log.pairs.shape)
    else:
        assert params.sigma is not None and params.gamma is not None
        satisfy = _cells(log, params.sigma)
        go_on = np.where(shown, params.gamma, 1.0)
    return _forward(log, attract, satisfy, go_on)


def _log_likelihood(conditional: Matrix, log: ClickLog) -> float:
    """Mean over requests of log P(clicks of the request) (natural log)."""
    shown = log.shown
    p = np.clip(conditional[shown], EPS, 1 - EPS)
    clicked = log.clicks[shown]
    total = np.log(p[clicked]).sum() + np.log1p(-p[~clicked]).sum()
    return float(total) / log.n_sessions


# -- EM ------------------------------------------------------------------------------------


def _per_pair(log: ClickLog, values: npt.NDArray[Any], where: npt.NDArray[np.bool_]) -> Matrix:
    summed = np.bincount(log.pairs[where], weights=values[where], minlength=log.n_pairs)
    return summed.astype(np.float64)


def _clip(values: Matrix) -> Matrix:
    return np.clip(values, EPS, 1 - EPS)


def _fit_factorised(
    counts: ClickCounts, model: str, rng: np.random.Generator, max_iter: int, tol: float
) -> tuple[_Params, FloatArray, int, bool, float]:
    """EM for PBM and UBM: P(C) = examination[k] * alpha_qd, k the rank (PBM) or the pair
    (rank, rank of the previous click) (UBM). The E-step's posteriors of a result not clicked:
    P(E=1 | C=0) = e (1 - a) / (1 - e a), P(A=1 | C=0) = (1 - e) a / (1 - e a); a click means
    E = A = 1. The M-step averages them per pair and per k. Impressions that agree on (pair,
    rank, previous click, clicked) have the same posteriors: each cell of ``counts`` stands
    for ``count`` of them."""
    pairs = counts.pair
    ranks = counts.rank
    clicked = counts.clicked
    weight = counts.count.astype(np.float64)
    depth = counts.depth
    if model == "pbm":
        k = ranks
        n_k = depth
    else:
        k = ranks * (depth + 1) + counts.previous
        n_k = depth * (depth + 1)
    shown_per_pair = np.bincount(pairs, weight, counts.n_pairs)
    shown_per_k = np.bincount(k, weight, n_k)
    alpha = _clip(_PRIOR + rng.uniform(-0.1, 0.1, counts.n_pairs))
    exam = _clip(_PRIOR + rng.uniform(-0.1, 0.1, n_k))
    previous_ll = -math.inf
    converged = False
    iterations = 0
    posterior_e = np.ones(len(pairs))
    ll = -math.inf
    while iterations < max_iter:
        iterations += 1
        e, a = exam[k], alpha[pairs]
        missed = np.maximum(1 - e * a, EPS)
        posterior_e = np.where(clicked, 1.0, e * (1 - a) / missed)
        posterior_a = np.where(clicked, 1.0, (1 - e) * a / missed)
        alpha = _clip(np.bincount(pairs, posterior_a * weight, counts.n_pairs) / shown_per_pair)
        summed = np.bincount(k, posterior_e * weight, n_k)
        exam = _clip(np.where(shown_per_k > 0, summed / np.maximum(shown_per_k, 1), exam))
        ll = _counts_log_likelihood(exam[k] * alpha[pairs], counts)
        if abs(ll - previous_ll) < tol:
            converged = True
            break
        previous_ll = ll
    if model == "pbm":
        examined_by_rank = exam
        examination = exam
    else:
        examination = exam.reshape(depth, depth + 1)
        examined_by_rank = np.bincount(ranks, posterior_e * weight, depth) / np.maximum(
            np.bincount(ranks, weight, depth), 1
        )
    params = _Params(model, alpha, None, None, examination)
    return params, examined_by_rank, iterations, converged, ll


def _counts_log_likelihood(probability: Matrix, counts: ClickCounts) -> float:
    """Mean over requests of log P(clicks of the request), each cell's click probability
    (given the clicks above it) counted ``count`` times."""
    p = _clip(probability)
    logs = np.where(counts.clicked, np.log(p), np.log1p(-p))
    return float((logs * counts.count).sum()) / counts.sessions


def _fit_cascade(counts: ClickCounts) -> tuple[_Params, FloatArray, int, bool, float]:
    """Closed form: a result is examined when it is at or above the first click of its
    request (every result of a request without clicks), that is when no click is above it;
    alpha = clicks / examinations. A result below a click has click probability 0 (kept at
    1e-6 in the log-likelihood)."""
    examined = counts.previous == 0
    seen = counts.per_pair(examined)
    clicked = counts.per_pair(examined & counts.clicked)
    prior = float(clicked.sum() / max(seen.sum(), 1))
    alpha = _clip(np.where(seen > 0, clicked / np.maximum(seen, 1), prior))
    depth = counts.depth
    by_rank = np.bincount(counts.rank, examined * counts.count, depth) / np.maximum(
        np.bincount(counts.rank, counts.count, depth), 1
    )
    params = _Params("cascade", alpha, None, None, None)
    ll = _counts_log_likelihood(np.where(examined, alpha[counts.pair], 0.0), counts)
    return params, by_rank.astype(np.float64), 1, True, ll


def _dbn_posteriors(
    log: ClickLog, attract: Matrix, satisfy: Matrix, go_on: Matrix
) -> tuple[Matrix, Matrix, Matrix]:
    """The E-step of DBN (Chapelle and Zhang 2009): posteriors of examination, attraction
    and satisfaction of every cell given its request's clicks.

    Above the last click every result was examined (attracted iff clicked, never satisfied);
    at the last click the user was satisfied with probability sigma / Z; below it the user
    examined result r with probability F_r Q_r / Z, where Q_r is the probability of no click
    from r down given r is examined (a backward pass), F_r that of reaching r without a click
    (a forward pass) and Z that of no click below the last one."""
    n, depth = log.pairs.shape
    clicks = log.clicks
    rows = np.arange(n)
    q = np.ones((n, depth + 1))
    for r in range(depth - 1, -1, -1):
        q[:, r] = (1 - attract[:, r]) * ((1 - go_on[:, r]) + go_on[:, r] * q[:, r + 1])
    any_click = clicks.any(axis=1)
    last = np.where(any_click, depth - 1 - np.argmax(clicks[:, ::-1], axis=1), -1)
    at_last = np.maximum(last, 0)
    sigma_last = np.where(any_click, satisfy[rows, at_last], 0.0)
    reach = np.where(any_click, (1 - sigma_last) * go_on[rows, at_last], 1.0)
    start = last + 1
    z = np.maximum((1 - reach) + reach * q[rows, start], EPS)
    examined = np.zeros((n, depth))
    forward = np.zeros(n)
    for r in range(depth):
        if r > 0:
            forward = forward * (1 - attract[:, r - 1]) * go_on[:, r - 1]
        forward = np.where(start == r, reach, np.where(start < r, forward, 0.0))
        examined[:, r] = np.where(r <= last, 1.0, forward * q[:, r] / z)
    below = np.arange(depth)[None, :] > last[:, None]
    attracted = np.where(below, (1 - examined) * attract, clicks.astype(np.float64))
    satisfied = np.zeros((n, depth))
    satisfied[rows[any_click], last[any_click]] = sigma_last[any_click] / z[any_click]
    return examined, attracted, satisfied


def _fit_dbn(
    log: ClickLog,
    rng: np.random.Generator,
    max_iter: int,
    tol: float,
    gamma: float | None,
) -> tuple[_Params, FloatArray, int, bool, float]:
    shown = log.shown
    clicks = log.clicks
    depth = log.depth
    shown_per_pair = np.bincount(log.pairs[shown], minlength=log.n_pairs)
    clicks_per_pair = np.bincount(log.pairs[clicks], minlength=log.n_pairs)
    # Where gamma is counted: a shown result with another shown below it (after the last
    # one there is nothing to go on to, so it says nothing about gamma).
    shown_below = np.zeros(log.pairs.shape, dtype=bool)
    shown_below[:, :-1] = np.flip(np.logical_or.accumulate(np.flip(shown[:, 1:], 1), 1), 1)
    transitions = shown & shown_below
    alpha = _clip(_PRIOR + rng.uniform(-0.1, 0.1, log.n_pairs))
    sigma = _clip(_PRIOR + rng.uniform(-0.1, 0.1, log.n_pairs))
    fitted_gamma = gamma is None
    g = _clip(np.array(_PRIOR + rng.uniform(-0.1, 0.1))) if gamma is None else gamma
    current = float(g)
    previous_ll = -math.inf
    converged = False
    iterations = 0
    ll = -math.inf
    examined = np.ones(log.pairs.shape)
    while iterations < max_iter:
        iterations += 1
        attract = _cells(log, alpha)
        satisfy = _cells(log, sigma)
        go_on = np.where(shown, current, 1.0)
        examined, attracted, satisfied = _dbn_posteriors(log, attract, satisfy, go_on)
        alpha = _clip(_per_pair(log, attracted, shown) / np.maximum(shown_per_pair, 1))
        summed = _per_pair(log, satisfied, clicks)
        sigma = _clip(np.where(clicks_per_pair > 0, summed / np.maximum(clicks_per_pair, 1), sigma))
        if fitted_gamma:
            # E at the next shown result, for every shown result with one below it.
            next_examined = np.zeros(log.pairs.shape)
            carried = np.zeros(log.n_sessions)
            for r in range(depth - 1, -1, -1):
                next_examined[:, r] = carried
                carried = np.where(shown[:, r], examined[:, r], carried)
            went_on = (examined - satisfied)[transitions].sum()
            if went_on > 0:
                current = float(np.clip(next_examined[transitions].sum() / went_on, EPS, 1 - EPS))
        params = _Params("dbn", alpha, sigma, current, None)
        conditional, _ = _probabilities(params, log)
        ll = _log_likelihood(conditional, log)
        if abs(ll - previous_ll) < tol:
            converged = True
            break
        previous_ll = ll
    by_rank = (examined * shown).sum(axis=0) / np.maximum(shown.sum(axis=0), 1)
    return _Params("dbn", alpha, sigma, current, None), by_rank, iterations, converged, ll


def _as_click_log(log: Any) -> ClickLog:
    """The request by position matrix DBN and the held-out measures need."""
    if isinstance(log, ClickCounts):
        raise PolicyError(
            "this needs each request's clicks in order (DBN, held-out perplexity): give the "
            "log itself, not its ClickCounts"
        )
    return click_log(log)


def fit(
    log: Any,
    model: str = "pbm",
    *,
    max_iter: int = 200,
    tol: float = 1e-7,
    seed: int = 0,
    gamma: float | None = None,
) -> ClickModel:
    """Fit a click model to a log by EM (cascade: in closed form).

    Parameters
    ----------
    log : a click log: a pyarrow Table (or Ibis table, pandas/polars DataFrame) with the
        columns request_id, query_id (or query_text), doc_id, position, clicked; or a
        :class:`~rankmeter.clicks.ClickLog`. Each request is one session of the model.
        PBM, UBM and cascade fit the log's :class:`~rankmeter.clicks.ClickCounts` (which
        may also be given): for an Ibis table they are counted in its engine (DuckDB,
        Spark) and only the counts come to Python. DBN reads each request's clicks.
    model : {"pbm", "cascade", "dbn", "ubm"}
    max_iter : int
        At most this many EM iterations.
    tol : float
        Stop when the mean log-likelihood per request changes by less than this.
    seed : int
        Seeds the starting values (0.5 each, jittered by up to 0.1): same seed, same fit.
    gamma : float, optional
        DBN only: the probability of going on after a result that did not satisfy, fixed
        (strictly between 0 and 1); fitted by EM when None.

    Returns
    -------
    ClickModel

    Examples
    --------
    A cascade user clicks the first attractive result and stops, so a result below a click
    was not examined:

    >>> import pyarrow as pa
    >>> log = pa.table({"request_id": ["r1", "r1", "r2", "r2"], "query_id": ["q"] * 4,
    ...     "doc_id": ["a", "b", "a", "b"], "position": [1, 2, 1, 2],
    ...     "clicked": [True, False, False, True]})
    >>> model = fit(log, "cascade")
    >>> [round(a, 3) for a in model.pairs().column("attractiveness").to_pylist()]
    [0.5, 1.0]
    >>> model.propensities.tolist()  # rank 2 examined in one request of two
    [1.0, 0.5]
    """
    model = choice("model", model, MODELS, what="the click model")
    max_iter = integer("max_iter", max_iter, low=1, what="EM iterations at most")
    tol = real("tol", tol, low=0, open_low=True, what="the change of log-likelihood that stops EM")
    seed = _validate.seed(seed)
    if gamma is not None:
        if model != "dbn":
            raise PolicyError(f"gamma={gamma!r} is a parameter of the DBN model, not of {model}")
        gamma = real(
            "gamma", gamma, low=0, high=1, open_low=True, open_high=True, what="DBN's go-on"
        )
    rng = np.random.default_rng(seed)
    data: ClickLog | ClickCounts
    if model == "dbn":
        data = _as_click_log(log)
        params, by_rank, iterations, converged, ll = _fit_dbn(data, rng, max_iter, tol, gamma)
        shown = data.shown
        impressions = np.bincount(data.pairs[shown], minlength=data.n_pairs)
        clicks = np.bincount(data.pairs[data.clicks], minlength=data.n_pairs)
        sessions = data.n_sessions
    else:
        data = click_counts(log)
        if model == "cascade":
            params, by_rank, iterations, converged, ll = _fit_cascade(data)
        else:
            params, by_rank, iterations, converged, ll = _fit_factorised(
                data, model, rng, max_iter, tol
            )
        impressions = data.per_pair().astype(np.int64)
        clicks = data.per_pair(data.clicked).astype(np.int64)
        sessions = data.sessions
    default_alpha = float((params.alpha * impressions).sum() / max(impressions.sum(), 1))
    default_sigma = 0.5
    if params.sigma is not None and clicks.sum() > 0:
        default_sigma = float((params.sigma * clicks).sum() / clicks.sum())
    propensities = by_rank / by_rank[0] if by_rank[0] > 0 else np.full(len(by_rank), np.nan)
    return ClickModel(
        model=model,
        query_ids=data.query_ids,
        doc_ids=data.doc_ids,
        attractiveness=readonly(params.alpha),
        impressions=readonly(impressions.astype(np.int64)),
        clicks=readonly(clicks.astype(np.int64)),
        satisfaction=None if params.sigma is None else readonly(params.sigma),
        gamma=params.gamma,
        examination=None if params.examination is None else readonly(params.examination),
        propensities=readonly(np.asarray(propensities, dtype=np.float64)),
        default_attractiveness=default_alpha,
        default_satisfaction=default_sigma,
        iterations=iterations,
        converged=converged,
        log_likelihood=ll,
        sessions=sessions,
        depth=data.depth,
    )


def _pair_index(model: ClickModel, log: ClickLog) -> IntArray:
    """For each pair of ``log``, its index in the model (-1: the model never saw it)."""
    import pyarrow as pa

    known = pa.table(
        {"q": model.query_ids, "d": model.doc_ids, "i": pa.array(np.arange(len(model.doc_ids)))}
    )
    wanted = pa.table({"q": log.query_ids, "d": log.doc_ids, "j": pa.array(np.arange(log.n_pairs))})
    joined = wanted.join(known, keys=["q", "d"], join_type="inner")
    index = np.full(log.n_pairs, -1, dtype=np.int64)
    index[np.asarray(joined.column("j"), dtype=np.int64)] = np.asarray(
        joined.column("i"), dtype=np.int64
    )
    return index


def _examination_for(model: ClickModel, depth: int) -> FloatArray | None:
    """The model's examination parameters for a log ``depth`` deep: ranks past the model's
    deepest take its deepest rank's values."""
    if model.examination is None:
        return None
    ranks = np.minimum(np.arange(depth), model.depth - 1)
    if model.model == "pbm":
        return model.examination[ranks]
    previous = np.minimum(np.arange(depth + 1), model.depth)
    return model.examination[ranks][:, previous]


def evaluate_model(model: ClickModel, log: Any) -> ModelEvaluation:
    """Log-likelihood and perplexity of a fitted model on held-out requests.

    The log-likelihood of a request is ``log P(C_1, ..., C_n)``, the product of each click's
    probability given the clicks above it; it is averaged over requests. The perplexity at
    rank r is ``2 ** (-1/|S| * sum_s (c_r log2 q_r + (1 - c_r) log2 (1 - q_r)))``, ``q_r``
    the model's probability of a click at rank r *not* conditioned on the other clicks, over
    the held-out requests S that reach rank r; the perplexity reported is the mean over ranks
    (Dupret and Piwowarski, SIGIR 2008; Chuklin, Markov and de Rijke, *Click Models for Web
    Search*, 2015, section 4.2; PyClick computes the same). Probabilities are kept within
    [1e-6, 1 - 1e-6].

    Pairs the model never saw get its default attractiveness (and satisfaction): the mean over
    its training log.

    Parameters
    ----------
    model : ClickModel
        A fit (see :func:`fit`).
    log : a click log, as :func:`fit` takes it

    Returns
    -------
    ModelEvaluation

    Examples
    --------
    >>> import pyarrow as pa
    >>> log = pa.table({"request_id": ["r1", "r2"], "query_id": ["q", "q"],
    ...     "doc_id": ["a", "a"], "position": [1, 1], "clicked": [True, False]})
    >>> result = evaluate_model(fit(log, "pbm"), log)
    >>> round(result.perplexity, 6)  # a click half the time: a coin flip
    2.0
    """
    if not isinstance(model, ClickModel):
        raise PolicyError(f"model must be a ClickModel (from rankmeter.clicks.fit), not {model!r}")
    data = _as_click_log(log)
    index = _pair_index(model, data)
    seen = index >= 0
    alpha = np.where(seen, model.attractiveness[np.maximum(index, 0)], model.default_attractiveness)
    sigma = None
    if model.satisfaction is not None:
        sigma = np.where(seen, model.satisfaction[np.maximum(index, 0)], model.default_satisfaction)
    params = _Params(model.model, alpha, sigma, model.gamma, _examination_for(model, data.depth))
    conditional, marginal = _probabilities(params, data)
    shown = data.shown
    q = np.clip(marginal, EPS, 1 - EPS)
    bits = np.where(data.clicks, np.log2(q), np.log2(1 - q))
    reached = shown.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        by_rank = 2.0 ** (-(bits * shown).sum(axis=0) / reached)
    by_rank = np.where(reached > 0, by_rank, np.nan)
    unseen = int(np.count_nonzero(~seen[data.pairs[shown]]))
    return ModelEvaluation(
        model=model.model,
        sessions=data.n_sessions,
        impressions=data.n_impressions,
        unseen=unseen,
        log_likelihood=_log_likelihood(conditional, data),
        perplexity=float(np.nanmean(by_rank)),
        perplexity_by_rank=readonly(by_rank.astype(np.float64)),
    )
