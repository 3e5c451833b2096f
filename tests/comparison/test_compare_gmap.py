"""GMAP in a comparison (issue 24): its per-query values are log AP, so its means are geometric
means (trec_eval's gm_map, what evaluate prints) and its differences, intervals and tests are on
the logs: a difference is log(system GMAP / baseline GMAP), ``relative`` the ratio minus 1."""

from __future__ import annotations

import math
import os
from pathlib import Path

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


LOG_LINE = (
    "gm_map: Δ and its interval are differences of log AP (Δ = log of the ratio of the GMAPs; "
    "relative = the ratio - 1)"
)


def _rendered(metrics: list[str], folder: Path) -> dict[str, str]:
    from rankmeter.report import render

    qrels, runs = collection(30)
    result = compare(qrels, {"base": runs["base"], "better": runs["better"]}, metrics,
                     resamples=200, include_missing=False)  # fmt: skip
    made = {}
    for name in ("table", "markdown", "json", "html", "latex"):
        render(result, name, os.fspath(folder / name))
        made[name] = (folder / name).read_text(encoding="utf-8")
    return made


def test_gmap_differences_are_labelled_log_ap_in_every_format(tmp_path: Path) -> None:
    import json

    shown = _rendered(["gm_map", "AP"], tmp_path)
    assert LOG_LINE in " ".join(shown["table"].split())  # under the table, wrapped to its width
    assert LOG_LINE.replace("gm_map", "gm\\_map") in shown["markdown"]
    assert "power (" in shown["markdown"] and "log AP (gm\\_map) is detectable" in shown["markdown"]
    assert "per-query gm_map (log AP) differences" in shown["markdown"]
    assert f'<p class="legend-text">{LOG_LINE}</p>' in shown["html"]
    assert (
        "gm\\_map: $\\Delta$ and its interval are differences of log AP ($\\Delta$ = log of the "
        "ratio of the GMAPs; relative = the ratio - 1)." in shown["latex"]
    )
    payload = json.loads(shown["json"])
    scales = {d["metric"]: d.get("delta_scale") for d in payload["differences"]}
    assert scales == {"gm_map": "log", "AP": None}
    assert any("log AP (gm_map) is detectable" in n for n in payload["notes"])


def test_other_metrics_say_nothing_of_logs(tmp_path: Path) -> None:
    shown = _rendered(["AP", "nDCG@10"], tmp_path)
    for made in shown.values():
        assert "log AP" not in made and "delta_scale" not in made and "GMAP" not in made
