"""Offline against online (rankmeter.online.online_vs_offline): the two sides are compare()'s
and ab()'s own numbers, and the agreement says whether they point the same way."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("ibis", reason="online_vs_offline needs the [online] extra (ibis-framework)")
pytest.importorskip("tea_tasting", reason="online_vs_offline needs the [online] extra")

import pyarrow.parquet as pq
from _offline_logs import QUERIES, collection, log_of

from rankmeter import compare
from rankmeter.errors import MetricError, PolicyError
from rankmeter.online import ab, online_vs_offline
from rankmeter.online.offline import _verdict


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("offline")
    qrels, control, treatment, rankings = collection(folder)
    pq.write_table(log_of(rankings, users=400, clicks_follow=True), folder / "agree.parquet")
    pq.write_table(log_of(rankings, users=400, clicks_follow=False), folder / "disagree.parquet")
    return {"qrels": qrels, "control": control, "treatment": treatment,
            "agree": folder / "agree.parquet", "disagree": folder / "disagree.parquet"}  # fmt: skip


def test_both_sides_are_compare_and_ab_unchanged(files: dict[str, Path]) -> None:
    result = online_vs_offline(
        files["qrels"], files["control"], files["treatment"], files["agree"],
        metrics=["nDCG@10", "RR"], online_metrics=["ctr", "abandonment"],
    )  # fmt: skip
    offline = compare(
        files["qrels"], {"control": files["control"], "treatment": files["treatment"]},
        ["nDCG@10", "RR"], baseline="control", seed=0,
    )  # fmt: skip
    for side, d in zip(result.offline, offline.differences, strict=True):
        assert (side.metric, side.difference, side.low, side.high, side.p_corrected) == (
            d.metric, d.difference, d.low, d.high, d.p_corrected)  # fmt: skip
        assert side.n == QUERIES
    online = ab(files["agree"], metrics=["ctr", "abandonment"])
    for side, e in zip(result.online, online.metrics, strict=True):
        assert (side.metric, side.difference, side.low, side.high, side.p_corrected) == (
            e.metric, e.difference, e.difference_low, e.difference_high, e.adjusted)  # fmt: skip
        assert side.n == 400
    assert [s.direction for s in result.offline] == ["better", "better"]
    # Abandonment fell: lower is better, so the treatment is better there too.
    assert result.online[1].difference < 0 and result.online[1].direction == "better"
    assert [a.verdict for a in result.agreements] == ["agree", "agree"]
    assert result.summary == (
        "offline (nDCG@10): treatment is better than control; online metrics: 2 agree"
    )


def test_a_log_that_contradicts_the_judgments_disagrees(files: dict[str, Path]) -> None:
    result = online_vs_offline(
        files["qrels"], files["control"], files["treatment"], files["disagree"],
        online_metrics=["ctr"],
    )  # fmt: skip
    assert result.offline[0].direction == "better"
    assert result.online[0].direction == "worse"
    assert [a.verdict for a in result.agreements] == ["disagree"]


@pytest.mark.parametrize(
    ("offline", "online", "verdict"),
    [
        ("better", "better", "agree"),
        ("worse", "worse", "agree"),
        ("better", "worse", "disagree"),
        ("better", "no significant difference", "offline only"),
        ("no significant difference", "worse", "online only"),
        ("no significant difference", "no significant difference", "neither"),
    ],
)
def test_verdicts(offline: str, online: str, verdict: str) -> None:
    assert _verdict(offline, online) == verdict


def test_bad_settings_are_one_line(files: dict[str, Path]) -> None:
    args = (files["qrels"], files["control"], files["treatment"], files["agree"])
    with pytest.raises(PolicyError, match=r"online_metrics=\(\) names no online metric"):
        online_vs_offline(*args, online_metrics=())
    with pytest.raises(MetricError, match="unknown A/B metric 'ctrr'"):
        online_vs_offline(*args, online_metrics=["ctrr"])
