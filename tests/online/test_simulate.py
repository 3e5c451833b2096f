"""rankmeter.online.simulate_log: a valid log, deterministic, with the planted effects visible
in raw aggregates (position bias, the better ranker's clicks, a sample-ratio mismatch, a
segment regression, reformulation after abandonment, latency per variant, the pre-period)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("ibis", reason="search logs need the [online] extra (ibis-framework)")

import pyarrow as pa
import pyarrow.compute as pc

from rankmeter import Qrels, Run, evaluate
from rankmeter.errors import PolicyError
from rankmeter.io import read_qrels, read_run
from rankmeter.online import check_log, read_log, simulate_log
from rankmeter.online import simulate as simulate_module

# A small collection: 30 queries, 20 documents each, grades 0-3 on the first few.
QRELS = {f"q{q}": {f"d{q}-{d}": (3 - d) if d < 4 else 0 for d in range(20)} for q in range(30)}
GOOD_RUN = {f"q{q}": {f"d{q}-{d}": 20.0 - d for d in range(20)} for q in range(30)}
BAD_RUN = {f"q{q}": {f"d{q}-{d}": float(d) for d in range(20)} for q in range(30)}


def tiny(**options: Any) -> pa.Table:
    runs = options.pop("runs", {"control": BAD_RUN, "treatment": GOOD_RUN})
    return simulate_log(QRELS, runs, **{"users": 400, "seed": 3, **options})


def rows(table: pa.Table) -> dict[str, Any]:
    return {name: table[name].to_numpy(zero_copy_only=False) for name in table.column_names}


def graded(table: pa.Table, qrels: dict[str, dict[str, int]] | Qrels) -> Any:
    """The qrels grade of each row's (query, doc) (0 for unjudged or no document)."""
    judged = qrels if isinstance(qrels, dict) else qrels.to_dict()
    return np.array(
        [
            judged.get(q, {}).get(d, 0) if d is not None else 0
            for q, d in zip(table["query_id"].to_pylist(), table["doc_id"].to_pylist(), strict=True)
        ]
    )


def test_log_is_valid_under_read_log() -> None:
    log = tiny()
    assert log.column_names == [
        "event_ts",
        "user_id",
        "session_id",
        "request_id",
        "query_id",
        "result_count",
        "latency_ms",
        "experiment_id",
        "variant",
        "doc_id",
        "position",
        "clicked",
        "dwell_ms",
        "device",
        "is_new_user",
        "query_freq",
    ]
    check = check_log(log)
    assert check.ok, check.problems
    assert [v.variant for v in check.variants] == ["control", "treatment"]
    assert sum(v.users for v in check.variants) == 400
    assert read_log(log).count().execute() == log.num_rows
    assert set(log["query_freq"].to_pylist()) == {"head", "torso", "tail"}
    assert set(log["device"].to_pylist()) == {"desktop", "mobile"}


def test_same_seed_same_log_other_seed_other_log() -> None:
    assert tiny().equals(tiny())
    assert not tiny().equals(tiny(seed=4))


def test_chunks_keep_users_apart_and_the_log_deterministic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(simulate_module, "_CHUNK_USERS", 70)
    log = tiny()
    assert len(pc.unique(log["user_id"])) == 400
    assert check_log(log).ok
    assert log.equals(tiny())


def test_position_bias_ctr_falls_with_rank() -> None:
    data = rows(tiny(users=1500, runs={"control": GOOD_RUN, "treatment": GOOD_RUN}))
    ctr = [data["clicked"][data["position"] == rank].mean() for rank in (1, 2, 5, 10)]
    assert ctr[0] > ctr[1] > ctr[2] > ctr[3]
    # Examination 1/rank (eta=1) times attractiveness: rank 1 (grade 3) 0.8, rank 2 (grade 2)
    # 0.6/2: the ratio is the planted one, up to the users' propensities' noise.
    assert ctr[0] / ctr[1] == pytest.approx(0.8 / 0.3, rel=0.15)


def test_better_ranker_gets_more_clicks_on_relevant_documents() -> None:
    log = tiny(users=1000)
    data = rows(log)
    relevant_click = data["clicked"] & (graded(log, QRELS) >= 1)
    per_request = {}
    for variant in ("control", "treatment"):
        mine = data["variant"] == variant
        per_request[variant] = relevant_click[mine].sum() / len(np.unique(data["request_id"][mine]))
    assert per_request["treatment"] > 2 * per_request["control"]


