"""Interleaving (issue 12, item 4): the builders, the credit rules and the preference test."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy import stats

from rankmeter.data import Run
from rankmeter.errors import FormatError, PolicyError
from rankmeter.online import (
    Interleaving,
    InterleavingResult,
    interleave,
    interleave_runs,
    interleaving_credit,
    interleaving_test,
)

A = ["a", "b", "c", "d"]
B = ["b", "a", "e", "f"]


# -- team-draft -------------------------------------------------------------------------------


def _team_draft_outcomes() -> set[tuple[tuple[str, str], ...]]:
    """Every list team-draft can show for A and B, enumerated by hand: each round both teams
    pick their highest document not shown yet, in an order a coin decides, while both rankings
    still have a document that is not shown (Radlinski et al. 2008, Algorithm 2: the test
    comes before every pick). Round 1: A picks a, B picks b (b is A's second, a is B's second:
    neither is taken twice); round 2: c and e; round 3: the first picker's last document (d or
    f) empties its ranking, so the other does not pick."""
    rounds = [(("a", "A"), ("b", "B")), (("c", "A"), ("e", "B"))]
    outcomes = set()
    for flips in itertools.product((True, False), repeat=3):
        shown: list[tuple[str, str]] = []
        for a_first, (pick_a, pick_b) in zip(flips[:2], rounds, strict=True):
            shown += [pick_a, pick_b] if a_first else [pick_b, pick_a]
        shown.append(("d", "A") if flips[2] else ("f", "B"))
        outcomes.add(tuple(shown))
    return outcomes


def test_team_draft_shows_exactly_the_hand_enumerated_lists() -> None:
    seen = set()
    for seed in range(300):
        shown = interleave(A, B, method="team-draft", seed=seed)
        seen.add(tuple(zip(shown.doc_ids, shown.teams, strict=True)))
    assert seen == _team_draft_outcomes()  # all 8 coin sequences occur, nothing else


def test_team_draft_credit_counts_clicks_per_team() -> None:
    shown = interleave(A, B, method="team-draft", seed=1)
    team_of = dict(zip(shown.doc_ids, shown.teams, strict=True))
    # Clicks on a, c (team A) and e (team B): 2 against 1, whatever the coins did.
    clicked = [shown.doc_ids.index(d) + 1 for d in ("a", "c", "e")]
    assert [team_of[d] for d in ("a", "c", "e")] == ["A", "A", "B"]
    assert shown.credit(clicked) == (2, 1)
    assert shown.credit([]) == (0, 0)


def test_team_draft_stops_when_a_ranking_runs_out() -> None:
    # Radlinski et al. (2008), Algorithm 2: pick while both rankings have a document that is
    # not shown yet. A first: x, and A is empty. B first: y, then x.
    lists = {
        interleave(["x"], ["y", "z", "w"], method="team-draft", seed=s).doc_ids for s in range(20)
    }
    assert lists == {("x",), ("y", "x")}


# -- balanced ---------------------------------------------------------------------------------

# The example of balanced interleaving's bias (Hofmann, Whiteson & de Rijke 2011, after Chapelle
# et al. 2012): B is A rotated by one. Either coin gives a list whose top two are d1 and d2.
BIAS_A = ["d1", "d2", "d3", "d4"]
BIAS_B = ["d2", "d3", "d4", "d1"]


def test_balanced_builds_both_lists_of_joachims_algorithm() -> None:
    lists = {interleave(BIAS_A, BIAS_B, method="balanced", seed=s).doc_ids for s in range(50)}
    # A starts: d1 (A), d2 (B), A's d2 is shown, d3 (B), A's d3 is shown, d4 (B), then B's d1
    # is shown and B runs out. B starts: d2 (B), d1 (A), d3 (B), A's d2 is shown, d4 (B).
    assert lists == {("d1", "d2", "d3", "d4"), ("d2", "d1", "d3", "d4")}
    teams = {
        shown.doc_ids: shown.teams
        for shown in (interleave(BIAS_A, BIAS_B, method="balanced", seed=s) for s in range(50))
    }
    assert teams == {
        ("d1", "d2", "d3", "d4"): ("A", "B", "B", "B"),
        ("d2", "d1", "d3", "d4"): ("B", "A", "B", "B"),
    }


@pytest.mark.parametrize(
    ("clicked_doc", "credit"),
    [
        # k = min(rank in A, rank in B) of the lowest click; clicks counted in each top k.
        ("d1", (1, 0)),  # k = 1: A's top 1 is d1, B's is d2
        ("d2", (0, 1)),  # rank 2 in A, 1 in B: k = 1
        ("d3", (0, 1)),  # rank 3 in A, 2 in B: k = 2, A's top 2 = d1 d2, B's = d2 d3
        ("d4", (0, 1)),  # rank 4 in A, 3 in B: k = 3
    ],
)
def test_balanced_credit_follows_the_lowest_click(
    clicked_doc: str, credit: tuple[int, int]
) -> None:
    for seed in range(6):
        shown = interleave(BIAS_A, BIAS_B, method="balanced", seed=seed)
        assert shown.credit([shown.doc_ids.index(clicked_doc) + 1]) == credit
    # Hence the bias: one random click prefers B three times out of four.


def test_balanced_credit_with_several_clicks() -> None:
    shown = interleave(["a", "b", "c", "d"], ["c", "d", "a", "e"], method="balanced", seed=0)
    clicked = [shown.doc_ids.index(d) + 1 for d in ("a", "d")]
    # Lowest click d: rank 4 in A, 2 in B, so k = 2: A's a b hold one click (a), B's c d one (d).
    assert shown.credit(clicked) == (1, 1)
    clicked = [shown.doc_ids.index(d) + 1 for d in ("a", "b")]
    # Lowest click b (rank 2 in A, absent from B): k = 2: A has two, B's c d none.
    assert shown.credit(clicked) == (2, 0)


# -- invariants of both builders --------------------------------------------------------------


@pytest.mark.parametrize("method", ["team-draft", "balanced"])
def test_builder_invariants(method: str) -> None:
    rng = np.random.default_rng(7)
    docs = [f"d{i}" for i in range(30)]
    for trial in range(60):
        ranking_a = list(rng.choice(docs, size=rng.integers(1, 15), replace=False))
        ranking_b = list(rng.choice(docs, size=rng.integers(1, 15), replace=False))
        length = int(rng.integers(1, 12))
        shown = interleave(ranking_a, ranking_b, method=method, length=length, seed=trial)
        again = interleave(ranking_a, ranking_b, method=method, length=length, seed=trial)
        assert shown == again  # deterministic per seed
        assert len(shown.doc_ids) == len(shown.teams) <= length
        assert len(set(shown.doc_ids)) == len(shown.doc_ids)  # no duplicates
        for doc, team in zip(shown.doc_ids, shown.teams, strict=True):
            assert doc in (ranking_a if team == "A" else ranking_b)
        if len(ranking_a) >= length and len(ranking_b) >= length:
            assert len(shown.doc_ids) == length
        if method == "team-draft":
            # Each team's picks come in its own ranking's order, and the teams differ in size
            # by one at most.
            for team, ranking in (("A", ranking_a), ("B", ranking_b)):
                picks = [d for d, t in zip(shown.doc_ids, shown.teams, strict=True) if t == team]
                assert picks == sorted(picks, key=ranking.index)
            assert abs(shown.teams.count("A") - shown.teams.count("B")) <= 1
        else:
            # Balanced: the shown top n is the union of A's top k_a and B's top k_b, with k_a
            # and k_b one apart at most.
            for n in range(1, len(shown.doc_ids) + 1):
                top = set(shown.doc_ids[:n])
                assert any(
                    top == set(ranking_a[:ka]) | set(ranking_b[:kb])
                    for ka in range(len(ranking_a) + 1)
                    for kb in range(len(ranking_b) + 1)
                    if abs(ka - kb) <= 1
                )


def test_interleave_checks_its_parameters() -> None:
    with pytest.raises(
        PolicyError, match=r"method='draft' must be one of 'team-draft', 'balanced'"
    ):
        interleave(A, B, method="draft", seed=0)
    with pytest.raises(PolicyError, match=r"length=0 must be an integer >= 1"):
        interleave(A, B, length=0, seed=0)
    with pytest.raises(PolicyError, match=r"ranking_a has 'a' twice"):
        interleave(["a", "b", "a"], B, seed=0)
    shown = interleave(A, B, seed=0)
    with pytest.raises(PolicyError, match=r"clicked position 9 is not on the shown list \(1-5\)"):
        shown.credit([9])


# -- over whole runs --------------------------------------------------------------------------


def _runs() -> tuple[Run, Run]:
    run_a = Run.from_dict(
        {
            "q1": {d: 1.0 - i / 10 for i, d in enumerate(A)},
            "q2": {"x": 3.0, "y": 2.0, "z": 1.0},
            "q3": {"only-a": 1.0},
        },
        name="a",
    )
    run_b = Run.from_dict(
        {"q1": {d: 1.0 - i / 10 for i, d in enumerate(B)}, "q2": {"z": 2.0, "w": 1.0}},
        name="b",
    )
    return run_a, run_b


@pytest.mark.parametrize("method", ["team-draft", "balanced"])
def test_interleave_runs_matches_the_single_builder(method: str) -> None:
    run_a, run_b = _runs()
    table = interleave_runs(run_a, run_b, method=method, length=4, impressions=40, seed=5)
    assert table.column_names == [
        "request_id",
        "query_id",
        "impression",
        "position",
        "doc_id",
        "interleave_team",
    ]
    assert set(table["query_id"].to_pylist()) == {"q1", "q2"}  # queries both runs answer
    lists: dict[str, set[tuple[Any, ...]]] = {}
    for request in table.to_pylist():
        lists.setdefault(request["request_id"], set()).add(
            (
                request["query_id"],
                request["position"],
                request["doc_id"],
                request["interleave_team"],
            )
        )
    assert len(lists) == 80
    possible = {
        q: {
            tuple(zip(s.doc_ids, s.teams, strict=True))
            for s in (
                interleave(run_a.ranking(q), run_b.ranking(q), method=method, length=4, seed=seed)
                for seed in range(200)
            )
        }
        for q in ("q1", "q2")
    }
    seen: dict[str, set[tuple[tuple[str, str], ...]]] = {"q1": set(), "q2": set()}
    for rows in lists.values():
        ordered = sorted(rows, key=lambda r: r[1])
        assert [r[1] for r in ordered] == list(range(1, len(ordered) + 1))
        query = ordered[0][0]
        shown = tuple((r[2], r[3]) for r in ordered)
        assert shown in possible[query]
        seen[query].add(shown)
    assert seen == possible  # 40 impressions show every possible list of these small queries
    again = interleave_runs(run_a, run_b, method=method, length=4, impressions=40, seed=5)
    assert again.equals(table)


# -- credit from a log and the preference test ------------------------------------------------


def _log(requests: list[tuple[str, str, list[tuple[str, bool]]]]) -> pa.Table:
    """A log from (request_id, user_id, [(team, clicked) by position])."""
    rows = [
        {
            "request_id": request,
            "user_id": user,
            "doc_id": f"{request}-{position}",
            "position": position,
            "clicked": clicked,
            "interleave_team": team,
        }
        for request, user, shown in requests
        for position, (team, clicked) in enumerate(shown, start=1)
    ]
    return pa.Table.from_pylist(rows)


def test_team_draft_credit_per_request() -> None:
    log = _log(
        [
            ("r1", "u1", [("A", True), ("B", True), ("B", True)]),  # B 2-1
            ("r2", "u1", [("B", False), ("A", True)]),  # A 1-0
            ("r3", "u2", [("A", True), ("B", True)]),  # tie 1-1
            ("r4", "u3", [("A", False), ("B", False)]),  # no click
        ]
    )
    credit = interleaving_credit(log)
    assert credit.to_pydict() == {
        "request_id": ["r1", "r2", "r3", "r4"],
        "user_id": ["u1", "u1", "u2", "u3"],
        "clicks_a": [1, 1, 1, 0],
        "clicks_b": [2, 0, 1, 0],
        "winner": ["B", "A", "tie", None],
    }


def _counts_log(wins_a: int, wins_b: int, ties: int, no_click: int = 0) -> pa.Table:
    outcomes = {
        "A": [("A", True), ("B", False)],
        "B": [("A", False), ("B", True)],
        "tie": [("A", True), ("B", True)],
        "none": [("A", False), ("B", False)],
    }
    kinds = ["A"] * wins_a + ["B"] * wins_b + ["tie"] * ties + ["none"] * no_click
    return _log([(f"r{i}", f"u{i}", outcomes[k]) for i, k in enumerate(kinds)])


@pytest.mark.parametrize("interval", ["wilson", "exact"])
def test_the_statistics_are_scipys_and_statsmodels(interval: str) -> None:
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    result = interleaving_test(
        _counts_log(12, 25, 7, no_click=5), unit="request", interval=interval
    )
    assert isinstance(result, InterleavingResult)
    assert (result.wins_a, result.wins_b, result.ties, result.no_click) == (12, 25, 7, 5)
    assert result.n == 44 and result.n_requests == 49
    assert result.p_value == pytest.approx(stats.binomtest(25, 37, 0.5).pvalue, rel=1e-12)
    low, high = proportion.proportion_confint(
        25, 37, alpha=0.05, method="wilson" if interval == "wilson" else "beta"
    )
    assert result.share_b == pytest.approx(25 / 37)
    assert (result.share_low, result.share_high) == pytest.approx((low, high), rel=1e-9)
    # Chapelle et al.'s Delta, signed for B: (wins_B + ties / 2) / n - 1/2.
    assert result.delta == pytest.approx((25 + 3.5) / 44 - 0.5)
    assert (result.delta_low, result.delta_high) == pytest.approx(
        (37 / 44 * (low - 0.5), 37 / 44 * (high - 0.5))
    )
    assert result.preferred == "B"  # p = 0.047
    document = result.to_dict()
    assert document["wins"] == {"A": 12, "B": 25, "ties": 7}
    assert document["interval"]["method"] == interval


def test_per_user_aggregation_is_the_default() -> None:
    # u1 wins four requests for B; u2 and u3 each one for A. Per request B leads 4-2; per user
    # A leads 2-1: the heavy user counts once.
    log = _log(
        [(f"r{i}", "u1", [("A", False), ("B", True)]) for i in range(4)]
        + [("r8", "u2", [("A", True), ("B", False)]), ("r9", "u3", [("A", True)])]
    )
    by_user = interleaving_test(log)
    assert by_user.unit == "user"
    assert (by_user.wins_a, by_user.wins_b, by_user.ties, by_user.n) == (2, 1, 0, 3)
    by_request = interleaving_test(log, unit="request")
    assert (by_request.wins_a, by_request.wins_b, by_request.n) == (2, 4, 6)
    assert by_user.n_users == 3 and by_user.n_requests == 6


def test_a_user_with_as_many_wins_each_way_is_a_tie() -> None:
    log = _log(
        [("r1", "u1", [("A", True)]), ("r2", "u1", [("B", True)]), ("r3", "u2", [("B", True)])]
    )
    result = interleaving_test(log)
    assert (result.wins_a, result.wins_b, result.ties) == (0, 1, 1)


def test_no_clicks_gives_undefined_statistics() -> None:
    result = interleaving_test(_counts_log(0, 0, 0, no_click=3))
    assert result.n == 0 and np.isnan(result.p_value) and np.isnan(result.share_b)
    assert result.preferred is None


def test_interleaving_test_checks_its_parameters() -> None:
    log = _counts_log(1, 1, 0)
    with pytest.raises(PolicyError, match=r"unit='query' must be one of 'user', 'request'"):
        interleaving_test(log, unit="query")
    with pytest.raises(PolicyError, match=r"interval='wald' must be one of 'wilson', 'exact'"):
        interleaving_test(log, interval="wald")
    with pytest.raises(PolicyError, match=r"alpha=1 must be a number strictly between 0 and 1"):
        interleaving_test(log, alpha=1)


# -- bad logs ---------------------------------------------------------------------------------


def _rows(log: pa.Table) -> list[dict[str, Any]]:
    return log.to_pylist()


def test_a_missing_column_is_named() -> None:
    log = _counts_log(1, 1, 0).drop_columns(["interleave_team"])
    with pytest.raises(FormatError, match=r"^<table>: no interleave_team column"):
        interleaving_test(log)
    no_user = _counts_log(1, 1, 0).drop_columns(["user_id"])
    with pytest.raises(FormatError, match=r"no user_id column.*--unit request"):
        interleaving_test(no_user)
    assert interleaving_test(no_user, unit="request").n == 2


def test_a_clicked_row_without_a_team_is_named() -> None:
    rows = _rows(_counts_log(2, 1, 0))
    rows[2]["interleave_team"] = None  # r1's first row: a click for A
    with pytest.raises(FormatError, match=r"^<table>:3: a clicked result has no interleave_team"):
        interleaving_test(pa.Table.from_pylist(rows))
    rows[2]["interleave_team"] = "C"
    with pytest.raises(
        FormatError, match=r"^<table>:3: interleave_team must be 'A' or 'B' on a clicked row: 'C'"
    ):
        interleaving_test(pa.Table.from_pylist(rows))
    rows[2]["interleave_team"] = "A"
    rows[3]["interleave_team"] = None  # not clicked: no credit to give, no error
    assert interleaving_test(pa.Table.from_pylist(rows)).wins_a == 2


def test_a_duplicated_position_is_named() -> None:
    rows = _rows(_counts_log(1, 1, 1))
    rows[5]["position"] = 1  # r2's second row
    with pytest.raises(FormatError, match=r"^<table>:6: position 1 appears twice in request 'r2'"):
        interleaving_test(pa.Table.from_pylist(rows))


def test_a_request_with_two_users_is_named() -> None:
    rows = _rows(_counts_log(1, 1, 0))
    rows[3]["user_id"] = "someone else"
    with pytest.raises(FormatError, match=r"^<table>:4: request 'r1' has two user_ids"):
        interleaving_test(pa.Table.from_pylist(rows))


def test_an_ibis_or_pandas_log_gives_the_same_answer() -> None:
    log = _counts_log(3, 5, 2, no_click=1)
    expected = interleaving_test(log)
    ibis = pytest.importorskip("ibis")
    assert interleaving_test(ibis.memtable(log)) == expected
    pytest.importorskip("pandas")
    assert interleaving_test(log.to_pandas()) == expected
    with pytest.raises(PolicyError, match=r"log must be a path, a pyarrow Table, .* not dict"):
        interleaving_test({"request_id": []})


# -- balanced credit from a log ---------------------------------------------------------------


def test_balanced_credit_from_a_log_is_joachims_rule_per_request() -> None:
    run_a, run_b = _runs()
    shown = interleave_runs(run_a, run_b, method="balanced", length=4, impressions=30, seed=2)
    rng = np.random.default_rng(3)
    clicked = rng.random(shown.num_rows) < 0.4
    log = shown.append_column("clicked", pa.array(clicked))
    credit = interleaving_credit(log, method="balanced", run_a=run_a, run_b=run_b)
    expected: dict[str, tuple[int, int]] = {}
    for request_id in dict.fromkeys(shown["request_id"].to_pylist()):
        rows = [r for r in log.to_pylist() if r["request_id"] == request_id]
        query = rows[0]["query_id"]
        one = Interleaving(
            doc_ids=tuple(r["doc_id"] for r in rows),
            teams=tuple(r["interleave_team"] for r in rows),
            method="balanced",
            ranking_a=tuple(run_a.ranking(query)),
            ranking_b=tuple(run_b.ranking(query)),
        )
        expected[request_id] = one.credit([r["position"] for r in rows if r["clicked"]])
    got = {r["request_id"]: (r["clicks_a"], r["clicks_b"]) for r in credit.to_pylist()}
    assert got == expected
    assert len({v for v in got.values()}) > 3  # the clicks gave varied credit
    result = interleaving_test(log, unit="request", method="balanced", run_a=run_a, run_b=run_b)
    assert result.method == "balanced"
    assert result.wins_b == sum(b > a for a, b in expected.values())


def test_balanced_credit_needs_both_runs_and_known_documents() -> None:
    run_a, run_b = _runs()
    shown = interleave_runs(run_a, run_b, method="balanced", length=4, seed=2)
    log = shown.append_column("clicked", pa.array([True] * shown.num_rows))
    with pytest.raises(PolicyError, match=r"method='balanced' credits clicks by the ranks"):
        interleaving_test(log, method="balanced", run_a=run_a)
    with pytest.raises(PolicyError, match=r"run_a and run_b are for method='balanced'"):
        interleaving_test(log, run_a=run_a, run_b=run_b)
    rows = log.to_pylist()
    rows[1]["doc_id"] = "stranger"
    with pytest.raises(
        FormatError, match=r"^<table>:2: clicked doc 'stranger' of query 'q1' is in neither run"
    ):
        interleaving_credit(pa.Table.from_pylist(rows), method="balanced", run_a=run_a, run_b=run_b)


# -- the columns the credit reads (only those) ----------------------------------------------


def test_the_docs_list_the_columns_the_credit_reads() -> None:
    """docs/interleaving.md's table of columns is the code's CREDIT_COLUMNS."""
    from rankmeter.online.interleaving import CREDIT_COLUMNS

    text = (Path(__file__).resolve().parents[2] / "docs" / "interleaving.md").read_text()
    documented = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] in ("team-draft", "balanced"):
            documented[cells[0]] = tuple(re.findall(r"`(\w+)`", cells[1]))
    assert documented == CREDIT_COLUMNS


def test_a_log_with_only_the_credit_columns(tmp_path: Path) -> None:
    log = _counts_log(3, 5, 2, no_click=1)
    expected = interleaving_test(log)
    minimal = log.select(["request_id", "user_id", "clicked", "interleave_team"])
    assert interleaving_test(minimal) == expected
    path = tmp_path / "minimal.parquet"
    pq.write_table(minimal, path)
    assert interleaving_test(path) == expected
    pq.write_table(minimal.drop_columns(["interleave_team"]), path)
    with pytest.raises(FormatError, match=rf"^{re.escape(str(path))}: no interleave_team column"):
        interleaving_test(path)
