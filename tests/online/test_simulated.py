"""rankmeter.online.simulate_logs: `rankmeter logs simulate` as a Python call (the split and
segment effects as typed, the pre-period from the same settings, an interleaving log), and
the counts of a log (log_counts, report.logs.written_line)."""

from __future__ import annotations

import pytest

pytest.importorskip("ibis", reason="search logs need the [online] extra (ibis-framework)")

import pyarrow.compute as pc

from rankmeter.errors import PolicyError
from rankmeter.online import log_counts, read_factors, simulate_log, simulate_logs
from rankmeter.report.logs import written_line

QRELS = {f"q{q}": {f"d{q}-{d}": (3 - d) if d < 4 else 0 for d in range(10)} for q in range(10)}
GOOD_RUN = {f"q{q}": {f"d{q}-{d}": 10.0 - d for d in range(10)} for q in range(10)}
BAD_RUN = {f"q{q}": {f"d{q}-{d}": float(d) for d in range(10)} for q in range(10)}


def test_the_logs_are_simulate_logs_with_the_settings_as_typed() -> None:
    simulated = simulate_logs(
        QRELS, BAD_RUN, GOOD_RUN, users=200, seed=4, split="70,30",
        segment_effects="new=0.6", pre_period=True,
    )  # fmt: skip
    runs = {"control": BAD_RUN, "treatment": GOOD_RUN}
    settings = dict(
        users=200, seed=4, split={"control": 70.0, "treatment": 30.0},
        segment_effects={"new": 0.6},
    )  # fmt: skip
    assert simulated.log.equals(simulate_log(QRELS, runs, **settings))  # type: ignore[arg-type]
    assert simulated.pre is not None
    assert simulated.pre.equals(simulate_log(QRELS, runs, pre_period=True, **settings))  # type: ignore[arg-type]
    assert simulate_logs(QRELS, BAD_RUN, GOOD_RUN, users=50).pre is None


def test_an_interleaving_log_names_its_runs_a_and_b() -> None:
    log = simulate_logs(QRELS, BAD_RUN, GOOD_RUN, users=50, interleave="team-draft").log
    assert set(pc.unique(log["interleave_team"]).to_pylist()) <= {"A", "B", None}
    assert "control" not in pc.unique(log["variant"]).to_pylist()


def test_a_split_with_no_users_in_one_variant_is_refused() -> None:
    with pytest.raises(PolicyError, match=r"--split '0,100' gives control no users"):
        simulate_logs(QRELS, BAD_RUN, GOOD_RUN, split="0,100")
    with pytest.raises(PolicyError, match=r"gives 3 values for 2"):
        read_factors("1,2,3", "--split", ["control", "treatment"])
    with pytest.raises(PolicyError, match=r"give NAME=FACTOR items"):
        read_factors("0.6", "--segment-effect", [])
    with pytest.raises(PolicyError, match=r"'x' is not a number"):
        read_factors("new=x", "--segment-effect", [])


def test_the_counts_of_a_log() -> None:
    log = simulate_logs(QRELS, BAD_RUN, GOOD_RUN, users=60, seed=1).log
    counts = log_counts(log)
    assert counts.impressions == log.num_rows
    assert counts.users == len(set(log["user_id"].to_pylist())) <= 60
    assert counts.requests == len(set(log["request_id"].to_pylist()))
    assert counts.clicks == sum(log["clicked"].to_pylist())
    assert written_line("a.parquet", counts) == (
        f"a.parquet: {counts.impressions:,} impressions, {counts.requests:,} requests, "
        f"{counts.users:,} users, {counts.clicks:,} clicks"
    )


def test_the_recruiting_experiment_is_the_demos_a_b_test() -> None:
    pytest.importorskip("tea_tasting", reason="the A/B analysis needs the [online] extra")
    from rankmeter.online import recruiting_experiment

    run = recruiting_experiment(users=300, seed=2, new_users_factor=0.5, metrics=("ctr",))
    assert run.collection.name == "recruiting" and run.new_users_factor == 0.5
    assert run.check.source == "simulated log" and run.check.ok
    assert run.result.cuped and [m.metric for m in run.result.metrics] == ["ctr"]
    assert {(s.column, s.value) for s in run.result.segments} == {
        ("is_new_user", "false"),
        ("is_new_user", "true"),
    }
    assert {(s.source, s.metric) for s in run.side_by_side.offline} == {
        ("offline", "nDCG@10"),
        ("offline", "RR"),
    }
    assert [s.metric for s in run.side_by_side.online] == ["ctr"]
