"""Offline against online (rankmeter.online.online_vs_offline): the two sides are compare()'s
and ab()'s own numbers, and the agreement says whether they point the same way."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("ibis", reason="online_vs_offline needs the [online] extra (ibis-framework)")
pytest.importorskip("tea_tasting", reason="online_vs_offline needs the [online] extra")

import pyarrow.parquet as pq
from _logs_support import assert_same_results
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
        # DuckDB adds floats on several threads, in an order that can change between two runs:
        # the per-user variances (and so p) of two separate runs agree to ~1e-15, not bit for bit.
        assert side.metric == e.metric
        assert (side.difference, side.low, side.high, side.p_corrected) == pytest.approx(
            (e.difference, e.difference_low, e.difference_high, e.adjusted), rel=1e-9)  # fmt: skip
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


def _with_queries(path: Path, target: Path, rename: dict[str, str], drop: set[str]) -> Path:
    """The log at ``path`` with some queries renamed (so that no run has them) and some
    dropped (so that the log never shows them)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    log = pq.read_table(path)
    log = log.filter(pc.invert(pc.is_in(log["query_id"], pa.array(sorted(drop), pa.string()))))
    names = [rename.get(q, q) for q in log["query_id"].to_pylist()]
    pq.write_table(log.set_column(log.schema.get_field_index("query_id"), "query_id", pa.array(names)), target)  # fmt: skip
    return target


def test_a_full_overlap_of_queries_warns_of_nothing(files: dict[str, Path]) -> None:
    result = online_vs_offline(
        files["qrels"], files["control"], files["treatment"], files["agree"],
        online_metrics=["ctr"],
    )  # fmt: skip
    assert result.warnings == ()
    assert (result.log_queries, result.shared_queries) == (QUERIES, QUERIES)


def test_a_partial_overlap_of_queries_is_a_warning(files: dict[str, Path], tmp_path: Path) -> None:
    drop = {f"q{i}" for i in range(20, 30)}  # ten offline queries the log never shows
    path = _with_queries(files["agree"], tmp_path / "part.parquet", {"q1": "web-1"}, drop)
    result = online_vs_offline(
        files["qrels"], files["control"], files["treatment"], path, online_metrics=["ctr"]
    )
    assert (result.log_queries, result.shared_queries) == (20, 19)
    assert result.warnings == (
        "the log and the offline comparison share 19 queries: 1 of the log's 20 queries is "
        "not compared offline (not judged; e.g. 'web-1'), and 11 of the 30 "
        "queries compared offline are not in the log (e.g. 'q1', 'q20', 'q21'): the two sides "
        "measure partly different queries",
    )
    assert result.to_dict()["warnings"] == list(result.warnings)


def test_no_shared_query_is_refused(files: dict[str, Path], tmp_path: Path) -> None:
    rename = {f"q{i}": f"web-{i}" for i in range(QUERIES)}
    path = _with_queries(files["agree"], tmp_path / "none.parquet", rename, set())
    with pytest.raises(
        PolicyError,
        match=r"^none of the log's 30 queries \(e\.g\. 'web-0', 'web-1', 'web-10'\) is among the "
        r"30 queries compared offline \(e\.g\. 'q0', 'q1', 'q10'\)",
    ):
        online_vs_offline(files["qrels"], files["control"], files["treatment"], path)


def test_one_experiment_of_several_is_chosen(files: dict[str, Path], tmp_path: Path) -> None:
    import pyarrow as pa

    log = pq.read_table(files["agree"])
    other = log
    for column in ("user_id", "session_id", "request_id"):
        renamed = pa.array(["other-" + v for v in other[column].to_pylist()])
        other = other.set_column(other.schema.get_field_index(column), column, renamed)
    tagged = pa.concat_tables(
        [
            t.append_column("experiment_id", pa.array([e] * t.num_rows))
            for t, e in ((log, "exp-a"), (other.slice(0, other.num_rows // 2), "exp-b"))
        ]
    )
    path = tmp_path / "two.parquet"
    pq.write_table(tagged, path)
    args = (files["qrels"], files["control"], files["treatment"])
    with pytest.raises(PolicyError, match=r"holds 2 experiments: 'exp-a' .*--experiment ID"):
        online_vs_offline(*args, path, online_metrics=["ctr"])
    chosen = online_vs_offline(*args, path, online_metrics=["ctr"], experiment="exp-a")
    alone = online_vs_offline(*args, files["agree"], online_metrics=["ctr"])
    # The same experiment either way (floats up to DuckDB's order of summation).
    assert chosen.log_queries == alone.log_queries
    assert_same_results(chosen.online, alone.online)


def test_with_a_pre_period_the_online_side_says_it_is_cuped_adjusted(
    files: dict[str, Path], tmp_path: Path
) -> None:
    import datetime as dt

    import pyarrow as pa
    import pyarrow.compute as pc

    from rankmeter.report.online_offline import render_markdown, settings_line

    log = pq.read_table(files["disagree"])
    earlier = pc.subtract(log["event_ts"], pa.scalar(dt.timedelta(days=7)))
    pre = tmp_path / "pre.parquet"
    pq.write_table(log.set_column(log.schema.get_field_index("event_ts"), "event_ts", earlier), pre)
    args = (files["qrels"], files["control"], files["treatment"], files["agree"])
    adjusted = online_vs_offline(*args, online_metrics=["ctr"], pre=pre)
    plain = online_vs_offline(*args, online_metrics=["ctr"])
    assert adjusted.cuped and not plain.cuped
    assert adjusted.to_dict()["settings"]["cuped"] is True
    assert "CUPED-adjusted" in settings_line(adjusted) and "CUPED" not in settings_line(plain)
    assert "CUPED-adjusted" in render_markdown(adjusted)
    same = ab(files["agree"], metrics=["ctr"], pre=pre).metrics[0].control
    # DuckDB's multi-threaded float sums: equal to 1e-9 (docs/ab.md), not to the last bit
    assert adjusted.online[0].control == pytest.approx(same, rel=1e-9)
