"""Clicks into graded qrels: IPS/SNIPS estimates corrected by the fitted propensities recover
the simulated relevance, better than raw click-through rates; thresholds and the minimum
number of impressions as documented."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from _click_collection import collection
from scipy.stats import spearmanr

import rankmeter
from rankmeter.clicks import (
    click_log,
    default_attractiveness,
    default_propensities,
    estimate_relevance,
    fit,
    harvest_propensities,
    labels,
    simulate,
)
from rankmeter.errors import PolicyError


def simulated() -> pa.Table:
    qrels, run = collection()
    return simulate(qrels, run, sessions=20_000, shuffle=0.5, seed=11)


def true_attractiveness(table: pa.Table) -> np.ndarray:
    qrels, _ = collection()
    by_grade = default_attractiveness(3)
    columns = table.to_pydict()
    pairs = zip(columns["query_id"], columns["doc_id"], strict=True)
    return np.array([by_grade[qrels[q][d]] for q, d in pairs])


@pytest.mark.parametrize("estimator", ["snips", "ips"])
def test_debiased_estimates_are_closer_to_the_truth_than_click_through_rates(
    estimator: str,
) -> None:
    log = simulated()
    table = estimate_relevance(log, "pbm", estimator=estimator)
    truth = true_attractiveness(table)
    estimate = np.asarray(table.column("relevance"))
    ctr = np.asarray(table.column("clicks")) / np.asarray(table.column("impressions"))
    debiased_error = np.abs(estimate - truth).mean()
    assert debiased_error < 0.08  # measured: 0.053 (snips), 0.069 (ips)
    assert debiased_error < np.abs(ctr - truth).mean() / 3
    assert spearmanr(estimate, truth)[0] > 0.9


def test_snips_is_clicks_over_expected_clicks_and_ips_the_mean_of_weighted_clicks() -> None:
    # Pair a: clicked at rank 1 (p = 1), not clicked at rank 2 (p = 0.5); cascade gives these
    # propensities: rank 2 is examined in one request of two.
    log = pa.table(
        {
            "request_id": ["r1", "r1", "r2", "r2"],
            "query_id": ["q"] * 4,
            "doc_id": ["a", "b", "b", "a"],
            "position": [1, 2, 1, 2],
            "clicked": [True, False, False, False],
        }
    )
    model = fit(log, "cascade")
    assert model.propensities.tolist() == [1.0, 0.5]
    snips = estimate_relevance(log, model).column("relevance").to_pylist()
    ips = estimate_relevance(log, model, estimator="ips").column("relevance").to_pylist()
    assert snips == [1 / 1.5, 0.0] and ips == [0.5, 0.0]
    clipped = estimate_relevance(log, model, estimator="ips", clip=0.8)
    assert clipped.column("relevance").to_pylist() == [0.5, 0.0]  # a click at rank 1: p = 1
    log_b = log.set_column(4, "clicked", pa.array([False, False, False, True]))
    assert estimate_relevance(log_b, model, estimator="ips", clip=0.8).column(
        "relevance"
    ).to_pylist() == [pytest.approx(1 / 0.8 / 2), 0.0]


def test_labels_grade_by_the_thresholds_and_recover_the_simulated_grades() -> None:
    qrels, run = collection()
    log = simulated()
    # Thresholds halfway between the simulator's attractiveness of grades 0-3.
    by_grade = default_attractiveness(3)
    thresholds = ((by_grade[1:] + by_grade[:-1]) / 2).tolist()
    click_qrels = labels(log, "pbm", grades=thresholds, min_impressions=50)
    assert isinstance(click_qrels, rankmeter.Qrels)
    found = click_qrels.to_dict()
    pairs = [(q, d) for q in found for d in found[q]]
    agree = np.mean([found[q][d] == qrels[q][d] for q, d in pairs])
    assert len(pairs) == 1000 and agree > 0.85
    # The click qrels evaluate the run as the true qrels do, near enough.
    by_clicks = rankmeter.evaluate(click_qrels, run, "nDCG@10")["nDCG@10"]
    by_truth = rankmeter.evaluate(qrels, run, "nDCG@10")["nDCG@10"]
    assert abs(by_clicks - by_truth) < 0.05


def test_pairs_with_too_few_impressions_are_left_out() -> None:
    log = click_log(simulated())
    model = fit(log, "pbm")
    table = estimate_relevance(log, model)
    impressions = np.asarray(table.column("impressions"))
    threshold = int(np.median(impressions))
    kept = labels(log, model, min_impressions=threshold)
    assert len(kept) == int((impressions >= threshold).sum()) < len(impressions)
    with pytest.raises(PolicyError, match=r"min_impressions=100000: no \(query, doc\) pair was"):
        labels(log, model, min_impressions=100_000)


def test_default_thresholds_make_grades_zero_to_three() -> None:
    log = pa.table(
        {
            "request_id": [f"r{i}" for i in range(4)],
            "query_id": ["q"] * 4,
            "doc_id": ["a", "b", "c", "d"],
            "position": [1] * 4,
            "clicked": [True, False, False, False],
        }
    )
    graded = labels(log, "pbm", min_impressions=1).to_dict()
    assert graded == {"q": {"a": 3, "b": 0, "c": 0, "d": 0}}
    assert labels(log, "pbm", min_impressions=1, grades="0.5, 2").to_dict()["q"]["a"] == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"estimator": "dr"}, r"estimator='dr' must be one of 'snips', 'ips'"),
        ({"clip": 0}, r"clip=0 must be a number > 0 and <= 1"),
        ({"min_impressions": 0}, r"min_impressions=0 must be an integer >= 1"),
        ({"grades": [0.5, 0.2]}, r"grades=\(0.5, 0.2\) must increase"),
        ({"grades": []}, r"grades=\[\] must be a list of increasing thresholds"),
        ({"grades": "0.1,,0.5"}, r"grades: item 2 is empty in '0.1,,0.5'; give increasing"),
        ({"grades": "0.1,x"}, r"grades: item 2, 'x', is not a number; give increasing"),
        ({"grades": [0.0, 0.5]}, r"grades\[0\]=0.0 must be a number > 0"),
        ({"model": "dcm"}, r"model='dcm' must be one of"),
    ],
)
def test_bad_parameters_are_one_line_errors(kwargs: dict[str, object], message: str) -> None:
    log = pa.table(
        {"request_id": ["r"], "query_id": ["q"], "doc_id": ["a"], "position": [1], "clicked": [1]}
    )
    with pytest.raises(PolicyError, match=message):
        labels(log, **kwargs)  # type: ignore[arg-type]


def test_harvested_propensities_recover_the_truth_without_a_click_model() -> None:
    log = simulated()
    harvested = harvest_propensities(log)
    assert np.abs(harvested - default_propensities(10)).max() < 0.05
    table = estimate_relevance(log, harvested)
    truth = true_attractiveness(table)
    assert np.abs(np.asarray(table.column("relevance")) - truth).mean() < 0.08


def test_harvesting_needs_pairs_shown_at_adjacent_ranks() -> None:
    qrels, run = collection()
    unshuffled = simulate(qrels, run, sessions=2000, shuffle=0.0, seed=1)
    with pytest.raises(
        PolicyError, match=r"no \(query, doc\) pair is shown \(and clicked\) at both"
    ):
        harvest_propensities(unshuffled)
    with pytest.raises(PolicyError, match=r"model='x' must be one of"):
        estimate_relevance(unshuffled, "x")
    with pytest.raises(PolicyError, match=r"propensities\[1\]=0 must be a number > 0"):
        estimate_relevance(unshuffled, [1.0, 0])
    with pytest.raises(PolicyError, match=r"model=None must be a model name"):
        estimate_relevance(unshuffled, None)
