"""GMAP in a comparison (issue 24): its per-query values are log AP, so its means are geometric
means (trec_eval's gm_map, what evaluate prints) and its differences, intervals and tests are on
the logs: a difference is log(system GMAP / baseline GMAP), ``relative`` the ratio minus 1."""

from __future__ import annotations

import math

import pytest

import rankmeter
from rankmeter import compare

from ._helpers import collection


def test_gmap_means_are_trec_evals_and_differences_are_of_log_ap() -> None:
    qrels, runs = collection(40)
    two = {"base": runs["base"], "better": runs["better"]}
    result = compare(qrels, two, ["gm_map", "AP"], resamples=500, include_missing=False)
    for name, run in two.items():
        evaluated = rankmeter.evaluate(qrels, run, ["gm_map", "AP"])
        mean = result.mean(name, "gm_map")
        assert mean.mean == pytest.approx(evaluated.metrics["gm_map"], rel=1e-12)
        assert mean.low <= mean.mean <= mean.high and mean.low > 0  # exp of the log interval
        assert result.mean(name, "AP").mean == pytest.approx(evaluated.metrics["AP"], rel=1e-12)
    d = result.difference("better", "gm_map")
    logs = result.scores["gm_map"]
    assert d.difference == pytest.approx(float((logs["better"] - logs["base"]).mean()), rel=1e-9)
    assert d.difference == pytest.approx(math.log(d.system_mean / d.baseline_mean), rel=1e-9)
    assert d.relative == pytest.approx(d.system_mean / d.baseline_mean - 1, rel=1e-9)
    assert d.low <= d.difference <= d.high


def test_gmap_segments_are_geometric_too() -> None:
    qrels, runs = collection(40)
    segments = {"half": {f"q{i}": ("a" if i < 20 else "b") for i in range(40)}}
    result = compare(
        qrels,
        {"base": runs["base"], "noisy": runs["noisy"]},
        ["gm_map"],
        segments=segments,
        min_segment=5,
        resamples=200,
    )
    part = {q: qrels[q] for q in (f"q{i}" for i in range(20))}
    means = {(m.segment, m.system): m.mean for m in result.segment_means}
    alone = rankmeter.evaluate(part, runs["noisy"], "gm_map").metrics["gm_map"]
    assert means[("half=a", "noisy")] == pytest.approx(alone, rel=1e-12)
    row = next(s for s in result.segments if s.segment == "half=a")
    assert row.difference == pytest.approx(math.log(row.system_mean / row.baseline_mean))


def test_all_pairs_shows_gmap_as_a_geometric_mean() -> None:
    pytest.importorskip("scipy", reason="all-pairs uses scipy")
    qrels, runs = collection(30)
    from rankmeter.comparison import compare_all

    result = compare_all(qrels, runs, ["gm_map"], resamples=200)
    analysis = result.analysis("gm_map")
    for name, mean in zip(analysis.systems, analysis.means, strict=True):
        expected = rankmeter.evaluate(qrels, runs[name], "gm_map", include_missing=True)
        assert mean == pytest.approx(expected.metrics["gm_map"], rel=1e-12)
