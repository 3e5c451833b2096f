"""Click models fitted by EM recover what the simulator planted (20,000 simulated requests of
a synthetic collection: 100 queries x 10 documents, grades 0-3), and each model fits its own
simulated log better than a wrong one on held-out requests."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from _click_collection import collection
from scipy.stats import spearmanr

from rankmeter.clicks import (
    ClickModel,
    default_propensities,
    evaluate_model,
    fit,
    simulate,
    split_log,
)
from rankmeter.errors import PolicyError

SESSIONS = 20_000
#: EM recovers each rank's propensity (normalised to rank 1) within this, absolute, at 20,000
#: requests (measured: at most 0.010 for PBM; benchmarks/clicks_bench.py has larger logs).
PROPENSITY_TOLERANCE = 0.03


def simulated(model: str, shuffle: float = 1.0, seed: int = 3) -> pa.Table:
    qrels, run = collection()
    return simulate(qrels, run, sessions=SESSIONS, model=model, shuffle=shuffle, seed=seed)


def grade_of(model: ClickModel) -> np.ndarray:
    qrels, _ = collection()
    pairs = model.pairs().to_pydict()
    return np.array([qrels[q][d] for q, d in zip(pairs["query_id"], pairs["doc_id"], strict=True)])


def test_pbm_recovers_the_simulated_propensities_and_ranks_pairs_by_grade() -> None:
    model = fit(simulated("pbm"), "pbm")
    truth = default_propensities(10)
    assert model.converged and model.iterations > 1
    assert np.abs(model.propensities - truth).max() < PROPENSITY_TOLERANCE
    assert model.examination is not None
    assert np.allclose(model.propensities, model.examination / model.examination[0])
    assert spearmanr(grade_of(model), model.attractiveness)[0] > 0.9


def test_pbm_recovers_propensities_that_are_not_one_over_rank() -> None:
    qrels, run = collection()
    truth = np.array([1.0, 0.9, 0.8, 0.6, 0.5, 0.45, 0.4, 0.35, 0.3, 0.3])
    log = simulate(qrels, run, sessions=SESSIONS, propensities=truth.tolist(), seed=5)
    assert np.abs(fit(log, "pbm").propensities - truth).max() < PROPENSITY_TOLERANCE


def test_without_randomisation_position_bias_cannot_be_told_from_relevance() -> None:
    """Each document only ever at one rank: a PBM fit is not identified and does not find the
    truth (why simulate shuffles a share of the requests by default)."""
    model = fit(simulated("pbm", shuffle=0.0), "pbm")
    assert np.abs(model.propensities - default_propensities(10)).max() > 0.1


def test_ubm_recovers_examination_by_distance_from_the_previous_click() -> None:
    model = fit(simulated("ubm"), "ubm")
    assert model.examination is not None
    truth = default_propensities(10)
    no_click_yet = model.examination[:, 0] / model.examination[0, 0]
    assert np.abs(no_click_yet[:6] - truth[:6]).max() < 0.05
    # gamma[r, r'] = theta[r - r']: one rank below a click is examined as rank 1 is.
    below_a_click = [model.examination[r, r] for r in range(1, 5)]
    assert np.allclose(below_a_click, model.examination[0, 0], atol=0.05)
    assert spearmanr(grade_of(model), model.attractiveness)[0] > 0.9


def test_dbn_recovers_gamma_and_relevance_orders_by_grade() -> None:
    model = fit(simulated("dbn"), "dbn")
    assert model.gamma is not None and abs(model.gamma - 0.9) < 0.03
    assert model.satisfaction is not None
    assert spearmanr(grade_of(model), model.attractiveness)[0] > 0.9
    fixed = fit(simulated("dbn"), "dbn", gamma=0.5)
    assert fixed.gamma == 0.5


def test_cascade_is_fitted_in_closed_form_by_hand() -> None:
    log = pa.table(
        {
            "request_id": ["r1", "r1", "r1", "r2", "r2", "r2"],
            "query_id": ["q"] * 6,
            "doc_id": ["a", "b", "c", "b", "a", "c"],
            "position": [1, 2, 3, 1, 2, 3],
            "clicked": [False, True, False, False, False, False],
        }
    )
    model = fit(log, "cascade")
    table = model.pairs().to_pydict()
    alpha = dict(zip(table["doc_id"], table["attractiveness"], strict=True))
    # a: examined twice, never clicked; b: examined twice, clicked once; c: examined once
    # (r1 stopped at b), not clicked.
    assert alpha["a"] == pytest.approx(1e-6) and alpha["b"] == 0.5
    assert alpha["c"] == pytest.approx(1e-6)
    assert model.propensities.tolist() == [1.0, 1.0, 0.5]
    assert (model.iterations, model.converged) == (1, True)
    # log-likelihood of r1: (1 - a)(b) -> log 0.5; r2: (1 - b)(1 - a)(1 - c) -> log 0.5.
    assert model.log_likelihood == pytest.approx(math.log(0.5), abs=1e-5)


@pytest.mark.parametrize("truth", ["pbm", "cascade", "dbn", "ubm"])
def test_each_model_fits_its_own_simulated_log_better_than_a_wrong_model(truth: str) -> None:
    train, held_out = split_log(simulated(truth), 0.2, seed=0)
    wrong = "cascade" if truth == "pbm" else "pbm"
    own = evaluate_model(fit(train, truth), held_out)
    other = evaluate_model(fit(train, wrong), held_out)
    assert own.log_likelihood > other.log_likelihood
    assert own.sessions == held_out.n_sessions and own.unseen == 0
    assert len(own.perplexity_by_rank) == 10 and 1 < own.perplexity < 2


def test_perplexity_and_log_likelihood_by_hand() -> None:
    # One document at rank 1, clicked in 1 request of 4: PBM predicts 1/4 (theta * alpha).
    log = pa.table(
        {
            "request_id": ["r1", "r2", "r3", "r4"],
            "query_id": ["q"] * 4,
            "doc_id": ["a"] * 4,
            "position": [1] * 4,
            "clicked": [True, False, False, False],
        }
    )
    result = evaluate_model(fit(log, "pbm"), log)
    entropy = -(0.25 * math.log2(0.25) + 0.75 * math.log2(0.75))
    assert result.perplexity == pytest.approx(2**entropy, rel=1e-4)
    assert result.log_likelihood == pytest.approx(
        0.25 * math.log(0.25) + 0.75 * math.log(0.75), rel=1e-4
    )
    assert result.to_dict()["perplexity_by_rank"] == {"1": pytest.approx(2**entropy, rel=1e-4)}


def test_unseen_pairs_get_the_default_attractiveness() -> None:
    base = {"query_id": ["q", "q"], "position": [1, 1], "request_id": ["r1", "r2"]}
    train = pa.table({**base, "doc_id": ["a", "a"], "clicked": [True, False]})
    held_out = pa.table({**base, "doc_id": ["z", "z"], "clicked": [True, False]})
    model = fit(train, "pbm")
    result = evaluate_model(model, held_out)
    assert result.unseen == 2
    assert model.default_attractiveness == pytest.approx(model.attractiveness[0])


def test_same_seed_same_fit() -> None:
    log = simulated("pbm")
    first, second = fit(log, "pbm", seed=7), fit(log, "pbm", seed=7)
    assert np.array_equal(first.attractiveness, second.attractiveness)
    assert first.to_dict() == second.to_dict()


def test_the_result_is_frozen_and_its_figures_are_a_dict() -> None:
    model = fit(simulated("pbm"), "pbm", max_iter=3)
    assert (model.iterations, model.converged) == (3, False)
    figures = model.to_dict()
    assert figures["model"] == "pbm" and figures["sessions"] == SESSIONS
    assert list(figures["propensities"]) == [str(r) for r in range(1, 11)]
    with pytest.raises(AttributeError):
        model.gamma = 0.5  # type: ignore[misc]
    with pytest.raises(ValueError):
        model.attractiveness[0] = 1.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"model": "dcm"}, r"model='dcm' must be one of 'pbm', 'cascade', 'dbn', 'ubm'"),
        ({"max_iter": 0}, r"max_iter=0 must be an integer >= 1"),
        ({"tol": 0}, r"tol=0 must be a number > 0"),
        ({"model": "pbm", "gamma": 0.5}, r"gamma=0.5 is a parameter of the DBN model, not of pbm"),
        ({"model": "dbn", "gamma": 1.0}, r"gamma=1.0 must be a number strictly between 0 and 1"),
    ],
)
def test_bad_parameters_are_one_line_errors(kwargs: dict[str, object], message: str) -> None:
    log = pa.table(
        {"request_id": ["r"], "query_id": ["q"], "doc_id": ["a"], "position": [1], "clicked": [1]}
    )
    with pytest.raises(PolicyError, match=message):
        fit(log, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(PolicyError, match=r"model must be a ClickModel"):
        evaluate_model("pbm", log)  # type: ignore[arg-type]