def test_split_plants_a_sample_ratio_mismatch() -> None:
    log = tiny(users=4000, split={"control": 0.6, "treatment": 0.4})
    users = {
        v: len(pc.unique(log.filter(pc.equal(log["variant"], v))["user_id"]))
        for v in ("control", "treatment")
    }
    share = users["control"] / 4000
    assert abs(share - 0.6) < 3 * np.sqrt(0.6 * 0.4 / 4000)


def test_segment_effect_hurts_new_users_only() -> None:
    same = {"control": GOOD_RUN, "treatment": GOOD_RUN}
    data = rows(tiny(users=4000, runs=same, segment_effects={"new": 0.5}))

    def ctr(variant: str, new: bool) -> float:
        mask = (data["variant"] == variant) & (data["is_new_user"] == new)
        return float(data["clicked"][mask].mean())

    assert ctr("treatment", True) / ctr("control", True) == pytest.approx(0.5, abs=0.12)
    assert ctr("treatment", False) / ctr("control", False) == pytest.approx(1.0, abs=0.12)


def test_reformulation_is_likelier_after_an_abandoned_request() -> None:
    log = tiny(users=2000, reformulation=(0.1, 0.6))
    requests = (
        log.group_by(["session_id", "request_id", "event_ts"])
        .aggregate([("clicked", "max")])
        .sort_by([("session_id", "ascending"), ("event_ts", "ascending")])
    )
    session = requests["session_id"].to_numpy(zero_copy_only=False)
    ts = requests["event_ts"].cast(pa.int64()).to_numpy()
    clicked = requests["clicked_max"].to_numpy(zero_copy_only=False)
    same_session = session[1:] == session[:-1]
    gap_s = (ts[1:] - ts[:-1]) / 1e6
    # A reformulation: the session's next request within the 60 s window. The planted rates
    # are 0.6 after an abandoned request and 0.1 after one with a click (a new, unrelated
    # query comes minutes later).
    quick = same_session & (gap_s <= 60)
    abandoned = ~clicked[:-1]
    assert quick[abandoned].mean() == pytest.approx(0.6, abs=0.04)
    assert quick[~abandoned].mean() == pytest.approx(0.1, abs=0.03)


def test_latency_per_variant() -> None:
    data = rows(tiny(users=1500, latency_ms={"control": (80.0, 0.3), "treatment": (120.0, 0.3)}))
    first_rows = data["position"] <= 1
    medians = {
        v: np.median(data["latency_ms"][first_rows & (data["variant"] == v)])
        for v in ("control", "treatment")
    }
    assert medians["control"] == pytest.approx(80.0, rel=0.1)
    assert medians["treatment"] == pytest.approx(120.0, rel=0.1)


def test_head_queries_are_asked_more_than_tail_queries() -> None:
    data = rows(tiny(users=1500))
    per_query = {}
    for bucket in ("head", "tail"):
        mask = data["query_freq"] == bucket
        per_query[bucket] = len(np.unique(data["request_id"][mask])) / len(
            np.unique(data["query_id"][mask])
        )
    assert per_query["head"] > 5 * per_query["tail"]


def test_cascade_clicks_at_most_once_per_request() -> None:
    log = tiny(click_model="cascade")
    clicks = log.group_by("request_id").aggregate([("clicked", "sum")])
    assert pc.max(clicks["clicked_sum"]).as_py() == 1
    assert check_log(log).ok


def test_pre_period_same_returning_users_before_the_start_control_ranking() -> None:
    runs = {"control": BAD_RUN, "treatment": GOOD_RUN}
    log = tiny(runs=runs)
    pre = tiny(runs=runs, pre_period=True)
    assert check_log(pre).ok
    variant_of = dict(zip(log["user_id"].to_pylist(), log["variant"].to_pylist(), strict=True))
    pre_variant = dict(zip(pre["user_id"].to_pylist(), pre["variant"].to_pylist(), strict=True))
    assert pre_variant and all(variant_of[u] == v for u, v in pre_variant.items())
    assert not any(pre["is_new_user"].to_pylist())
    assert pc.max(pre["event_ts"]).as_py() < pc.min(log["event_ts"]).as_py()
    assert set(pre["experiment_id"].to_pylist()) == {"exp-1-pre"}
    # Everyone was shown the control's ranking: the worst documents first.
    first = pre.filter(pc.equal(pre["position"], 1))
    expected = {f"q{q}": f"d{q}-19" for q in range(30)}
    assert all(
        expected[q] == d
        for q, d in zip(first["query_id"].to_pylist(), first["doc_id"].to_pylist(), strict=True)
    )


