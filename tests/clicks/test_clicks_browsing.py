"""The click-model core both simulators draw from (rankmeter.clicks.browsing): each model's
clicks, and the order of the draws that a seeded log depends on."""

from __future__ import annotations

import numpy as np
import pytest

from rankmeter.clicks.browsing import by_grade, draw_clicks
from rankmeter.errors import PolicyError

N, DEPTH = 20_000, 5
SHOWN = np.arange(DEPTH)[None, :] < np.where(np.arange(N) % 4 == 0, 3, DEPTH)[:, None]
ATTRACT = np.tile([0.9, 0.6, 0.3, 0.5, 0.8], (N, 1))
EXAMINE = 1.0 / np.arange(1, DEPTH + 1)


def test_by_grade_rounds_down_and_keeps_to_the_values() -> None:
    values = np.array([0.05, 0.35, 0.6])
    grades = np.array([[0.0, 1.0, 1.9, 2.0, 3.0], [-2.0, np.nan, 0.5, 2.5, 40.0]])
    assert by_grade(values, grades).tolist() == [
        [0.05, 0.35, 0.35, 0.6, 0.6],
        [0.05, 0.05, 0.05, 0.6, 0.6],
    ]


@pytest.mark.parametrize("pbm_draws", [1, 2])
def test_pbm_clicks_at_attractiveness_times_examination(pbm_draws: int) -> None:
    clicks = draw_clicks(
        "pbm", np.random.default_rng(1), SHOWN, ATTRACT, examination=EXAMINE, pbm_draws=pbm_draws
    )
    assert not (clicks & ~SHOWN).any()
    rate = clicks[SHOWN.all(axis=1)].mean(axis=0)
    assert np.allclose(rate, ATTRACT[0] * EXAMINE, atol=0.015)


def test_the_draws_come_in_the_documented_order() -> None:
    one = draw_clicks(
        "pbm", np.random.default_rng(7), SHOWN, ATTRACT, examination=EXAMINE, pbm_draws=1
    )
    rng = np.random.default_rng(7)
    assert (one == (SHOWN & (rng.random((N, DEPTH)) < ATTRACT * EXAMINE))).all()
    two = draw_clicks("pbm", np.random.default_rng(7), SHOWN, ATTRACT, examination=EXAMINE)
    rng = np.random.default_rng(7)
    attracted = rng.random((N, DEPTH)) < ATTRACT
    assert (two == (SHOWN & attracted & (rng.random((N, DEPTH)) < EXAMINE))).all()


def test_cascade_clicks_the_first_attractive_result_only() -> None:
    clicks = draw_clicks("cascade", np.random.default_rng(2), SHOWN, ATTRACT)
    rng = np.random.default_rng(2)
    attracted = SHOWN & (rng.random((N, DEPTH)) < ATTRACT)
    assert clicks.sum(axis=1).max() == 1
    assert (clicks.any(axis=1) == attracted.any(axis=1)).all()
    assert (clicks.argmax(axis=1) == attracted.argmax(axis=1))[attracted.any(axis=1)].all()


def test_dbn_stops_when_satisfied_and_goes_on_with_gamma() -> None:
    rng = np.random.default_rng(3)
    satisfied = np.ones((N, DEPTH))
    once = draw_clicks("dbn", rng, SHOWN, ATTRACT, satisfaction=satisfied, gamma=1.0)
    assert once.sum(axis=1).max() == 1  # every click satisfies
    never = np.zeros((N, DEPTH))
    stopped = draw_clicks("dbn", rng, SHOWN, ATTRACT, satisfaction=never, gamma=0.0)
    assert not stopped[:, 1:].any()  # no one reads past the first result
    on = draw_clicks("dbn", rng, SHOWN, ATTRACT, satisfaction=never, gamma=1.0)
    assert on.sum(axis=1).max() > 1


def test_ubm_examines_by_distance_from_the_last_click() -> None:
    every = np.ones((N, DEPTH))
    # Examined only right after a click (distance 1) or at the top: a chain from rank 1.
    clicks = draw_clicks(
        "ubm", np.random.default_rng(4), SHOWN, every, examination=np.array([1.0, 0, 0, 0, 0])
    )
    assert (clicks == SHOWN).all()


def test_a_model_without_its_parameters_is_refused() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(PolicyError, match="the pbm click model needs examination="):
        draw_clicks("pbm", rng, SHOWN, ATTRACT)
    with pytest.raises(PolicyError, match="the dbn click model needs satisfaction="):
        draw_clicks("dbn", rng, SHOWN, ATTRACT)
    with pytest.raises(PolicyError, match="model='dcm' must be one of"):
        draw_clicks("dcm", rng, SHOWN, ATTRACT)
