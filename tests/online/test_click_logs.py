"""rankmeter.online.click_logs: `rankmeter clicks fit|labels` as Python calls over a log file
(read by the log contract, the click columns taken in the engine, then rankmeter.clicks)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ibis", reason="search logs need the [online] extra (ibis-framework)")

import pyarrow.parquet as pq

from rankmeter.clicks import (
    ClickCounts,
    ClickLog,
    click_log,
    evaluate_model,
    fit,
    labels,
    simulate,
    split_log,
)
from rankmeter.online import click_labels, fit_click_model, read_click_log


@pytest.fixture(scope="module")
def log_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(1)
    qrels = {f"q{q}": {f"d{d}": int(rng.integers(0, 4)) for d in range(8)} for q in range(20)}
    run = {f"q{q}": {f"d{d}": float(rng.random()) for d in range(8)} for q in range(20)}
    path = tmp_path_factory.mktemp("clicks") / "log.parquet"
    pq.write_table(simulate(qrels, run, sessions=2_000, shuffle=1.0, seed=2), path)
    return path


def test_the_log_is_read_as_counts_or_as_requests(log_file: Path) -> None:
    requests = read_click_log(str(log_file))
    counts = read_click_log(str(log_file), counted=True)
    assert isinstance(requests, ClickLog) and isinstance(counts, ClickCounts)
    assert requests.n_sessions == counts.n_sessions == 2_000
    assert requests.n_pairs == counts.n_pairs


def test_fit_with_a_held_out_split_is_fit_then_evaluate_model(log_file: Path) -> None:
    fitted, evaluation = fit_click_model(str(log_file), "pbm", held_out=0.25, seed=5)
    train, test = split_log(click_log(pq.read_table(log_file)), 0.25, seed=5)
    expected = fit(train, "pbm", seed=5)
    np.testing.assert_allclose(fitted.propensities, expected.propensities)
    assert evaluation is not None
    assert evaluation.perplexity == pytest.approx(evaluate_model(expected, test).perplexity)
    whole, none = fit_click_model(str(log_file), "cascade", held_out=0)
    assert none is None and whole.sessions == 2_000


def test_labels_are_the_clicks_debiased_by_the_model_fitted_to_them(log_file: Path) -> None:
    labelled = click_labels(str(log_file), "pbm", min_impressions=5, grades="0.2,0.5")
    data = click_log(pq.read_table(log_file))
    expected = labels(data, fit(data, "pbm"), min_impressions=5, grades="0.2,0.5")
    assert labelled.qrels.to_dict() == expected.to_dict()
    assert (labelled.n_pairs, labelled.n_sessions) == (data.n_pairs, data.n_sessions)