def test_queries_without_results_are_no_result_requests() -> None:
    runs = {"control": {"q0": GOOD_RUN["q0"]}, "treatment": GOOD_RUN}
    log = tiny(runs=runs)
    empty = log.filter(pc.equal(log["result_count"], 0))
    assert empty.num_rows > 0
    assert set(empty["variant"].to_pylist()) == {"control"}
    assert empty["doc_id"].null_count == empty.num_rows
    assert check_log(log).ok


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"users": 0}, r"users=0 must be an integer from 1 to 100,000,000"),
        ({"click_model": "dbn"}, r"click_model='dbn' must be one of 'pbm', 'cascade'"),
        ({"split": {"control": 1}}, r"split=\{'control': 1\} must give a weight to each variant"),
        ({"segment_effects": {"old": 0.5}}, r"segment_effects names 'old': the segments are new"),
        ({"attractiveness": (0.1, 1.5)}, r"attractiveness\[1\]=1.5 must be a number from 0"),
        ({"reformulation": (0.1,)}, r"reformulation=\(0.1,\) must be two probabilities"),
        ({"start": "May 1"}, r"start='May 1' must be an ISO 8601 time"),
        ({"runs": {}}, r"runs=dict must map each variant's name to its run"),
        (
            {"latency_ms": {"beta": (1.0, 0.1)}},
            r"latency_ms=\{'beta': \(1.0, 0.1\)\} must map variants \(control, treatment\)",
        ),
    ],
)
def test_bad_parameters(options: dict[str, Any], message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        tiny(**options)


def test_on_cranfield_the_offline_winner_wins_relevant_clicks(
    cranfield: Path, tmp_path: Path
) -> None:
    from tests.cli.test_cli_pool import cranfield_runs

    qrels = read_qrels(cranfield / "qrels.trec")
    paths = cranfield_runs(cranfield, tmp_path)
    overlap, dice = (read_run(p) for p in paths)
    offline = evaluate(qrels, {"overlap": overlap, "dice": dice}, ["nDCG@10"])
    ndcg = {name: offline[name].metrics["nDCG@10"] for name in offline}
    better, worse = sorted(ndcg, key=ndcg.__getitem__, reverse=True)
    runs: dict[str, Run] = {"control": {"overlap": overlap, "dice": dice}[worse]}
    runs["treatment"] = {"overlap": overlap, "dice": dice}[better]
    # Queries equally popular: offline means weight queries equally, so must the log here
    # (with Zipf popularity a few head queries decide the online difference).
    log = simulate_log(qrels, runs, users=3000, seed=11, zipf=0.0)
    assert check_log(log).ok
    data = rows(log)
    ctr = [data["clicked"][data["position"] == rank].mean() for rank in (1, 5)]
    assert ctr[0] > ctr[1]
    relevant = data["clicked"] & (graded(log, qrels) >= 1)
    rate = {
        v: relevant[data["variant"] == v].sum()
        / len(np.unique(data["request_id"][data["variant"] == v]))
        for v in ("control", "treatment")
    }
    assert rate["treatment"] > rate["control"]


# -- interleaving: every request shows both runs at once ------------------------------------


def _is_team_draft(docs: list[str], teams: list[str], a: list[str], b: list[str]) -> bool:
    """Each pick is its team's highest-ranked document not shown yet, and the teams never
    differ in size by more than one (equal after every round)."""
    rankings = {"A": a, "B": b}
    for i, (doc, team) in enumerate(zip(docs, teams, strict=True)):
        if doc != next(d for d in rankings[team] if d not in docs[:i]):
            return False
        picked = teams[: i + 1]
        if abs(picked.count("A") - picked.count("B")) > 1:
            return False
        if i % 2 == 1 and picked.count("A") != picked.count("B"):
            return False
    return True


def _is_balanced(docs: list[str], a: list[str], b: list[str]) -> bool:
    """Every shown top n is A's top k_a together with B's top k_b, k_a and k_b one apart."""
    for n in range(1, len(docs) + 1):
        top = set(docs[:n])
        if not any(
            top == set(a[:ka]) | set(b[:kb])
            for ka in range(len(a) + 1)
            for kb in (ka - 1, ka, ka + 1)
            if 0 <= kb <= len(b)
        ):
            return False
    return True


@pytest.mark.parametrize("method", ["team-draft", "balanced"])
def test_an_interleaved_log_shows_both_runs_and_names_the_teams(method: str) -> None:
    # Top 15 of each run: d5-d14 are in both, so the lists overlap.
    log = tiny(runs={"A": BAD_RUN, "B": GOOD_RUN}, interleave=method, cutoff=15)
    assert check_log(log).ok
    assert log.column_names.index("interleave_team") == log.column_names.index("variant") + 1
    assert set(log["variant"].to_pylist()) == {"interleaved"}
    assert set(log["interleave_team"].to_pylist()) == {"A", "B"}
    requests: dict[str, list[dict[str, Any]]] = {}
    for row in log.to_pylist():
        requests.setdefault(row["request_id"], []).append(row)
    assert len(requests) > 500
    starts = set()
    for shown in list(requests.values())[:300]:
        query = shown[0]["query_id"]
        a = sorted(BAD_RUN[query], key=BAD_RUN[query].__getitem__, reverse=True)[:15]
        b = sorted(GOOD_RUN[query], key=GOOD_RUN[query].__getitem__, reverse=True)[:15]
        docs = [r["doc_id"] for r in shown]
        teams = [r["interleave_team"] for r in shown]
        assert [r["position"] for r in shown] == list(range(1, len(shown) + 1))
        assert len(docs) == len(set(docs)) == 15
        assert set(docs) <= set(a) | set(b)
        if method == "team-draft":
            assert _is_team_draft(docs, teams, a, b), (docs, teams)
        else:
            assert _is_balanced(docs, a, b), docs
        starts.add(teams[0])
    assert starts == {"A", "B"}  # each request has its own coins


@pytest.mark.parametrize("method", ["team-draft", "balanced"])
def test_interleaving_prefers_the_better_run(method: str) -> None:
    from rankmeter.online import interleaving_test

    for runs, better in (
        ({"A": BAD_RUN, "B": GOOD_RUN}, "B"),
        ({"A": GOOD_RUN, "B": BAD_RUN}, "A"),
    ):
        log = tiny(runs=runs, interleave=method, users=300)
        extra = {} if method == "team-draft" else {"run_a": Run.from_dict(runs["A"]), "run_b": Run.from_dict(runs["B"])}  # fmt: skip
        result = interleaving_test(log, method=method, **extra)
        assert result.preferred == better, result
        assert result.p_value < 1e-6


def test_interleaving_on_cranfield_prefers_the_offline_winner(
    cranfield: Path, tmp_path: Path
) -> None:
    from rankmeter.online import interleaving_test
    from tests.cli.test_cli_pool import cranfield_runs

    qrels = read_qrels(cranfield / "qrels.trec")
    overlap, dice = (read_run(p) for p in cranfield_runs(cranfield, tmp_path))
    offline = evaluate(qrels, {"overlap": overlap, "dice": dice}, ["nDCG@10"])
    ndcg = {name: offline[name].metrics["nDCG@10"] for name in offline}
    worse, better = sorted(ndcg, key=ndcg.__getitem__)
    runs = {"A": {"overlap": overlap, "dice": dice}[worse]}
    runs["B"] = {"overlap": overlap, "dice": dice}[better]
    log = simulate_log(qrels, runs, users=3000, seed=11, zipf=0.0, interleave="team-draft")
    assert check_log(log).ok
    result = interleaving_test(log)
    assert result.preferred == "B", result


def test_a_plain_log_is_unchanged_by_the_interleaving_code() -> None:
    # No interleave_team column and the same rows as before the option existed (the draws of
    # an A/B log are not moved by the interleaving path).
    log = tiny()
    assert "interleave_team" not in log.column_names
    assert log.equals(tiny())


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"interleave": "zigzag"}, r"interleave='zigzag' must be one of 'team-draft', 'balanced'"),
        (
            {"interleave": "team-draft", "runs": {"A": GOOD_RUN}},
            r"interleave='team-draft' interleaves two runs \(A, then B\): runs has 1",
        ),
        (
            {"interleave": "team-draft", "split": {"control": 1, "treatment": 1}},
            r"split is for an A/B log: with interleave='team-draft' every user",
        ),
        (
            {"interleave": "balanced", "segment_effects": {"new": 0.5}},
            r"segment_effects is for an A/B log: with interleave='balanced' every user",
        ),
        (
            {"interleave": "balanced", "pre_period": True},
            r"pre_period is for an A/B log: with interleave='balanced' every user",
        ),
    ],
)
def test_bad_interleaving_parameters(options: dict[str, Any], message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        tiny(**options)
