"""How a simulated user reads a results page: the click models as draws, shared by both
simulators (:func:`rankmeter.clicks.simulate`, one request per session, and
:func:`rankmeter.online.simulate_log`, users, sessions and variants).

Each request is a row of a ``[requests, depth]`` matrix: ``shown`` marks the results on the
page (a prefix of each row), ``attractiveness`` the probability that an examined result is
clicked. :func:`draw_clicks` draws the clicks of every request at once, vectorised over
requests (a loop over the ranks only where a model reads the page step by step):

- ``pbm``: a result at rank r is examined with probability ``examination[r]`` and clicked if
  examined and attractive.
- ``cascade``: the page is read from the top; the first attractive result is clicked, and the
  user stops.
- ``dbn``: read from the top; an attractive result is clicked; after a click the user is
  satisfied (and stops) with the result's ``satisfaction``, else goes on with probability
  ``gamma`` (a result not shown never stops the reading).
- ``ubm``: a result is examined with probability ``examination[d - 1]``, d the distance from
  the previous click (from the top when none), and clicked if examined and attractive.

The draws, in order, from the generator given: the seed of a simulated log depends on them.
One ``[requests, depth]`` matrix of uniforms decides attraction; with PBM,
``pbm_draws=2`` (the click simulator's) draws a second matrix for examination, and
``pbm_draws=1`` (the log simulator's) lets the first decide both at once (a result is clicked
when its uniform is below attractiveness × examination: the same distribution, one draw); UBM
then draws one uniform per request and rank for examination, DBN two (satisfaction, then
going on).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from rankmeter._validate import choice, integer
from rankmeter.clicks.models import MODELS
from rankmeter.data.arrays import FloatArray
from rankmeter.errors import PolicyError

__all__ = ["by_grade", "draw_clicks"]

BoolArray = npt.NDArray[np.bool_]


def by_grade(values: FloatArray, grades: npt.ArrayLike) -> FloatArray:
    """``values[g]`` for each grade: the grade rounded down, an unknown (NaN) or negative grade
    as 0, one above the last value as the last.

    >>> by_grade(np.array([0.1, 0.5, 0.9]), [[-1.0, 1.5, 7.0, np.nan]]).tolist()
    [[0.1, 0.5, 0.9, 0.1]]
    """
    index = np.floor(np.nan_to_num(np.asarray(grades, dtype=np.float64)))
    return np.asarray(values)[np.clip(index, 0, len(values) - 1).astype(np.int64)]


def draw_clicks(
    model: str,
    rng: np.random.Generator,
    shown: BoolArray,
    attractiveness: FloatArray,
    *,
    examination: FloatArray | None = None,
    satisfaction: FloatArray | None = None,
    gamma: float = 1.0,
    pbm_draws: int = 2,
) -> BoolArray:
    """The clicks of every request (``[requests, depth]``, True where clicked) under ``model``.

    Parameters
    ----------
    model : {"pbm", "cascade", "dbn", "ubm"}
    rng : numpy.random.Generator
        The draws come from it in the order the module docstring gives.
    shown : bool array [requests, depth]
        The results on each page: a prefix of each row.
    attractiveness : float array [requests, depth]
        Probability that an examined result is clicked.
    examination : float array, optional
        PBM: per rank (at least ``depth`` values); UBM: per distance from the previous click.
    satisfaction : float array [requests, depth], optional
        DBN: probability that a click satisfies the user.
    gamma : float
        DBN: probability of going on after a result that did not satisfy.
    pbm_draws : {1, 2}
        PBM: one uniform per result (clicked below attractiveness × examination) or two
        (attraction, then examination).

    >>> rng = np.random.default_rng(0)
    >>> shown = np.array([[True, True, False]])
    >>> draw_clicks("cascade", rng, shown, np.array([[1.0, 1.0, 1.0]])).tolist()
    [[True, False, False]]
    """
    model = choice("model", model, MODELS, what="the click model")
    pbm_draws = integer("pbm_draws", pbm_draws, low=1, high=2)
    n, depth = shown.shape
    if model == "pbm" and pbm_draws == 1:
        theta = _needed("examination", examination, model)[None, :depth]
        return shown & (rng.random((n, depth)) < attractiveness * theta)
    attracted = rng.random((n, depth)) < attractiveness
    if model == "pbm":
        theta = _needed("examination", examination, model)[None, :depth]
        return shown & attracted & (rng.random((n, depth)) < theta)
    if model == "cascade":
        candidate = shown & attracted
        first = np.where(candidate.any(axis=1), candidate.argmax(axis=1), depth)
        return np.asarray(np.arange(depth)[None, :] == first[:, None], dtype=np.bool_)
    clicks = np.zeros((n, depth), dtype=bool)
    if model == "ubm":
        by_distance = _needed("examination", examination, model)
        previous = np.zeros(n, dtype=np.int64)
        for r in range(depth):
            examined = rng.random(n) < by_distance[r - previous]
            clicks[:, r] = shown[:, r] & attracted[:, r] & examined
            previous = np.where(clicks[:, r], r + 1, previous)
        return clicks
    satisfy = _needed("satisfaction", satisfaction, model)
    reading = np.ones(n, dtype=bool)
    for r in range(depth):
        clicks[:, r] = reading & shown[:, r] & attracted[:, r]
        satisfied = clicks[:, r] & (rng.random(n) < satisfy[:, r])
        going_on = (rng.random(n) < gamma) | ~shown[:, r]
        reading &= ~satisfied & going_on
    return clicks


def _needed(name: str, values: FloatArray | None, model: str) -> FloatArray:
    if values is None:
        raise PolicyError(f"the {model} click model needs {name}=")
    return values
